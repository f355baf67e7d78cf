package dev.weft.dispatch.engine;

import dev.weft.dispatch.config.DispatchConfig;
import dev.weft.dispatch.config.DispatchConfigLoader;
import dev.weft.server.HttpServer;
import dev.weft.server.ServerResponse;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** A lane against a real endpoint on loopback (answering 500): a failed attempt's errors never cost a worker. */
class LaneTest {
    /** Records dead letters; parks throw while {@code parkFails} is set. */
    static final class Copies implements Parker {
        final ConcurrentLinkedQueue<String> dead = new ConcurrentLinkedQueue<>();
        final ConcurrentLinkedQueue<String> parked = new ConcurrentLinkedQueue<>();
        volatile RuntimeException parkFails;

        @Override
        public void park(Delivery d, String topic, ParkedRecord.Reason reason, String status, long dueMillis,
                         Runnable onDurable) {
            if (parkFails != null) {
                throw parkFails;
            }
            parked.add(d.webhookId() + " " + topic + " attempts=" + d.attempts());
            d.ticket().done();
        }

        @Override
        public void deadLetter(Delivery d, String status, String reason, Runnable onDurable) {
            dead.add(d.webhookId() + " attempts=" + d.attempts() + " " + reason);
            d.ticket().done();
        }

        @Override
        public void stuck(Delivery d, String why) {
            dead.add("STUCK " + why);
        }
    }

    @Test
    void errorsAfterAFailedAttemptDeadLetterTheDeliveryAndTheWorkerGoesOn() throws Exception {
        AtomicInteger requests = new AtomicInteger();
        try (HttpServer endpoint = HttpServer.builder(r -> {
                    requests.incrementAndGet();
                    return ServerResponse.json(500, new byte[0]);
                }).listen(new InetSocketAddress("127.0.0.1", 0)).start()) {
            DispatchConfig cfg = DispatchConfigLoader.parse("lane.yaml", """
                    source: { topics: [events], group: g }
                    endpoints:
                      - { id: a, url: "%s", max_in_flight: 1, queue: 10, retry: [1s, 2s], allow_private: true }
                    """.formatted(endpoint.url()));
            Copies copies = new Copies();
            Lane lane = new Lane(cfg.endpoints().getFirst(), cfg, copies, new SimpleMeterRegistry(), l -> { });
            lane.start();
            PartitionTracker tracker = new PartitionTracker(new TopicPartition("g.retry.1000", 0), 0);
            try {
                // 1: a count read back as the largest int: its next attempt overflows the retry schedule's index
                Ticket t1 = tracker.take(0);
                t1.add();
                assertThat(lane.offer(new Delivery("a", t1, "msg_1", null, "{}".getBytes(StandardCharsets.UTF_8),
                        List.of(), Integer.MAX_VALUE, "events/0/0"))).isTrue();
                t1.done();
                await("dead-lettered, not lost").atMost(Duration.ofSeconds(20))
                        .until(() -> copies.dead.size() == 1);
                assertThat(copies.dead.peek()).startsWith("msg_1 attempts=2147483647 ");
                // 2: parking the failed attempt throws (a bug): dead-lettered with both errors, the worker goes on
                copies.parkFails = new IllegalStateException("no park");
                Ticket t2 = tracker.take(1);
                t2.add();
                assertThat(lane.offer(new Delivery("a", t2, "msg_2", null, "{}".getBytes(StandardCharsets.UTF_8),
                        List.of(), 0, "events/0/1"))).isTrue();
                t2.done();
                await("copies.dead.size() == 2").atMost(Duration.ofSeconds(20))
                        .until(() -> copies.dead.size() == 2);
                assertThat(copies.dead).element(1).asString().startsWith("msg_2 attempts=0 internal error: ")
                        .contains("no park");
                // 3: the one worker still works
                copies.parkFails = null;
                Ticket t3 = tracker.take(2);
                t3.add();
                assertThat(lane.offer(new Delivery("a", t3, "msg_3", null, "{}".getBytes(StandardCharsets.UTF_8),
                        List.of(), 0, "events/0/2"))).isTrue();
                t3.done();
                await("the lane's worker is alive").atMost(Duration.ofSeconds(20))
                        .until(() -> copies.parked.size() == 1);
                assertThat(copies.parked.peek()).isEqualTo("msg_3 g.retry.1000 attempts=1");
                await("every delivery settled").atMost(Duration.ofSeconds(20))
                        .until(() -> tracker.outstanding() == 0);
                assertThat(requests.get()).isEqualTo(3);
            } finally {
                lane.stop(Duration.ofSeconds(1));
            }
        }
    }
}
