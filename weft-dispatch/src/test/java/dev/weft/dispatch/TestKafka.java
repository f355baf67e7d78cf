package dev.weft.dispatch;

import dev.weft.devtools.KafkaBroker;
import dev.weft.dispatch.engine.KafkaAdmin;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

/** One real broker (child JVM, fresh directory, free port) shared by the tests of this JVM. */
final class TestKafka {
    private static KafkaBroker broker;
    private static final AtomicInteger names = new AtomicInteger();

    private TestKafka() {
    }

    static synchronized String bootstrap() throws Exception {
        if (broker == null) {
            Path dir = Files.createTempDirectory("weft-kafka-test");
            broker = KafkaBroker.start(dir, new InetSocketAddress("127.0.0.1", 0),
                    Map.of("alter.config.policy.class.name", RefusingAlterPolicy.class.getName(),
                            // ACLs, so that a test can deny the dispatcher a topic; with none on a resource, everyone
                            // may do everything there, as on a broker without an authorizer
                            "authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
                            "allow.everyone.if.no.acl.found", "true"));
            Runtime.getRuntime().addShutdownHook(new Thread(broker::close));
        }
        return broker.bootstrap();
    }

    /** A topic of its own for one test. */
    static String topic(String prefix, int partitions) throws Exception {
        String t = prefix + "-" + names.incrementAndGet() + "-" + System.nanoTime() % 100000;
        KafkaAdmin.createTopics(bootstrap(), Map.of(t, partitions));
        return t;
    }

    record Sent(String topic, int partition, long offset) {
    }

    /** Produces each value (with a {@code type} header when {@code types} gives one), acks=all; returns where each went. */
    static List<Sent> produce(String topic, List<String> values, List<String> types) throws Exception {
        try (KafkaProducer<byte[], byte[]> p = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap(), ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class,
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class))) {
            List<Future<RecordMetadata>> fs = new ArrayList<>();
            for (int i = 0; i < values.size(); i++) {
                ProducerRecord<byte[], byte[]> r = new ProducerRecord<>(topic, ("k" + i).getBytes(StandardCharsets.UTF_8),
                        values.get(i).getBytes(StandardCharsets.UTF_8));
                if (types != null && types.get(i) != null) {
                    r.headers().add(new RecordHeader("type", types.get(i).getBytes(StandardCharsets.UTF_8)));
                }
                fs.add(p.send(r));
            }
            List<Sent> out = new ArrayList<>();
            for (Future<RecordMetadata> f : fs) {
                RecordMetadata m = f.get(30, TimeUnit.SECONDS);
                out.add(new Sent(m.topic(), m.partition(), m.offset()));
            }
            return out;
        }
    }

    /** Produces each value to {@code partition} of {@code topic}, in order, acks=all. */
    static void produce(String topic, int partition, List<String> values) throws Exception {
        try (KafkaProducer<byte[], byte[]> p = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap(), ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class,
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class))) {
            for (String v : values) {
                p.send(new ProducerRecord<>(topic, partition, null, v.getBytes(StandardCharsets.UTF_8)))
                        .get(30, TimeUnit.SECONDS);
            }
        }
    }

    /**
     * Writes one parked record for {@code endpoint} on {@code topic} (a retry or wait topic), due now, as a
     * dispatcher (or a replay, or an instance still on an older config) would.
     */
    static void produceParked(String topic, String endpoint, String webhookId) throws Exception {
        try (KafkaProducer<byte[], byte[]> p = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap(), ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class,
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class))) {
            ProducerRecord<byte[], byte[]> rec = new ProducerRecord<>(topic, null, "{}".getBytes(StandardCharsets.UTF_8));
            for (String[] h : new String[][]{{"weft-endpoint", endpoint}, {"weft-attempts", "0"}, {"weft-reason", "room"},
                    {"weft-status", ""}, {"weft-origin", "t/0/0"}, {"webhook-id", webhookId}, {"weft-due", "0"}}) {
                rec.headers().add(h[0], h[1].getBytes(StandardCharsets.UTF_8));
            }
            p.send(rec).get(30, TimeUnit.SECONDS);
        }
    }

    /** The group's committed offsets of {@code topic}'s partitions (missing: none committed). */
    static Map<TopicPartition, OffsetAndMetadata> committed(String group) throws Exception {
        try (Admin a = KafkaAdmin.admin(bootstrap())) {
            return a.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(20, TimeUnit.SECONDS);
        }
    }

    static long committedSum(String group, String topic) throws Exception {
        return committed(group).entrySet().stream().filter(e -> e.getKey().topic().equals(topic) && e.getValue() != null)
                .mapToLong(e -> e.getValue().offset()).sum();
    }

    /** Every record of {@code topic} from the start, read until {@code expected} arrived or 30 s passed. */
    static List<ConsumerRecord<byte[], byte[]>> readAll(String topic, int expected) throws Exception {
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap(),
                ConsumerConfig.GROUP_ID_CONFIG, "test-reader-" + names.incrementAndGet(),
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class,
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class))) {
            c.subscribe(List.of(topic));
            List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (out.size() < expected && System.nanoTime() < end) {
                c.poll(Duration.ofMillis(200)).forEach(out::add);
            }
            return out;
        }
    }

    static String header(ConsumerRecord<byte[], byte[]> r, String name) {
        var h = r.headers().lastHeader(name);
        return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
    }

    /** Waits until the group has committed {@code records} offsets in all of {@code topic}'s partitions. */
    static boolean awaitCommitted(String group, String topic, long records, Duration timeout) throws InterruptedException {
        return await(timeout, () -> {
            try {
                return committedSum(group, topic) == records;
            } catch (Exception e) {
                return false;
            }
        });
    }

    /** Waits until {@code done} holds (checked every 50 ms); false after {@code timeout}. */
    static boolean await(Duration timeout, BooleanSupplier done) {
        try {
            org.awaitility.Awaitility.await().atMost(timeout).pollInterval(Duration.ofMillis(50))
                    .until(done::getAsBoolean);
            return true;
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            return false;
        }
    }
}
