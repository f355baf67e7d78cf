package dev.weft.dispatch.engine;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * Moves deliveries to Kafka topics: the retry and wait topics (parked work) and the dead-letter topic.
 * Produced with acks=all and idempotence; a delivery counts as done only when Kafka acknowledged its
 * copy. A produce that fails with a retriable error (Kafka's {@link RetriableException}: a broker away, a
 * leader moving, a timeout) is tried again every {@link #RETRY_PAUSE} until it succeeds, so nothing is done
 * before it is durable (meanwhile its partition's commit waits). Any other error is permanent (a record
 * larger than the topic's {@code max.message.bytes}, an authorization error, a closed producer...): a parked
 * copy is dead-lettered with the reason instead; a dead letter that fails so is reported {@link #stuck}.
 * A synchronous throw of the producer is handled as the same error arriving by callback: nothing here throws.
 */
public final class Parking implements Parker, AutoCloseable {
    static final Duration RETRY_PAUSE = Duration.ofSeconds(5);

    /** What Parking tells the dispatcher. */
    interface Listener {
        /** A delivery was dead-lettered in place of a park Kafka refused for good. */
        void deadLettered(String endpoint);

        /** See {@link Parker#stuck}. */
        void stuck(Delivery d, String why);
    }

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
    private volatile boolean stopping;
    private volatile Listener listener = new Listener() {
        @Override
        public void deadLettered(String endpoint) {
        }

        @Override
        public void stuck(Delivery d, String why) {
        }
    };

    /** @param maxRequestBytes the producer's {@code max.request.size}: the largest {@code max.message.bytes} of the topics it writes */
    Parking(String bootstrap, String clientId, String deadLetterTopic, int maxRequestBytes, Consumer<String> log) {
        this.producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ProducerConfig.CLIENT_ID_CONFIG, clientId,
                ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true,
                ProducerConfig.LINGER_MS_CONFIG, 5,
                ProducerConfig.MAX_REQUEST_SIZE_CONFIG, maxRequestBytes,
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class,
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class));
        this.deadLetterTopic = deadLetterTopic;
        this.log = log;
    }

    void listener(Listener l) {
        this.listener = l;
    }

    @Override
    public void park(Delivery d, String topic, ParkedRecord.Reason reason, String status, long dueMillis,
                     Runnable onDurable) {
        ProducerRecord<byte[], byte[]> rec;
        try {
            ParkedRecord p = new ParkedRecord(d.endpoint(), d.webhookId(), d.attempts(), dueMillis, reason, status,
                    d.origin());
            rec = new ProducerRecord<>(topic, null, d.key(), d.body(), p.headers(d.headers()));
        } catch (RuntimeException e) {
            deadLetter(d, status, "cannot park on " + topic + ": " + e, deadCounter(d));
            return;
        }
        send(rec, d, status, onDurable);
    }

    @Override
    public void deadLetter(Delivery d, String status, String reason, Runnable onDurable) {
        ProducerRecord<byte[], byte[]> rec;
        try {
            rec = new ProducerRecord<>(deadLetterTopic, null, d.key(), d.body(), ParkedRecord.deadLetterHeaders(
                    d.headers(), d.endpoint(), d.webhookId(), d.attempts(), reason, status, d.origin()));
        } catch (RuntimeException e) {
            stuck(d, "its dead letter cannot be made (" + e + ") after: " + reason);
            return;
        }
        send(rec, d, status, onDurable);
    }

    @Override
    public void stuck(Delivery d, String why) {
        try {
            listener.stuck(d, why);
        } catch (RuntimeException e) {
            log.accept("ERROR: reporting a stuck delivery of " + d.origin() + ": " + e);
        }
    }

    private void send(ProducerRecord<byte[], byte[]> rec, Delivery d, String status, Runnable onDurable) {
        if (d.ticket().revoked()) {
            return; // the partition's new owner takes the record again
        }
        try {
            producer.send(rec, (md, ex) -> {
                if (ex == null) {
                    durable(d, onDurable);
                } else {
                    failed(rec, d, status, onDurable, ex);
                }
            });
        } catch (RuntimeException e) { // e.g. a closed producer, an interrupt: as if it came by callback
            failed(rec, d, status, onDurable, e);
        }
    }

    private void durable(Delivery d, Runnable onDurable) {
        try {
            onDurable.run(); // a counter: it must not keep the ticket open
        } catch (RuntimeException e) {
            log.accept("ERROR: after writing " + d.origin() + " for '" + d.endpoint() + "': " + e);
        }
        d.ticket().done();
    }

    private void failed(ProducerRecord<byte[], byte[]> rec, Delivery d, String status, Runnable onDurable, Exception ex) {
        failures.incrementAndGet();
        if (stopping) {
            log.accept("not written to " + rec.topic() + " while stopping (" + ex.getMessage() + "): " + d.origin()
                    + " for '" + d.endpoint() + "' is not committed and comes again after the restart");
            return;
        }
        if (ex instanceof RetriableException) {
            long now = System.currentTimeMillis();
            if (now - lastFailureLog > 10_000) {
                lastFailureLog = now;
                log.accept("ERROR: cannot write to Kafka topic " + rec.topic() + " (" + ex.getMessage()
                        + "); trying again every " + RETRY_PAUSE.toSeconds() + " s, commits wait meanwhile");
            }
            later(() -> send(rec, d, status, onDurable), RETRY_PAUSE);
            return;
        }
        String why = ex.getClass().getSimpleName() + ": " + ex.getMessage();
        if (!rec.topic().equals(deadLetterTopic)) {
            log.accept("ERROR: Kafka refused the copy of " + where(d) + " for '" + d.endpoint() + "' on " + rec.topic()
                    + " for good (" + why + "); it goes to " + deadLetterTopic);
            // not on the producer's I/O thread (a callback must be quick; a send may block on a full buffer)
            later(() -> deadLetter(d, status, "cannot park on " + rec.topic() + ": " + why, deadCounter(d)), Duration.ZERO);
            return;
        }
        stuck(d, "Kafka refused its dead letter on " + deadLetterTopic + " for good (" + why + ")");
    }

    private void later(Runnable r, Duration after) {
        try {
            again.schedule(r, after.toMillis(), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            log.accept("not written (stopping): " + e.getMessage());
        }
    }

    private Runnable deadCounter(Delivery d) {
        return () -> listener.deadLettered(d.endpoint());
    }

    /** The Kafka record a delivery came from, and where it was first consumed. */
    static String where(Delivery d) {
        return d.ticket().partition() + "@" + d.ticket().offset() + (d.origin() == null ? ""
                : " (first consumed at " + d.origin() + ")");
    }

    /** Produces that failed (and were tried again, dead-lettered or reported stuck). */
    public long failures() {
        return failures.get();
    }

    /** From now on a failed produce is left (not committed: it comes again after the restart). */
    void stopping() {
        stopping = true;
    }

    @Override
    public void close() {
        stopping = true;
        again.shutdownNow();
        producer.close(Duration.ofSeconds(10));
    }
}
