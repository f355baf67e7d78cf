package dev.weft.lab;

import dev.weft.devtools.KafkaBroker;
import dev.weft.devtools.UpstreamProcess;
import dev.weft.dispatch.config.DispatchConfigLoader;
import dev.weft.dispatch.engine.Dispatcher;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code weft lab dispatch --backlog N}: issue 16's backlog case. N records wait on a topic for one endpoint
 * (weft-upstream answering in {@code latency}) whose lane has {@code maxInFlight} requests at once, so the lane
 * can do {@code maxInFlight / latency} deliveries a second; weft dispatch starts and drains them. Printed:
 * the time from the first delivery to the last, the rate, and that rate against the lane's capacity. A
 * first, smaller pass on a group of its own warms up the JVMs.
 */
public final class BacklogLab {
    private BacklogLab() {
    }

    public record Result(int records, double seconds, double perSecond, double capacity, long parkedRoom) {
    }

    public static Result run(int records, int maxInFlight, Duration latency, int partitions, Duration limit,
                             PrintWriter out) throws Exception {
        Path dir = Files.createTempDirectory("weft-lab-kafka");
        try (KafkaBroker broker = KafkaBroker.start(dir, new InetSocketAddress("127.0.0.1", 0));
             UpstreamProcess sim = UpstreamProcess.start(List.of(new InetSocketAddress("127.0.0.11", 0)))) {
            String url = sim.urls().getFirst() + "/e0?latency=" + dev.weft.core.Durations.format(latency);
            double capacity = maxInFlight / (latency.toNanos() / 1e9);
            int warm = Math.max(1, records / 3);
            out.println("warming up: " + warm + " records, not measured");
            out.flush();
            drain(broker, "warm", warm, partitions, url, maxInFlight, limit);
            Result r = drain(broker, "backlog", records, partitions, url, maxInFlight, limit);
            r = new Result(r.records(), r.seconds(), r.perSecond(), capacity, r.parkedRoom());
            out.println(String.format(Locale.ROOT, "backlog: %d records for one endpoint (max_in_flight %d, %s per answer: "
                            + "a lane of %.0f/s) drained in %.1f s from the first delivery to the last: %.0f deliveries/s, "
                            + "%.2f of the lane's capacity; parked for room: %d", r.records(), maxInFlight,
                    dev.weft.core.Durations.format(latency), capacity, r.seconds(), r.perSecond(), r.perSecond() / capacity,
                    r.parkedRoom()));
            out.flush();
            return r;
        } finally {
            try (var paths = Files.walk(dir)) {
                paths.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            } catch (java.io.IOException e) {
                // a temporary directory: left for the OS to clean
            }
        }
    }

    private static Result drain(KafkaBroker broker, String name, int records, int partitions, String url, int maxInFlight,
                                Duration limit) throws Exception {
        String topic = "lab-" + name;
        broker.createTopic(topic, partitions);
        try (KafkaProducer<byte[], byte[]> p = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap(), ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.LINGER_MS_CONFIG, 10,
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class,
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class))) {
            for (int i = 0; i < records; i++) {
                p.send(new ProducerRecord<>(topic, ("{\"type\":\"order.created\",\"order\":" + i + "}")
                        .getBytes(StandardCharsets.UTF_8)));
            }
            p.flush();
        }
        String yaml = "source: { bootstrap: \"" + broker.bootstrap() + "\", topics: [" + topic + "], group: lab-" + name
                + " }\ndefaults: { timeout: 10s, retry: [1s, 5s]" + LabTargets.ALLOW_PRIVATE + " }\nendpoints:\n"
                + "  - { id: e0, url: \"" + url + "\", max_in_flight: " + maxInFlight + " }\n";
        try (Dispatcher d = Dispatcher.start(DispatchConfigLoader.parse("lab-backlog.yaml", yaml), broker.bootstrap(),
                new SimpleMeterRegistry(), line -> { })) {
            long end = System.nanoTime() + limit.toNanos();
            long first = 0;
            long delivered = 0;
            while (System.nanoTime() < end) {
                delivered = ((Number) d.endpoints().getFirst().get("delivered")).longValue();
                if (first == 0 && delivered > 0) {
                    first = System.nanoTime();
                }
                if (delivered >= records) {
                    break;
                }
                Thread.sleep(5);
            }
            double secs = (System.nanoTime() - first) / 1e9;
            long parked = ((Number) d.endpoints().getFirst().get("parked_room")).longValue();
            if (delivered < records) {
                throw new IllegalStateException("only " + delivered + " of " + records + " delivered in "
                        + dev.weft.core.Durations.format(limit));
            }
            return new Result(records, secs, delivered / secs, 0, parked);
        }
    }
}
