package dev.weft.lab;

import com.fasterxml.jackson.databind.JsonNode;
import dev.weft.json.Json;
import dev.weft.client.CallRequest;
import dev.weft.client.CallResult;
import dev.weft.client.Transport;
import dev.weft.devtools.KafkaBroker;
import dev.weft.dispatch.config.DispatchConfigLoader;
import dev.weft.dispatch.engine.Dispatcher;
import dev.weft.lab.peers.Seed003Forwarder;
import dev.weft.devtools.UpstreamProcess;
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
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code weft lab dispatch}: seed 003's forwarding scenario. Records preloaded on a Kafka topic (a real
 * broker in a child JVM); N endpoints (weft-upstream in a child JVM, one 127.0.0.x address each) answering in
 * {@code latency}; then each design forwards every record to every endpoint, first with all endpoints at
 * {@code latency} ("all fast") and then with one of them at {@code slowLatency} ("one slow"). Deliveries
 * are counted by weft-upstream (answers it gave per endpoint), over the measured window only.
 */
public final class DispatchLab {
    public static final List<String> DESIGNS = List.of("weft", "seed-003");

    /**
     * @param rate records per second written during each run, on a topic of the run's own (the designs
     *             must keep up: what the fast endpoints get is the rate they keep); 0: the backlog mode, every
     *             design reads {@code records} preloaded records as fast as it can
     */
    public record Options(List<String> designs, int endpoints, Duration latency, Duration slowLatency, int records,
                          int partitions, Duration warmup, Duration duration, int rate) {
        Options warmupPass() {
            return new Options(designs, endpoints, latency, slowLatency, records, partitions, Duration.ZERO, warmup, rate);
        }
    }

    public record Row(String design, String scenario, double all, double fast, double slow, long failed) {
    }

    private DispatchLab() {
    }

    public static List<Row> run(Options o, PrintWriter out) throws Exception {
        Path dir = Files.createTempDirectory("weft-lab-kafka");
        List<InetSocketAddress> addrs = new ArrayList<>();
        for (int i = 0; i < o.endpoints(); i++) {
            addrs.add(new InetSocketAddress("127.0.0." + (11 + i), 0));
        }
        List<Row> rows = new ArrayList<>();
        out.println("starting a Kafka broker and weft-upstream (" + o.endpoints() + " endpoints on 127.0.0.11..) ...");
        out.flush();
        try (KafkaBroker broker = KafkaBroker.start(dir, new InetSocketAddress("127.0.0.1", 0));
             UpstreamProcess sim = UpstreamProcess.start(addrs);
             Transport statsClient = Transport.builder().build()) {
            String topic = "lab-events";
            if (o.rate() == 0) {
                broker.createTopic(topic, o.partitions());
                preload(broker.bootstrap(), topic, o.records(), out);
            } else {
                out.println("each run writes " + o.rate() + " records/s to a topic of its own ("
                        + o.rate() * o.endpoints() + " deliveries/s offered)");
            }
            out.println();
            out.println(String.format(Locale.ROOT, "| %-8s | %-8s | %12s | %18s | %18s | %15s | %6s |", "design", "scenario",
                    "deliveries/s", "fast endpoints/s", "slow endpoint/s", "fast vs all fast", "failed"));
            out.println("|----------|----------|-------------:|-------------------:|-------------------:|----------------:|-------:|");
            out.flush();
            // fresh JVMs (this one, weft-upstream, the broker) run slowly until the JIT has compiled the hot paths:
            // a first, unmeasured pass of every design with all endpoints fast
            out.println("(warming up: every design for " + dev.weft.core.Durations.format(o.warmup())
                    + " with all endpoints fast, not measured)");
            out.flush();
            int run = 0;
            for (String design : o.designs()) {
                List<String> urls = new ArrayList<>();
                for (int i = 0; i < o.endpoints(); i++) {
                    urls.add(sim.urls().get(i) + "/e" + i + "?latency=" + dev.weft.core.Durations.format(o.latency()));
                }
                run++;
                measure(design, "warm-up", broker, topic(broker, topic, run, o), "lab-" + design + "-" + run, urls,
                        o.warmupPass(), sim, statsClient);
            }
            for (String design : o.designs()) {
                Double baselineFast = null;
                for (String scenario : List.of("all fast", "one slow")) {
                    run++;
                    List<String> urls = new ArrayList<>();
                    for (int i = 0; i < o.endpoints(); i++) {
                        boolean slow = scenario.equals("one slow") && i == o.endpoints() - 1;
                        urls.add(sim.urls().get(i) + "/e" + i + "?latency="
                                + dev.weft.core.Durations.format(slow ? o.slowLatency() : o.latency()));
                    }
                    String group = "lab-" + design + "-" + run;
                    Row r = measure(design, scenario, broker, topic(broker, topic, run, o), group, urls, o, sim, statsClient);
                    double vs = baselineFast == null ? 1.0 : r.fast() / baselineFast;
                    if (baselineFast == null) {
                        baselineFast = r.fast();
                    }
                    rows.add(r);
                    out.println(String.format(Locale.ROOT, "| %-8s | %-8s | %12.0f | %18.0f | %18.1f | %15s | %6d |",
                            r.design(), r.scenario(), r.all(), r.fast(), r.slow(),
                            String.format(Locale.ROOT, "%.2f", vs), r.failed()));
                    out.flush();
                }
            }
        } finally {
            deleteTree(dir);
        }
        Map<String, Row> weft = new LinkedHashMap<>();
        Map<String, Row> seed = new LinkedHashMap<>();
        rows.forEach(r -> (r.design().equals("weft") ? weft : seed).put(r.scenario(), r));
        if (!weft.isEmpty() && !seed.isEmpty()) {
            out.println();
            out.println("weft / seed-003, deliveries/s in this run: " + String.join(", ", weft.keySet().stream()
                    .filter(seed::containsKey).map(k -> String.format(Locale.ROOT, "%s %.1fx", k,
                            weft.get(k).all() / seed.get(k).all())).toList()));
        }
        return rows;
    }

    private static void deleteTree(Path dir) {
        try (var paths = Files.walk(dir)) {
            paths.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (java.io.IOException e) {
            // a temporary directory: left for the OS to clean
        }
    }

    private static void preload(String bootstrap, String topic, int n, PrintWriter out) throws Exception {
        out.println("preloading " + n + " records on " + topic + " ...");
        out.flush();
        try (KafkaProducer<byte[], byte[]> p = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap, ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.LINGER_MS_CONFIG, 10,
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class,
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class))) {
            for (int i = 0; i < n; i++) {
                p.send(new ProducerRecord<>(topic, record(i)));
            }
            p.flush();
        }
    }

    /** The backlog topic, or (rate mode) a new topic for this run. */
    private static String topic(KafkaBroker broker, String backlog, int run, Options o) throws java.io.IOException {
        if (o.rate() == 0) {
            return backlog;
        }
        String t = backlog + "-" + run;
        broker.createTopic(t, o.partitions());
        return t;
    }

    /** Writes {@code rate} records/s to {@code topic} until interrupted (in steps of 10 ms). */
    private static Thread writer(String bootstrap, String topic, int rate) {
        return Thread.ofPlatform().daemon().name("lab-writer").start(() -> {
            try (KafkaProducer<byte[], byte[]> p = new KafkaProducer<>(Map.of(
                    ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap, ProducerConfig.ACKS_CONFIG, "all",
                    ProducerConfig.LINGER_MS_CONFIG, 5,
                    ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class,
                    ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class))) {
                long start = System.nanoTime();
                long sent = 0;
                while (!Thread.currentThread().isInterrupted()) {
                    long due = (System.nanoTime() - start) * rate / 1_000_000_000L;
                    for (; sent < due; sent++) {
                        p.send(new ProducerRecord<>(topic, record(sent)));
                    }
                    Thread.sleep(10);
                }
            } catch (InterruptedException | org.apache.kafka.common.errors.InterruptException e) {
                // the run is over
            }
        });
    }

    private static byte[] record(long i) {
        return ("{\"type\":\"order.created\",\"order\":" + i + ",\"country\":\"DE\",\"amount\":42.5}")
                .getBytes(StandardCharsets.UTF_8);
    }

    private static Row measure(String design, String scenario, KafkaBroker broker, String topic, String group,
                               List<String> urls, Options o, UpstreamProcess sim, Transport stats) throws Exception {
        String bootstrap = broker.bootstrap();
        Thread writer = o.rate() > 0 ? writer(bootstrap, topic, o.rate()) : null;
        AutoCloseable running;
        java.util.function.LongSupplier failed;
        if (design.equals("weft")) {
            StringBuilder yaml = new StringBuilder("source: { bootstrap: \"" + bootstrap + "\", topics: [" + topic
                    + "], group: " + group + " }\ndefaults: { timeout: 10s, retry: [1s, 5s]" + LabTargets.ALLOW_PRIVATE + " }\nendpoints:\n");
            for (int i = 0; i < urls.size(); i++) {
                yaml.append("  - { id: e").append(i).append(", url: \"").append(urls.get(i)).append("\" }\n");
            }
            Dispatcher d = Dispatcher.start(DispatchConfigLoader.parse("lab-dispatch.yaml", yaml.toString()), bootstrap,
                    new SimpleMeterRegistry(), line -> { });
            running = d;
            failed = () -> d.endpoints().stream().mapToLong(m -> ((Number) m.get("failed_attempts")).longValue()).sum();
        } else {
            Seed003Forwarder f = new Seed003Forwarder(bootstrap, topic, group, urls, Duration.ofSeconds(10));
            running = f;
            failed = f::failed;
        }
        try {
            Thread.sleep(o.warmup().toMillis());
            long[] before = answered(sim, stats, urls.size());
            long t0 = System.nanoTime();
            Thread.sleep(o.duration().toMillis());
            long[] after = answered(sim, stats, urls.size());
            double secs = (System.nanoTime() - t0) / 1e9;
            long fast = 0;
            for (int i = 0; i < urls.size() - 1; i++) {
                fast += after[i] - before[i];
            }
            long slow = after[urls.size() - 1] - before[urls.size() - 1];
            return new Row(design, scenario, (fast + slow) / secs, fast / secs, slow / secs, failed.getAsLong());
        } finally {
            if (writer != null) {
                writer.interrupt();
                writer.join(10_000);
            }
            running.close();
        }
    }

    /** Requests weft-upstream received per endpoint path /e0, /e1, ... (from its /-/stats). */
    private static long[] answered(UpstreamProcess sim, Transport t, int n) throws Exception {
        CallResult r = t.call(CallRequest.get(sim.url() + "/-/stats"), Duration.ofSeconds(10));
        if (!r.ok()) {
            throw new IllegalStateException("weft-upstream /-/stats: " + r);
        }
        JsonNode byPath = Json.MAPPER.readTree(r.body()).path("by_path");
        long[] out = new long[n];
        for (int i = 0; i < n; i++) {
            out[i] = byPath.path("/e" + i).path("requests").asLong();
        }
        return out;
    }
}
