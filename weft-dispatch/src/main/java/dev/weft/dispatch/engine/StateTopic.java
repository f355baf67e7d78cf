package dev.weft.dispatch.engine;

import com.fasterxml.jackson.databind.JsonNode;
import dev.weft.json.Json;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Endpoint state on the compacted topic {@code GROUP.state}, shared by every instance of a group: whether an
 * endpoint is paused by an operator, disabled (after 410, until enabled), throttled until a time (Retry-After).
 * <p>
 * One record per (endpoint, field): key {@code ID/paused}, {@code ID/disabled} or {@code ID/throttled_until},
 * value JSON ({@code {"paused":true}}, {@code {"reason":"..."}} or {@code {"reason":null}},
 * {@code {"until":EPOCH_MILLIS}}) plus when and by whom. Fields are separate keys so that one instance's
 * throttle never overwrites another's pause; compaction keeps the last record of each key. Each instance reads
 * the topic from the start before it consumes anything (a restart keeps the state), then follows it (a pause
 * on one instance reaches the others within about a second) and applies every record it reads, its own too.
 */
public final class StateTopic implements AutoCloseable {
    /** Fields of an endpoint's state. */
    public enum Field {
        PAUSED("paused"), DISABLED("disabled"), THROTTLED_UNTIL("throttled_until"),
        /**
         * Of the group, not of an endpoint (key {@link #GROUP}{@code /retired}): the parking topics of earlier
         * configs still read (a List of topic names), so a restart does not strand them.
         */
        RETIRED("retired");

        final String key;

        Field(String key) {
            this.key = key;
        }
    }

    /** The "endpoint" of the group's own fields: not an endpoint id (those are [A-Za-z0-9_-]). */
    public static final String GROUP = "*group*";

    /** Applies one state record: endpoint id, field, value (Boolean, String or null, Long). */
    public interface Sink {
        void apply(String endpoint, Field field, Object value);
    }

    private final String topic;
    private final KafkaProducer<byte[], byte[]> producer;
    private final KafkaConsumer<byte[], byte[]> consumer;
    private final Sink sink;
    private final Consumer<String> log;
    private final String instance;
    private final Thread thread;
    private volatile boolean running = true;

    private StateTopic(String bootstrap, String topic, String clientId, Sink sink, Consumer<String> log) {
        this.topic = topic;
        this.sink = sink;
        this.log = log;
        this.instance = clientId + "@" + ProcessHandle.current().pid();
        Map<String, Object> p = new LinkedHashMap<>();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.CLIENT_ID_CONFIG, clientId + "-state");
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 30_000);
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        this.producer = new KafkaProducer<>(p);
        Map<String, Object> c = new LinkedHashMap<>();
        c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        c.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId + "-state-reader");
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        this.consumer = new KafkaConsumer<>(c); // no group: every instance reads all of it
        this.thread = Thread.ofPlatform().daemon().name("weft-dispatch-state").unstarted(this::follow);
    }

    /**
     * Creates the compacted topic when missing, reads it to its end (applying every record to {@code sink}),
     * then follows it on a thread of its own.
     */
    public static StateTopic open(String bootstrap, String topic, String clientId, Sink sink, Consumer<String> log)
            throws IOException {
        KafkaAdmin.createCompacted(bootstrap, topic);
        StateTopic s = new StateTopic(bootstrap, topic, clientId, sink, log);
        try {
            s.readToEnd(Duration.ofSeconds(30));
        } catch (IOException | RuntimeException e) {
            s.producer.close(Duration.ofSeconds(1));
            s.consumer.close();
            throw e;
        }
        s.thread.start();
        return s;
    }

    private void readToEnd(Duration timeout) throws IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        // A topic created a moment ago may not be in the metadata the consumer gets yet: partitionsFor then answers
        // an empty list, and an empty assignment left the reader polling nothing for good ("not subscribed to any
        // topics or assigned any partitions", every second), blind to every pause and disable. Asked again until
        // it has partitions; none by the deadline fails the start, naming the topic.
        List<PartitionInfo> parts = consumer.partitionsFor(topic, Duration.ofSeconds(20));
        while (parts == null || parts.isEmpty()) {
            if (System.nanoTime() > deadline) {
                throw new IOException("the endpoint state topic " + topic + ": the broker told of no partition of it in "
                        + timeout.toSeconds() + " s");
            }
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while waiting for the partitions of " + topic, e);
            }
            parts = consumer.partitionsFor(topic, Duration.ofSeconds(20));
        }
        List<TopicPartition> tps = parts.stream().map(pi -> new TopicPartition(topic, pi.partition())).toList();
        consumer.assign(tps);
        consumer.seekToBeginning(tps);
        Map<TopicPartition, Long> end = consumer.endOffsets(tps, Duration.ofSeconds(20));
        int applied = 0;
        while (tps.stream().anyMatch(tp -> consumer.position(tp) < end.get(tp))) {
            if (System.nanoTime() > deadline) {
                throw new IOException("reading the endpoint state topic " + topic + ": not at its end after "
                        + timeout.toSeconds() + " s");
            }
            for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                applied += apply(r) ? 1 : 0;
            }
        }
        if (applied > 0) {
            log.accept("endpoint state: " + applied + " records read from " + topic);
        }
    }

    private void follow() {
        while (running) {
            try {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(300))) {
                    apply(r);
                }
            } catch (org.apache.kafka.common.errors.WakeupException e) {
                break;
            } catch (RuntimeException e) {
                log.accept("reading " + topic + ": " + e + "; trying again");
                sleep();
            }
        }
        consumer.close(org.apache.kafka.clients.consumer.CloseOptions.timeout(Duration.ofSeconds(2)));
    }

    private static void sleep() {
        try {
            Thread.sleep(1000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Applies one record; a record it cannot read is logged and skipped (it never stops the dispatcher). */
    private boolean apply(ConsumerRecord<byte[], byte[]> r) {
        if (r.key() == null || r.value() == null) {
            return false;
        }
        String key = new String(r.key(), StandardCharsets.UTF_8);
        int slash = key.lastIndexOf('/');
        if (slash <= 0) {
            return false;
        }
        String endpoint = key.substring(0, slash);
        String f = key.substring(slash + 1);
        try {
            JsonNode v = Json.MAPPER.readTree(r.value());
            switch (f) {
                case "paused" -> sink.apply(endpoint, Field.PAUSED, v.path("paused").asBoolean(false));
                case "disabled" -> sink.apply(endpoint, Field.DISABLED,
                        v.path("reason").isTextual() ? v.path("reason").asText() : null);
                case "throttled_until" -> sink.apply(endpoint, Field.THROTTLED_UNTIL, v.path("until").asLong(0));
                case "retired" -> {
                    List<String> topics = new java.util.ArrayList<>();
                    v.path("topics").forEach(t -> {
                        if (t.isTextual()) {
                            topics.add(t.asText());
                        }
                    });
                    sink.apply(endpoint, Field.RETIRED, List.copyOf(topics));
                }
                default -> {
                    return false;
                }
            }
            return true;
        } catch (IOException | RuntimeException e) {
            log.accept("skipping an unreadable state record " + key + " at " + r.topic() + "-" + r.partition() + "@"
                    + r.offset() + ": " + e.getMessage());
            return false;
        }
    }

    /** Writes one field of an endpoint's state and waits for Kafka to acknowledge it (acks=all, up to 30 s). */
    public void publish(String endpoint, Field field, Object value) throws IOException {
        Map<String, Object> v = new LinkedHashMap<>();
        switch (field) {
            case PAUSED -> v.put("paused", value);
            case DISABLED -> v.put("reason", value);
            case THROTTLED_UNTIL -> v.put("until", value);
            case RETIRED -> v.put("topics", value);
        }
        v.put("at", Instant.now().toString());
        v.put("by", instance);
        try {
            producer.send(new ProducerRecord<>(topic, (endpoint + "/" + field.key).getBytes(StandardCharsets.UTF_8),
                    Json.MAPPER.writeValueAsBytes(v))).get(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("writing to " + topic + ": interrupted", e);
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            throw new IOException("writing to " + topic + ": " + (e.getCause() != null ? e.getCause().getMessage()
                    : e.getMessage()), e);
        }
    }

    /** Writes without waiting (a lane's 410 or Retry-After; a failure is logged, the local state holds). */
    public void publishLater(String endpoint, Field field, Object value) {
        Thread.ofVirtual().name("weft-dispatch-state-write").start(() -> {
            try {
                publish(endpoint, field, value);
            } catch (IOException e) {
                log.accept("endpoint " + endpoint + ": its state (" + field.key + ") was not written: " + e.getMessage());
            }
        });
    }

    @Override
    public void close() {
        running = false;
        consumer.wakeup();
        try {
            thread.join(Duration.ofSeconds(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        producer.close(Duration.ofSeconds(5));
    }
}
