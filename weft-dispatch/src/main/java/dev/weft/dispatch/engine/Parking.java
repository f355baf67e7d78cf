package dev.weft.dispatch.engine;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.time.Duration;
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
public final class Parking implements Parker, AutoCloseable {
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

    @Override
    public void park(Delivery d, String topic, ParkedRecord.Reason reason, String status, long dueMillis,
                     Runnable onDurable) {
        ParkedRecord p = new ParkedRecord(d.endpoint(), d.webhookId(), d.attempts(), dueMillis, reason, status,
                d.origin());
        send(new ProducerRecord<>(topic, null, d.key(), d.body(), p.headers(d.headers())), d, onDurable);
    }

    @Override
    public void deadLetter(Delivery d, String status, String reason, Runnable onDurable) {
        send(new ProducerRecord<>(deadLetterTopic, null, d.key(), d.body(), ParkedRecord.deadLetterHeaders(d.headers(),
                d.endpoint(), d.webhookId(), d.attempts(), reason, status, d.origin())), d, onDurable);
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
