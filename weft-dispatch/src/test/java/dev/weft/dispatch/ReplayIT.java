package dev.weft.dispatch;

import dev.weft.dispatch.config.DispatchConfig;
import dev.weft.dispatch.config.DispatchConfigLoader;
import dev.weft.dispatch.engine.Dispatcher;
import dev.weft.dispatch.engine.Replay;
import dev.weft.server.HttpServer;
import dev.weft.server.ServerResponse;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code weft dispatch replay} against the real broker and a running dispatcher. */
class ReplayIT {
    @Test
    void replaysDeadLettersWithTheirWebhookIdsOnceAndSourceRangesForOneEndpoint() throws Exception {
        String topic = TestKafka.topic("replay", 2);
        AtomicInteger answer = new AtomicInteger(500);
        ConcurrentLinkedQueue<String> flakyIds = new ConcurrentLinkedQueue<>();
        Set<String> otherIds = ConcurrentHashMap.newKeySet();
        AtomicInteger otherRequests = new AtomicInteger();
        try (HttpServer flaky = HttpServer.builder(r -> {
                    int s = answer.get();
                    if (s == 204) {
                        flakyIds.add(r.header("webhook-id"));
                    }
                    return ServerResponse.json(s, new byte[0]);
                }).listen(new InetSocketAddress("127.0.0.1", 0)).start();
             HttpServer other = HttpServer.builder(r -> {
                         otherRequests.incrementAndGet();
                         otherIds.add(r.header("webhook-id"));
                         return ServerResponse.json(204, new byte[0]);
                     }).listen(new InetSocketAddress("127.0.0.1", 0)).start()) {
            String yaml = EndpointStateIT.config(topic, "g-replay", List.of("flaky", "other"),
                    List.of(flaky.url(), other.url()));
            DispatchConfig cfg = DispatchConfigLoader.parse("test.yaml", yaml);
            Instant before = Instant.now().minusSeconds(1);
            try (Dispatcher d = EndpointStateIT.dispatcher(yaml)) {
                TestKafka.produce(topic, EndpointStateIT.values(0, 6), null);
                assertThat(TestKafka.await(Duration.ofSeconds(60), () -> DispatchIT.endpoint(d, "flaky").deadLettered() == 6
                        && otherIds.size() == 6)).as("six dead letters for flaky, six deliveries to other").isTrue();
                List<ConsumerRecord<byte[], byte[]>> dead = TestKafka.readAll(cfg.deadLetterTopic(), 6);
                Set<String> deadIds = dead.stream().map(r -> TestKafka.header(r, "webhook-id")).collect(Collectors.toSet());
                assertThat(deadIds).hasSize(6);

                answer.set(204); // the partner fixed its endpoint
                Replay.Result dry = Replay.run(cfg, TestKafka.bootstrap(), "flaky", true, null, null, true, System.out::println);
                assertThat(dry.matched()).isEqualTo(6);
                assertThat(dry.replayed()).isZero();
                Replay.Result first = Replay.run(cfg, TestKafka.bootstrap(), "flaky", true, null, null, false,
                        System.out::println);
                assertThat(first.matched()).as("the dry run committed nothing").isEqualTo(6);
                assertThat(first.replayed()).isEqualTo(6);
                assertThat(TestKafka.await(Duration.ofSeconds(60), () -> flakyIds.size() >= 6)).isTrue();
                assertThat(Set.copyOf(flakyIds)).as("the same webhook-ids").isEqualTo(deadIds);

                Replay.Result second = Replay.run(cfg, TestKafka.bootstrap(), "flaky", true, null, null, false,
                        System.out::println);
                assertThat(second.replayed()).as("a second identical run replays nothing new").isZero();
                assertThat(second.group()).isEqualTo(first.group());

                // the source range: every record again, for flaky only
                int otherBefore = otherRequests.get();
                Replay.Result range = Replay.run(cfg, TestKafka.bootstrap(), "flaky", false, before, null, false,
                        System.out::println);
                assertThat(range.replayed()).isEqualTo(6);
                assertThat(TestKafka.await(Duration.ofSeconds(60), () -> flakyIds.size() >= 12)).isTrue();
                assertThat(Set.copyOf(flakyIds)).as("source replays carry the ids the records always had")
                        .isEqualTo(deadIds);
                Thread.sleep(1000); // an absence under test: time for a wrong delivery to the other endpoint to arrive
                assertThat(otherRequests.get()).as("the other endpoint gets nothing again").isEqualTo(otherBefore);
                assertThat(Replay.run(cfg, TestKafka.bootstrap(), "flaky", false, before, null, false,
                        System.out::println).replayed()).isZero();
                assertThat(flakyIds).hasSize(12);
            }
        }
    }
}
