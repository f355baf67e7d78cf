package dev.weft.dispatch.engine;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * Moves deliveries to Kafka topics: the retry and wait topics (parked work) and the dead-letter topic.
 * Produced with acks=all and idempotence; a delivery counts as done only when Kafka acknowledged its
 * copy. A produce that fails is tried again every {@link #RETRY_PAUSE} until it succeeds, so nothing is
 * done before it is durable (meanwhile its partition's commit waits).
 */
public final class Parking implements AutoCloseable {
    public static final String ENDPOINT = "weft-endpoint";
    public static final String ATTEMPTS = "weft-attempts";
    public static final String DUE = "weft-due";
    public static final String REASON = "weft-reason";
    public static final String STATUS = "weft-status";
    public static final String ORIGIN = "weft-origin";
    public static final String WEBHOOK_ID = "webhook-id";
    static final List<String> OURS = List.of(ENDPOINT, ATTEMPTS, DUE, REASON, STATUS, ORIGIN, WEBHOOK_ID);
    static final Duration RETRY_PAUSE = Duration.ofSeconds(5);

    private final KafkaProducer<byte[], byte[]> producer;
    private final String deadLetterTopic;
    private final Consumer<String> log;
    private final ScheduledExecutorService again = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "weft-parking-retry");
        t.setDaemon(true);
        return t;
    });
    private final AtomicLong failures = new AtomicLong();
    private volatile long lastFailureLog;

    Parking(String bootstrap, String clientId, String deadLetterTopic, Consumer<String> log) {
        this.producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ProducerConfig.CLIENT_ID_CONFIG, clientId,
                ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true,
                ProducerConfig.LINGER_MS_CONFIG, 5,
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class,
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class));
        this.deadLetterTopic = deadLetterTopic;
        this.log = log;
    }

    /**
     * Parks {@code d} on {@code topic} until {@code dueMillis} (0: now); {@code reason} is {@code room} (the
     * lane was full) or {@code failed} (an attempt failed with {@code status}). {@code onDurable} runs once
     * Kafka has it, before the delivery counts as done.
     */
    void park(Delivery d, String topic, String reason, String status, long dueMillis, Runnable onDurable) {
        List<Header> h = headers(d, reason, status);
        h.add(header(DUE, Long.toString(dueMillis)));
        send(new ProducerRecord<>(topic, null, d.key(), d.body(), h), d, onDurable);
    }

    /** Puts {@code d} on the dead-letter topic with its endpoint, last status, reason and attempts. */
    void deadLetter(Delivery d, String status, String reason, Runnable onDurable) {
        deadLetter(d, d.lane().id(), status, reason, onDurable);
    }

    /** Dead-letters a record that has no lane ({@code d.lane()} may be null): {@code endpoint} names what it was for. */
    void deadLetter(Delivery d, String endpoint, String status, String reason, Runnable onDurable) {
        send(new ProducerRecord<>(deadLetterTopic, null, d.key(), d.body(), headers(d, endpoint, reason, status)), d,
                onDurable);
    }

    private static List<Header> headers(Delivery d, String reason, String status) {
        return headers(d, d.lane().id(), reason, status);
    }

    private static List<Header> headers(Delivery d, String endpoint, String reason, String status) {
        List<Header> h = new ArrayList<>(d.headers().size() + 7);
        h.addAll(d.headers());
        h.add(header(ENDPOINT, endpoint == null ? "" : endpoint));
        h.add(header(ATTEMPTS, Integer.toString(d.attempts())));
        h.add(header(REASON, reason));
        h.add(header(STATUS, status == null ? "" : status));
        h.add(header(ORIGIN, d.origin() == null ? "" : d.origin()));
        h.add(header(WEBHOOK_ID, d.webhookId() == null ? "" : d.webhookId()));
        return h;
    }

    private static Header header(String k, String v) {
        return new RecordHeader(k, v.getBytes(StandardCharsets.UTF_8));
    }

    private void send(ProducerRecord<byte[], byte[]> rec, Delivery d, Runnable onDurable) {
        if (d.ticket().revoked()) {
            return; // the partition's new owner takes the record again
        }
        producer.send(rec, (md, ex) -> {
            if (ex == null) {
                onDurable.run();
                d.ticket().done();
            } else {
                failures.incrementAndGet();
                long now = System.currentTimeMillis();
                if (now - lastFailureLog > 10_000) {
                    lastFailureLog = now;
                    log.accept("ERROR: cannot write to Kafka topic " + rec.topic() + " (" + ex.getMessage()
                            + "); trying again every " + RETRY_PAUSE.toSeconds() + " s, commits wait meanwhile");
                }
                again.schedule(() -> send(rec, d, onDurable), RETRY_PAUSE.toMillis(), TimeUnit.MILLISECONDS);
            }
        });
    }

    /** Produces that failed and were tried again. */
    public long failures() {
        return failures.get();
    }

    @Override
    public void close() {
        again.shutdownNow();
        producer.close(Duration.ofSeconds(10));
    }
}
