package dev.weft.lab.chaos;

import dev.weft.devtools.KafkaBroker;
import dev.weft.dispatch.config.DispatchConfigLoader;
import dev.weft.dispatch.engine.Dispatcher;
import dev.weft.dispatch.engine.DispatcherHealth;
import dev.weft.upstream.UpstreamConfig;
import dev.weft.upstream.UpstreamServer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The broker answers nothing for a while (Toxiproxy holds every byte both ways, as a broker stalled in a long
 * pause would): the dispatcher's consumer thread must not be held by a broker call for longer than
 * {@link Dispatcher#BROKER_CALL_TIMEOUT} (its commits wait that long at most, then it polls on), its health must say
 * why it does not commit, and once the broker answers again every record reaches the endpoint and the group's
 * commits reach the end of the topic. Skipped only where Go is absent to install Toxiproxy.
 */
class BrokerSilenceIT {
    static final int RECORDS = 300;
    static final int PARTITIONS = 2;
    /** How long the broker answers nothing: twice the bound, so a call without it would be seen held past it. */
    static final Duration SILENCE = Dispatcher.BROKER_CALL_TIMEOUT.multipliedBy(2);
    /** Scheduling on a loaded machine and a poll's own wait, on top of the bound. */
    static final Duration MARGIN = Duration.ofSeconds(2);

    @TempDir
    Path dir;

    @Test
    void aSilentBrokerHoldsTheConsumerThreadNoLongerThanTheBoundAndNothingIsLost() throws Exception {
        Toxiproxy tp;
        try {
            tp = Toxiproxy.start();
        } catch (Toxiproxy.Unavailable e) {
            System.out.println("BrokerSilenceIT skipped: " + e.getMessage());
            Assumptions.abort(e.getMessage());
            return;
        }
        try (tp; UpstreamServer sim = UpstreamServer.start(UpstreamConfig.local())) {
            int proxyPort = Toxiproxy.freePort();
            String bootstrap = "127.0.0.1:" + proxyPort; // the broker advertises it: every client goes through it
            try (KafkaBroker broker = ChaosLab.startBroker(dir, tp, bootstrap, proxyPort)) {
                broker.createTopic("events", PARTITIONS);
                produce(bootstrap);
                // deliveries take a while (300 ms each, 4 at once), so they go on while the broker is silent and
                // leave done offsets to commit: the consumer thread commits into the silence
                String yaml = "source: { bootstrap: \"" + bootstrap + "\", topics: [events], group: g-silence }\n"
                        + "endpoints:\n  - { id: a, url: \"" + sim.url("/a?latency=300ms")
                        + "\", allow_private: true, max_in_flight: 4, queue: 1000 }\n";
                try (Dispatcher d = Dispatcher.start(DispatchConfigLoader.parse("silence.yaml", yaml), bootstrap,
                        new SimpleMeterRegistry(), l -> System.out.println("dispatch: " + l))) {
                    await("20 records delivered", Duration.ofSeconds(60), () -> distinct(sim) >= 20);
                    AtomicLong longestTurn = new AtomicLong();
                    Thread sampler = Thread.ofVirtual().start(() -> {
                        while (!Thread.currentThread().isInterrupted()) {
                            longestTurn.accumulateAndGet(d.health().consumerTurnMs(), Math::max);
                            try {
                                Thread.sleep(50); // sampling the turn's age, not waiting for a condition
                            } catch (InterruptedException e) {
                                return;
                            }
                        }
                    });
                    long silentFrom = System.nanoTime();
                    // held, not dropped: what was sent in the silence arrives once the toxics go
                    tp.addToxic("kafka", "silence-up", "latency", "upstream", Map.of("latency", 120_000L));
                    tp.addToxic("kafka", "silence-down", "latency", "downstream", Map.of("latency", 120_000L));
                    await("readiness says why", SILENCE, () -> !d.readiness().ready());
                    String reason = d.readiness().reason();
                    assertThat(reason).startsWith("Kafka has not answered for");
                    DispatcherHealth h = d.health();
                    assertThat(h.status()).as("liveness through a broker outage").isEqualTo(DispatcherHealth.Status.UP);
                    assertThat(h.brokerUnansweredMs()).isGreaterThanOrEqualTo(Duration.ofSeconds(10).toMillis());
                    await("the silence's end", SILENCE.plusSeconds(5),
                            () -> System.nanoTime() - silentFrom >= SILENCE.toNanos());
                    long during = longestTurn.get();
                    tp.reset();
                    sampler.interrupt();
                    sampler.join();
                    System.out.println("longest consumer turn in " + SILENCE.toSeconds() + " s of silence: " + during
                            + " ms; readiness: " + reason);
                    assertThat(during).as("a commit into the silence held the consumer thread (the test reached a "
                            + "broker call)").isGreaterThanOrEqualTo(Duration.ofSeconds(5).toMillis());
                    assertThat(during).as("the consumer thread came back within the bound").isLessThanOrEqualTo(
                            Dispatcher.BROKER_CALL_TIMEOUT.plus(MARGIN).toMillis());
                    await("every record at the endpoint", Duration.ofSeconds(120), () -> distinct(sim) == RECORDS);
                    await("the group's commits at the end of the topic", Duration.ofSeconds(60),
                            () -> committed(bootstrap) == RECORDS);
                    await("ready again", Duration.ofSeconds(30), () -> d.readiness().ready());
                    assertThat(d.health().recordsLost()).isZero();
                }
            }
        }
    }

    private static void produce(String bootstrap) throws Exception {
        try (KafkaProducer<byte[], byte[]> p = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap, ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class,
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class))) {
            for (int i = 0; i < RECORDS; i++) {
                p.send(new ProducerRecord<>("events", ("k" + i).getBytes(StandardCharsets.UTF_8),
                        ("{\"n\":" + i + "}").getBytes(StandardCharsets.UTF_8)));
            }
            p.flush();
        }
    }

    private static long distinct(UpstreamServer sim) {
        @SuppressWarnings("unchecked")
        Map<String, Object> ids = (Map<String, Object>) sim.stats().snapshot(false).get("webhook_ids");
        return ((Number) ids.get("distinct")).longValue();
    }

    /** The group's committed offsets on the source topic, summed over its partitions (-1 when not answered). */
    private static long committed(String bootstrap) {
        try (Admin a = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            Map<TopicPartition, OffsetAndMetadata> m = a.listConsumerGroupOffsets("g-silence")
                    .partitionsToOffsetAndMetadata().get(10, TimeUnit.SECONDS);
            return m.entrySet().stream().filter(e -> e.getKey().topic().equals("events") && e.getValue() != null)
                    .mapToLong(e -> e.getValue().offset()).sum();
        } catch (Exception e) {
            return -1;
        }
    }

    private static void await(String what, Duration within, BooleanSupplier condition) {
        org.awaitility.Awaitility.await(what).atMost(within).pollInterval(Duration.ofMillis(100))
                .until(condition::getAsBoolean);
    }
}
