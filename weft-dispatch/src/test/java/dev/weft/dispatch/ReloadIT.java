package dev.weft.dispatch;

import dev.weft.dispatch.config.DispatchConfigLoader;
import dev.weft.dispatch.engine.Dispatcher;
import dev.weft.dispatch.engine.EndpointStatus;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** A config reload on a running dispatcher (real broker, loopback receivers): add, remove, refuse a bad file. */
class ReloadIT {
    @Test
    void reloadAddsAndRemovesEndpointsAndRefusesABadFile(@TempDir Path dir) throws Exception {
        String topic = TestKafka.topic("reload", 2);
        try (EndpointStateIT.Receiver a = EndpointStateIT.Receiver.start(204);
             EndpointStateIT.Receiver b = EndpointStateIT.Receiver.start(204);
             EndpointStateIT.Receiver c = EndpointStateIT.Receiver.start(204)) {
            Path file = dir.resolve("dispatch.yaml");
            Files.writeString(file, EndpointStateIT.config(topic, "g-reload", List.of("a", "b"),
                    List.of(a.server().url(), b.server().url())));
            try (DispatchService svc = DispatchService.start(DispatchConfigLoader.load(file),
                    new InetSocketAddress("127.0.0.1", 0), dir.resolve("kafka"), line -> System.out.println("dispatch: " + line))) {
                TestKafka.produce(topic, EndpointStateIT.values(0, 3), null);
                assertThat(TestKafka.await(Duration.ofSeconds(60), () -> a.ids().size() == 3 && b.ids().size() == 3))
                        .isTrue();
                // b's work waits on its wait topic (paused), then b is removed from the file
                svc.dispatcher().control("b", Dispatcher.Action.PAUSE);
                TestKafka.produce(topic, EndpointStateIT.values(3, 4), null);
                assertThat(TestKafka.await(Duration.ofSeconds(60), () -> a.ids().size() == 7
                        && DispatchIT.endpoint(svc.dispatcher(), "b").parkedRoom() == 4)).isTrue();

                Files.writeString(file, "source: { topics: [" + topic + "]\nendpoints: [\n");
                assertThat(svc.reload()).as("a bad file is refused").isFalse();
                assertThat(svc.lastReloadError()).contains(file.toString() + ":");
                assertThat(svc.dispatcher().endpointStatus()).extracting(EndpointStatus::id).containsExactly("a", "b");

                svc.watchFile(Duration.ofMillis(200)); // a change of the file reloads (as SIGHUP does)
                Files.writeString(file, EndpointStateIT.config(topic, "g-reload", List.of("a", "c"),
                        List.of(a.server().url(), c.server().url())) + "# changed\n");
                assertThat(TestKafka.await(Duration.ofSeconds(60), () -> svc.dispatcher().endpointStatus().stream()
                        .map(EndpointStatus::id).toList().equals(List.of("a", "c")))).as("the watcher reloaded").isTrue();
                assertThat(svc.reload()).as("an unchanged file does nothing").isFalse();
                TestKafka.produce(topic, EndpointStateIT.values(7, 2), null);
                assertThat(TestKafka.await(Duration.ofSeconds(60), () -> c.ids().size() == 2 && a.ids().size() == 9))
                        .as("the added endpoint gets new records; the kept one goes on").isTrue();
                List<ConsumerRecord<byte[], byte[]>> dead = TestKafka.readAll("g-reload.dlq", 4);
                assertThat(dead).hasSize(4);
                assertThat(dead).allSatisfy(r -> {
                    assertThat(TestKafka.header(r, "weft-endpoint")).isEqualTo("b");
                    assertThat(TestKafka.header(r, "weft-reason")).contains("not in the config any more");
                });
                assertThat(b.ids()).as("the removed endpoint got nothing more").hasSize(3);
            }
        }
    }

    /**
     * A parking topic retired by one reload is still read after the next: work parked there later (by an instance
     * still on the old config, or a replay) for the removed endpoint is dead-lettered with the reason, not stranded.
     */
    @Test
    void aSecondReloadStillReadsTheTopicsTheFirstRetired(@TempDir Path dir) throws Exception {
        String topic = TestKafka.topic("reload2", 1);
        try (EndpointStateIT.Receiver a = EndpointStateIT.Receiver.start(204);
             EndpointStateIT.Receiver b = EndpointStateIT.Receiver.start(204);
             EndpointStateIT.Receiver c = EndpointStateIT.Receiver.start(204)) {
            Path file = dir.resolve("dispatch.yaml");
            Files.writeString(file, EndpointStateIT.config(topic, "g-reload2", List.of("a", "b"),
                    List.of(a.server().url(), b.server().url())));
            try (DispatchService svc = DispatchService.start(DispatchConfigLoader.load(file),
                    new InetSocketAddress("127.0.0.1", 0), dir.resolve("kafka"), line -> System.out.println("dispatch: " + line))) {
                Files.writeString(file, EndpointStateIT.config(topic, "g-reload2", List.of("a"), List.of(a.server().url())));
                assertThat(svc.reload()).as("b removed: its wait topic is retired").isTrue();
                Files.writeString(file, EndpointStateIT.config(topic, "g-reload2", List.of("a", "c"),
                        List.of(a.server().url(), c.server().url())));
                assertThat(svc.reload()).as("c added").isTrue();
                TestKafka.produceParked("g-reload2.wait.b", "b", "msg_late_for_b");
                List<ConsumerRecord<byte[], byte[]>> dead = TestKafka.readAll("g-reload2.dlq", 1);
                assertThat(dead).singleElement().satisfies(r -> {
                    assertThat(TestKafka.header(r, "webhook-id")).isEqualTo("msg_late_for_b");
                    assertThat(TestKafka.header(r, "weft-reason")).isEqualTo("endpoint 'b' is not in the config any more");
                });
                assertThat(b.ids()).isEmpty();
            }
        }
    }

    /**
     * A parking topic retired by a reload is still read after a process restart (the retired set is kept on the
     * state topic): work parked there for the removed endpoint, and a retry topic whose delay was removed, are
     * dead-lettered or delivered, not stranded.
     */
    @Test
    void aRestartStillReadsTheTopicsAReloadRetired(@TempDir Path dir) throws Exception {
        String topic = TestKafka.topic("reload3", 1);
        try (EndpointStateIT.Receiver a = EndpointStateIT.Receiver.start(204);
             EndpointStateIT.Receiver b = EndpointStateIT.Receiver.start(204)) {
            Path file = dir.resolve("dispatch.yaml");
            String both = EndpointStateIT.config(topic, "g-reload3", List.of("a", "b"),
                    List.of(a.server().url(), b.server().url()));
            Files.writeString(file, both);
            String onlyA = DispatchIT.source(topic, "g-reload3") + "endpoints:\n  - { id: a, url: \"" + a.server().url()
                    + "\", retry: [300ms], allow_private: true }\n";
            try (DispatchService svc = DispatchService.start(DispatchConfigLoader.load(file),
                    new InetSocketAddress("127.0.0.1", 0), dir.resolve("kafka"), line -> System.out.println("dispatch: " + line))) {
                Files.writeString(file, onlyA);
                assertThat(svc.reload()).as("b and the 200ms retry topic retired").isTrue();
            }
            try (DispatchService svc = DispatchService.start(DispatchConfigLoader.load(file),
                    new InetSocketAddress("127.0.0.1", 0), dir.resolve("kafka"), line -> System.out.println("dispatch: " + line))) {
                TestKafka.produceParked("g-reload3.wait.b", "b", "msg_after_restart_for_b");
                TestKafka.produceParked("g-reload3.retry.200", "a", "msg_after_restart_for_a");
                List<ConsumerRecord<byte[], byte[]>> dead = TestKafka.readAll("g-reload3.dlq", 1);
                assertThat(dead).singleElement().satisfies(r -> {
                    assertThat(TestKafka.header(r, "webhook-id")).isEqualTo("msg_after_restart_for_b");
                    assertThat(TestKafka.header(r, "weft-reason")).isEqualTo("endpoint 'b' is not in the config any more");
                });
                assertThat(TestKafka.await(Duration.ofSeconds(60), () -> a.ids().contains("msg_after_restart_for_a")))
                        .as("a's record parked on the retired retry topic is delivered").isTrue();
                assertThat(b.ids()).isEmpty();
            }
        }
    }
}
