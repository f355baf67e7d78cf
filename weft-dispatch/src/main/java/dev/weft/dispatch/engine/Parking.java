package dev.weft.dispatch.engine;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.RecordBatchTooLargeException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
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
 * leader moving, a timeout), or an authorization error (an ACL slip), is tried again every {@link #RETRY_PAUSE} until it succeeds, so nothing is done
 * before it is durable (meanwhile its partition's commit waits). Any other error is permanent (a record
 * larger than the topic's {@code max.message.bytes}, a closed producer...): a parked copy is dead-lettered with the
 * reason instead; a dead letter too large for its topic is written again with its headers only (a size alone never
 * leaves a delivery stuck); a dead letter that fails otherwise is reported {@link #stuck}.
 * A synchronous throw of the producer is handled as the same error arriving by callback: nothing here throws.
 */
public final class Parking implements Parker, AutoCloseable {
    static final Duration RETRY_PAUSE = Duration.ofSeconds(5);
    /**
     * The least {@code max.request.size} of the parking producer. The producer checks it against a record's
     * uncompressed size, the broker checks {@code max.message.bytes} against the compressed batch: a source record
     * that came compressed may be larger than its topic's limit once uncompressed, and is parked compressed (lz4).
     */
    static final int MIN_REQUEST_BYTES = 16 * 1024 * 1024;
    /**
     * How long a parking send may wait for its topic's metadata or for room in the producer's buffer
     * ({@code max.block.ms}). The consumer thread sends itself (a park when a lane is full, a dead letter for a
     * disabled endpoint) only while its turn has this much of its {@link TurnBudget} left, that is in the turn's
     * first second, so its sends never hold a turn past the budget; a later send of the turn goes to the retry
     * thread. With a silent broker and no metadata cached, each such send would otherwise hold the thread this long.
     */
    static final Duration SEND_BLOCK = Dispatcher.BROKER_CALL_TIMEOUT.minusSeconds(1);

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
    /** The consumer thread's turns: its sends wait within them. */
    private final TurnBudget turn;
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
    Parking(String bootstrap, String clientId, String deadLetterTopic, int maxRequestBytes, TurnBudget turn,
            Consumer<String> log) {
        this.producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ProducerConfig.CLIENT_ID_CONFIG, clientId,
                ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true,
                ProducerConfig.LINGER_MS_CONFIG, 5,
                // a send waits this long at most for metadata or buffer room, then fails as retriable (tried again
                // every RETRY_PAUSE): the consumer thread sends too, within its turn's budget (SEND_BLOCK)
                ProducerConfig.MAX_BLOCK_MS_CONFIG, (int) SEND_BLOCK.toMillis(),
                ProducerConfig.MAX_REQUEST_SIZE_CONFIG, Math.max(maxRequestBytes, MIN_REQUEST_BYTES),
                // the source topic's limit is on compressed batches: a record that came compressed is parked so too
                ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4",
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class,
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class));
        this.deadLetterTopic = deadLetterTopic;
        this.turn = turn;
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
        if (turn.onTurnThread() && !turn.allows(SEND_BLOCK)) {
            // the send might wait past the consumer thread's turn budget (a broker that does not answer): the retry
            // thread sends it, and may wait; its ticket stays open until it is durable, so no commit passes it
            later(() -> send(rec, d, status, onDurable), Duration.ZERO);
            return;
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
        if (ex instanceof RetriableException || ex instanceof AuthorizationException) {
            // an ACL slip is an operator's to fix, not a reason to dead-letter every record meanwhile
            long now = System.currentTimeMillis();
            if (now - lastFailureLog > 10_000) {
                lastFailureLog = now;
                log.accept("ERROR: cannot write to Kafka topic " + rec.topic() + " (" + ex.getClass().getSimpleName()
                        + ": " + ex.getMessage() + (ex instanceof AuthorizationException
                        ? "; the dispatcher's principal needs Write on it" : "")
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
        if ((ex instanceof RecordTooLargeException || ex instanceof RecordBatchTooLargeException) && !stub(rec)) {
            log.accept("ERROR: the dead letter of " + where(d) + " for '" + d.endpoint() + "' is too large for "
                    + deadLetterTopic + " (" + why + "); a dead letter of its headers only (no key, no body) goes there");
            Header r = rec.headers().lastHeader(ParkedRecord.REASON);
            String reason = (r == null ? "" : new String(r.value(), StandardCharsets.UTF_8) + "; ")
                    + "only the headers are kept: the record was too large for " + deadLetterTopic + " (" + why
                    + "); read it at its origin";
            later(() -> deadLetterStub(d, status, reason, onDurable), Duration.ZERO);
            return;
        }
        stuck(d, "Kafka refused its dead letter on " + deadLetterTopic + " for good (" + why + ")");
    }

    /** A dead letter without the key, body and the record's own headers: Weft's headers say where the record is. */
    private void deadLetterStub(Delivery d, String status, String reason, Runnable onDurable) {
        ProducerRecord<byte[], byte[]> rec;
        try {
            List<Header> h = new ArrayList<>(ParkedRecord.deadLetterHeaders(List.of(), d.endpoint(), d.webhookId(),
                    d.attempts(), reason, status, d.origin()));
            h.add(new RecordHeader(STUB, new byte[] {'1'}));
            rec = new ProducerRecord<>(deadLetterTopic, null, (byte[]) null, (byte[]) null, h);
        } catch (RuntimeException e) {
            stuck(d, "its dead letter cannot be made (" + e + ") after: " + reason);
            return;
        }
        send(rec, d, status, onDurable);
    }

    /** On a dead letter that carries headers only (the record was too large for the dead-letter topic). */
    public static final String STUB = "weft-headers-only";

    private static boolean stub(ProducerRecord<byte[], byte[]> rec) {
        return rec.headers().lastHeader(STUB) != null;
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
