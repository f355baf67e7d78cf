package dev.weft.dispatch;

import dev.weft.dispatch.engine.Dispatcher;
import dev.weft.dispatch.engine.DispatcherHealth;
import dev.weft.dispatch.engine.KafkaAdmin;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Positions on the real broker: a committed position the log no longer has (the consumer goes on, and so does a
 * restart), and positions the broker does not give (the consumer thread's turn stays within its budget).
 */
class PositionIT {
    /**
     * The group's committed offset is past the log's end (a topic deleted and created again, a log truncated): the
     * records the log has now are delivered, the consumer keeps running, and a restart does not fail the same way.
     */
    @Test
    void aPositionPastTheLogsEndGoesOnFromTheEndAndARestartToo() throws Exception {
        String topic = TestKafka.topic("pastend", 1);
        TopicPartition tp = new TopicPartition(topic, 0);
        try (Admin a = KafkaAdmin.admin(TestKafka.bootstrap())) {
            a.alterConsumerGroupOffsets("g-pastend", Map.of(tp, new OffsetAndMetadata(5000)))
                    .all().get(30, TimeUnit.SECONDS);
        }
        ConcurrentLinkedQueue<String> log = new ConcurrentLinkedQueue<>();
        try (ParkingIT.Endpoint e = ParkingIT.Endpoint.start(204)) {
            String yaml = DispatchIT.source(topic, "g-pastend") + "endpoints:\n  - { id: a, url: \"" + e.url() + "\" }\n";
            try (Dispatcher d = ParkingIT.start(yaml, log)) {
                assertThat(TestKafka.await(Duration.ofSeconds(60), () -> log.stream()
                        .anyMatch(l -> l.contains("position 5000 is past the log's end 0")))).isTrue();
                TestKafka.produce(topic, List.of("{\"n\":1}"), null);
                assertThat(TestKafka.await(Duration.ofSeconds(60), () -> e.bodies().contains("{\"n\":1}"))).isTrue();
                assertThat(TestKafka.await(Duration.ofSeconds(30), () -> DispatchIT.committed("g-pastend", tp) == 1))
                        .isTrue();
                assertThat(d.health().status()).isEqualTo(DispatcherHealth.Status.UP);
            }
            try (Admin a = KafkaAdmin.admin(TestKafka.bootstrap())) { // as a crashed instance would have left it
                a.alterConsumerGroupOffsets("g-pastend", Map.of(tp, new OffsetAndMetadata(5000)))
                        .all().get(30, TimeUnit.SECONDS);
            }
            try (Dispatcher d = ParkingIT.start(yaml, log)) {
                assertThat(TestKafka.await(Duration.ofSeconds(60), () -> log.stream()
                        .anyMatch(l -> l.contains("position 5000 is past the log's end 1")))).isTrue();
                TestKafka.produce(topic, List.of("{\"n\":2}"), null);
                assertThat(TestKafka.await(Duration.ofSeconds(60), () -> DispatchIT.committed("g-pastend", tp) == 2))
                        .isTrue();
                assertThat(e.bodies()).contains("{\"n\":2}");
                assertThat(d.health().status()).isEqualTo(DispatcherHealth.Status.UP);
            }
        }
    }

    /**
     * A transaction holds the group's offsets (a producer that consumes and produces, between sending its offsets and
     * committing): a read_committed consumer's question for its committed offsets is answered "unstable" and asked
     * again until the call's time runs out, so the partitions just assigned cannot be positioned. Before the turn's
     * budget, the positioning in the rebalance's callback waited 10 s and the one after the poll 10 s more, in one
     * turn (about 20 s). Now a turn's broker steps share {@link Dispatcher#BROKER_CALL_TIMEOUT}: the second waits for
     * the next turn, and once the transaction ends every record is delivered, from the start, and committed.
     */
    @Test
    void aRebalancesBrokerStepsShareOneTurnsBudget() throws Exception {
        String topic = TestKafka.topic("unstable", 1);
        String group = "g-" + topic;
        TopicPartition tp = new TopicPartition(topic, 0);
        List<String> values = List.of("{\"n\":1}", "{\"n\":2}", "{\"n\":3}");
        TestKafka.produce(topic, values, null);
        ConcurrentLinkedQueue<String> log = new ConcurrentLinkedQueue<>();
        try (KafkaProducer<byte[], byte[]> tx = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, TestKafka.bootstrap(),
                ProducerConfig.TRANSACTIONAL_ID_CONFIG, "tx-" + group,
                // open until the test aborts it, well after the two positionings
                ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, (int) Duration.ofMinutes(3).toMillis(),
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class,
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class));
             ParkingIT.Endpoint e = ParkingIT.Endpoint.start(204)) {
            tx.initTransactions();
            tx.beginTransaction();
            tx.sendOffsetsToTransaction(Map.of(tp, new OffsetAndMetadata(0)), new ConsumerGroupMetadata(group));
            String yaml = DispatchIT.source(topic, group) + "endpoints:\n  - { id: a, url: \"" + e.url() + "\" }\n";
            try (Dispatcher d = ParkingIT.start(yaml, log)) {
                LongestTurn longestTurn = LongestTurn.of(d);
                try (longestTurn) {
                    // two positionings timed out: before the budget, both in the first turn
                    assertThat(TestKafka.await(Duration.ofSeconds(90), () -> log.stream()
                            .filter(l -> l.startsWith("positioning ")).count() >= 2)).isTrue();
                }
                assertThat(e.bodies()).as("nothing delivered while the partition has no position").isEmpty();
                tx.abortTransaction();
                System.out.println("longest consumer turn while positions were not answered: " + longestTurn.ms()
                        + " ms");
                assertThat(longestTurn.ms()).as("a positioning waited (the test reached the broker step)")
                        .isGreaterThanOrEqualTo(Duration.ofSeconds(5).toMillis());
                assertThat(longestTurn.ms()).as("the longest consumer turn, ms").isLessThanOrEqualTo(
                        Dispatcher.BROKER_CALL_TIMEOUT.plus(Duration.ofSeconds(2)).toMillis());
                assertThat(TestKafka.await(Duration.ofSeconds(60), () -> e.bodies().containsAll(values))).isTrue();
                assertThat(TestKafka.await(Duration.ofSeconds(30),
                        () -> DispatchIT.committed(group, tp) == values.size())).isTrue();
                assertThat(d.health().recordsLost()).isZero();
                assertThat(d.health().status()).isEqualTo(DispatcherHealth.Status.UP);
            }
        }
    }
}
