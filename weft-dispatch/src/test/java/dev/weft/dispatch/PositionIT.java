package dev.weft.dispatch;

import dev.weft.dispatch.engine.Dispatcher;
import dev.weft.dispatch.engine.DispatcherHealth;
import dev.weft.dispatch.engine.KafkaAdmin;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** A committed position the log no longer has, on the real broker: the consumer goes on, and so does a restart. */
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
}
