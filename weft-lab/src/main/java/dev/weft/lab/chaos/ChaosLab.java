package dev.weft.lab.chaos;

import dev.weft.devtools.ChildProcess;
import dev.weft.devtools.KafkaBroker;
import dev.weft.dispatch.DispatchService;
import dev.weft.dispatch.engine.WebhookSigning;
import dev.weft.upstream.UpstreamConfig;
import dev.weft.upstream.UpstreamServer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.io.PrintWriter;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * The forwarder's fault-injection suite ({@code weft lab chaos}, and ChaosIT at a CI size): one broker, weft-upstream and
 * Toxiproxy for all runs; per run a topic and a group of their own, a dispatcher of two instances (child JVMs, one
 * group) whose broker and endpoints are reached only through Toxiproxy (the broker advertises the proxy's port, so
 * metadata leads back through it), records written at a steady pace while faults drawn from the run's seed come and
 * go (a toxic on the broker's or an endpoint's proxy, kill -9 of the dispatcher, of one of its instances or of the
 * broker, and a restart), then the invariants:
 * <ul>
 * <li>every (record, matching endpoint) reached weft-upstream (its webhook-id) or the group's DLQ with a
 * {@code weft-reason}: else it is <b>lost</b>;</li>
 * <li>no source offset was committed before its deliveries settled: each committed offset seen (polled every
 * {@value #SAMPLE_MS} ms) is checked against the webhook-ids weft-upstream had received by then and the parked or
 * dead-letter copies written (producer timestamp) before then;</li>
 * <li>duplicates (webhook-id requests beyond the first) are counted per fault: those that arrived from the fault's
 * start to the next fault's start (the last fault's window runs to the end of the run).</li>
 * </ul>
 */
public final class ChaosLab {
    static final int SAMPLE_MS = 250;
    static final int PARTITIONS = 3;

    /**
     * What a run injects. The broker toxics act on every client of the broker (the lab's own included). KILL_9: kill -9
     * of the dispatcher (every instance) and as many new ones started; BROKER_KILL_9: kill -9 of the broker, down for
     * the fault's time, then started again on the same directory and port (the proxy and the advertised listener point
     * at them); KILL_9_ONE: kill -9 of one instance, the group left to rebalance to the survivors, then a new instance
     * (drawn only where a run has two instances or more).
     */
    public enum Fault {
        BROKER_LATENCY, BROKER_RESET_PEER, BROKER_TIMEOUT, BROKER_BANDWIDTH, BROKER_SLICER,
        ENDPOINT_LATENCY, ENDPOINT_RESET_PEER, ENDPOINT_TIMEOUT, ENDPOINT_BANDWIDTH, ENDPOINT_SLICER,
        KILL_9, BROKER_KILL_9, KILL_9_ONE;

        boolean isKill() {
            return this == KILL_9 || this == BROKER_KILL_9 || this == KILL_9_ONE;
        }

        String toxicType() {
            String n = name();
            return n.substring(n.indexOf('_') + 1).toLowerCase(Locale.ROOT);
        }
    }

    /**
     * @param runs       seeded runs; run i uses seed {@code seed + i} (so {@code --seed S --runs 1} repeats run i of S-i)
     * @param records    records written per run (half carry {@code type: a}, which endpoint b alone takes)
     * @param faults     faults per run, drawn with repetition
     * @param instances  dispatcher instances in the run's group (KILL_9_ONE is drawn only with two or more)
     * @param faultFor   how long each toxic stays
     * @param gap        quiet time after each fault before the next
     * @param settle     how long a run may take, after its last fault, to deliver or dead-letter everything
     */
    public record Options(int runs, long seed, int records, int faults, int instances, Duration faultFor, Duration gap,
                          Duration settle) {
        public Options {
            if (runs < 1 || records < 1 || faults < 1 || instances < 1) {
                throw new IllegalArgumentException("runs, records, faults and instances must be at least 1");
            }
        }

        public static Options defaults(int runs, long seed) {
            return new Options(runs, seed, 300, 4, 2, Duration.ofSeconds(3), Duration.ofSeconds(3), Duration.ofSeconds(90));
        }

        /** The faults a run draws from. */
        List<Fault> kinds() {
            return java.util.Arrays.stream(Fault.values()).filter(f -> f != Fault.KILL_9_ONE || instances > 1).toList();
        }
    }

    /** One fault of a run's sequence: a toxic on {@code proxy}'s {@code stream}, or a kill -9 and a restart. */
    public record Applied(Fault fault, String proxy, String stream, Map<String, Long> attributes) {
        @Override
        public String toString() {
            return switch (fault) {
                case KILL_9 -> "KILL_9(dispatcher, restarted)";
                case KILL_9_ONE -> "KILL_9_ONE(instance " + attributes.get("instance") + ", survivor took over, new one started)";
                case BROKER_KILL_9 -> "BROKER_KILL_9(broker, restarted on its directory and port)";
                default -> fault + "(" + proxy + " " + stream + " " + new java.util.TreeMap<>(attributes) + ")";
            };
        }
    }

    /** The fault sequence {@code seed} draws (the same on every machine: a run is repeated by its seed). */
    public static List<Applied> plan(Options o, long seed) {
        Random rnd = new Random(seed);
        List<Applied> out = new ArrayList<>();
        for (int f = 0; f < o.faults(); f++) {
            Fault fault = o.kinds().get(rnd.nextInt(o.kinds().size()));
            String stream = rnd.nextBoolean() ? "downstream" : "upstream";
            String proxy = fault.isKill() ? "" : fault.name().startsWith("BROKER") ? "kafka"
                    : "endpoint-" + ENDPOINTS.get(rnd.nextInt(ENDPOINTS.size()));
            out.add(new Applied(fault, proxy, fault.isKill() ? "" : stream, attributes(fault, o.instances(), rnd)));
        }
        return out;
    }

    public record RunResult(long seed, List<Applied> faults, int sent, int expected, int delivered, int deadLettered,
                            List<String> lost, Map<Fault, Long> duplicates, List<String> earlyCommits, int commitsSeen,
                            int restarts, int brokerRestarts, List<Long> takeoverMillis) {
    }

    public record Summary(List<RunResult> runs) {
        public long lost() {
            return runs.stream().mapToLong(r -> r.lost().size()).sum();
        }

        public long earlyCommits() {
            return runs.stream().mapToLong(r -> r.earlyCommits().size()).sum();
        }

        public Map<Fault, long[]> duplicatesPerFault() { // fault -> {times applied, duplicates}
            Map<Fault, long[]> m = new EnumMap<>(Fault.class);
            for (RunResult r : runs) {
                for (Applied a : r.faults()) {
                    m.computeIfAbsent(a.fault(), f -> new long[2])[0]++;
                }
                r.duplicates().forEach((f, n) -> m.computeIfAbsent(f, x -> new long[2])[1] += n);
            }
            return m;
        }
    }

    static final List<String> ENDPOINTS = List.of("a", "b");

    private ChaosLab() {
    }

    public static Summary run(Options o, PrintWriter out) throws Exception {
        Path dir = Files.createTempDirectory("weft-chaos-kafka");
        try (Toxiproxy tp = Toxiproxy.start(); UpstreamServer sim = UpstreamServer.start(UpstreamConfig.local())) {
            int proxyPort = Toxiproxy.freePort();
            URI simUri = URI.create(sim.url());
            Map<String, String> urls = new HashMap<>();
            for (String e : ENDPOINTS) {
                int port = Toxiproxy.freePort();
                tp.proxy("endpoint-" + e, port, simUri.getHost() + ":" + simUri.getPort());
                urls.put(e, "http://127.0.0.1:" + port + "/" + e);
            }
            String bootstrap = "127.0.0.1:" + proxyPort;
            try (Broker broker = new Broker(startBroker(dir, tp, bootstrap, proxyPort))) {
                out.println("toxiproxy: broker " + broker.current.bootstrap() + " behind " + bootstrap + " (advertised), weft-upstream "
                        + sim.url() + " behind " + urls.values());
                out.flush();
                List<RunResult> results = new ArrayList<>();
                for (int i = 0; i < o.runs(); i++) {
                    RunResult r = oneRun(o, o.seed() + i, i, broker, bootstrap, tp, sim, urls, out);
                    results.add(r);
                    print(r, out);
                }
                Summary s = new Summary(results);
                out.println();
                out.println(String.format(Locale.ROOT, "%d runs: %d lost, %d commits before settling", results.size(),
                        s.lost(), s.earlyCommits()));
                out.println("| fault | times applied | duplicates | per application |");
                out.println("|---|---:|---:|---:|");
                s.duplicatesPerFault().forEach((f, n) -> out.println(String.format(Locale.ROOT, "| %s | %d | %d | %.1f |",
                        f, n[0], n[1], n[0] == 0 ? 0.0 : (double) n[1] / n[0])));
                out.flush();
                return s;
            }
        } finally {
            try (var paths = Files.walk(dir)) {
                paths.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            } catch (java.io.IOException e) {
                // a temporary directory: left for the OS
            }
        }
    }

    static void print(RunResult r, PrintWriter out) {
        out.println(String.format(Locale.ROOT, "seed %d: faults %s; records %d, deliveries expected %d: delivered %d, "
                        + "dead-lettered %d, lost %d; duplicates %s; restarts %d (broker %d); survivors took over in %s ms; "
                        + "commits seen %d, before settling %d",
                r.seed(), r.faults(), r.sent(), r.expected(), r.delivered(), r.deadLettered(), r.lost().size(),
                r.duplicates(), r.restarts(), r.brokerRestarts(), r.takeoverMillis(), r.commitsSeen(), r.earlyCommits().size()));
        r.lost().stream().limit(10).forEach(l -> out.println("  LOST " + l));
        r.earlyCommits().stream().limit(10).forEach(l -> out.println("  EARLY COMMIT " + l));
        out.flush();
    }

    /** A record written: where it went and which endpoints it matches. */
    record Sent(int partition, long offset, boolean typeA) {
    }

    /** A committed offset seen at {@code atMillis}, with weft-upstream's webhook-ids at that moment. */
    record Sample(long atMillis, Map<TopicPartition, Long> committed, Set<String> received) {
    }

    @SuppressWarnings("unchecked")
    private static Set<String> received(UpstreamServer sim) {
        Map<String, Object> ids = (Map<String, Object>) sim.stats().snapshot(true).get("webhook_ids");
        return new HashSet<>((Collection<String>) ids.get("values"));
    }

    private static long duplicates(UpstreamServer sim) {
        @SuppressWarnings("unchecked")
        Map<String, Object> ids = (Map<String, Object>) sim.stats().snapshot(false).get("webhook_ids");
        return ((Number) ids.get("requests")).longValue() - ((Number) ids.get("distinct")).longValue();
    }

    /**
     * The broker behind proxy "kafka", which it advertises: its readiness probe already goes through the proxy, so the
     * proxy exists before it starts. A port found free can be taken by another socket before the broker binds it (as
     * can the controller's port): then the proxy moves to new ports in a fresh directory, three tries in all.
     */
    static KafkaBroker startBroker(Path dir, Toxiproxy tp, String bootstrap, int proxyPort) throws Exception {
        IOException first = null;
        for (int attempt = 1; attempt <= 3; attempt++) {
            int brokerPort = Toxiproxy.freePort();
            tp.proxy("kafka", proxyPort, "127.0.0.1:" + brokerPort);
            try {
                return KafkaBroker.start(dir.resolve("try-" + attempt), new InetSocketAddress("127.0.0.1", brokerPort),
                        Map.of("advertised.listeners", "PLAINTEXT://" + bootstrap));
            } catch (IOException e) {
                tp.removeProxy("kafka");
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        throw first;
    }

    /**
     * The run's broker, which BROKER_KILL_9 replaces: kill -9, then a new one on the same directory and port (so the
     * proxy in front of it and the address it advertises stay true).
     */
    static final class Broker implements AutoCloseable {
        KafkaBroker current;

        Broker(KafkaBroker first) {
            this.current = first;
        }

        void killAndRestart(Duration down) throws Exception {
            current.kill();
            Thread.sleep(down.toMillis());
            IOException first = null;
            for (int attempt = 1; attempt <= 3; attempt++) { // the port may still be held a moment after the kill
                try {
                    current = current.restart();
                    return;
                } catch (IOException e) {
                    if (first == null) {
                        first = e;
                    } else {
                        first.addSuppressed(e);
                    }
                    Thread.sleep(1000);
                }
            }
            throw first;
        }

        @Override
        public void close() {
            current.close();
        }
    }

    private static RunResult oneRun(Options o, long seed, int index, Broker broker, String bootstrap, Toxiproxy tp,
                                    UpstreamServer sim, Map<String, String> urls, PrintWriter out) throws Exception {
        String topic = "chaos-" + index + "-" + seed;
        String group = "chaos-" + index;
        broker.current.createTopic(topic, PARTITIONS);
        sim.stats().reset();
        tp.reset();
        Path cfg = Files.createTempFile("weft-chaos", ".yaml");
        Files.writeString(cfg, "source: { bootstrap: \"" + bootstrap + "\", topics: [" + topic + "], group: " + group
                + " }\ndefaults: { timeout: 1s, retry: [1s], allow_private: true }\nendpoints:\n"
                + "  - { id: a, url: \"" + urls.get("a") + "\" }\n"
                + "  - { id: b, url: \"" + urls.get("b") + "\", match: { type: [a] } }\n");
        out.println("seed " + seed + ": run " + (index + 1) + " of " + o.runs() + " (topic " + topic + "), faults " + plan(o, seed));
        out.flush();
        List<Sent> sent = new CopyOnWriteArrayList<>();
        List<Sample> samples = new CopyOnWriteArrayList<>();
        List<Applied> applied = new ArrayList<>();
        Map<Fault, Long> dups = new EnumMap<>(Fault.class);
        int restarts = 0;
        int brokerRestarts = 0;
        List<Long> takeovers = new ArrayList<>();
        List<ChildProcess> dispatchers = new ArrayList<>();
        for (int i = 0; i < o.instances(); i++) {
            dispatchers.add(dispatcher(cfg));
        }
        Thread monitor = null;
        Thread writer = null;
        try {
            Duration writing = o.faultFor().plus(o.gap()).multipliedBy(o.faults());
            writer = writer(bootstrap, topic, o.records(), writing, sent);
            monitor = monitor(bootstrap, group, topic, sim, samples);
            Fault current = null;
            long dupsAt = duplicates(sim);
            for (Applied step : plan(o, seed)) {
                Fault fault = step.fault();
                long now = duplicates(sim);
                if (current != null) {
                    dups.merge(current, now - dupsAt, Long::sum);
                }
                dupsAt = now;
                current = fault;
                if (fault == Fault.KILL_9) {
                    for (ChildProcess d : dispatchers) {
                        d.kill();
                    }
                    for (int i = 0; i < dispatchers.size(); i++) {
                        dispatchers.set(i, dispatcher(cfg));
                        restarts++;
                    }
                    Thread.sleep(o.faultFor().toMillis());
                } else if (fault == Fault.KILL_9_ONE) {
                    int victim = step.attributes().get("instance").intValue();
                    dispatchers.get(victim).kill();
                    // the survivors must take the dead instance's partitions over (its session expires) before a new
                    // instance joins, or the fault would only be a restart
                    takeovers.add(awaitAssigned(bootstrap, group, topic, dispatchers.size() - 1, TAKEOVER_MAX));
                    dispatchers.set(victim, dispatcher(cfg));
                    restarts++;
                } else if (fault == Fault.BROKER_KILL_9) {
                    broker.killAndRestart(o.faultFor());
                    brokerRestarts++;
                } else {
                    tp.addToxic(step.proxy(), "chaos", fault.toxicType(), step.stream(), step.attributes());
                    Thread.sleep(o.faultFor().toMillis());
                    tp.reset();
                }
                applied.add(step);
                Thread.sleep(o.gap().toMillis());
            }
            writer.join(o.settle().toMillis());
            // settle: until every expected delivery is at weft-upstream or dead-lettered, and the offsets are committed
            Map<String, Long> parkedAt = new HashMap<>();
            Map<String, String> deadLetters = new HashMap<>();
            List<String> missing;
            try (KafkaConsumer<byte[], byte[]> parking = parkingReader(bootstrap, group)) {
                long end = System.nanoTime() + o.settle().toNanos();
                while (true) {
                    readParking(parking, parkedAt, deadLetters);
                    Set<String> got = received(sim);
                    missing = new ArrayList<>();
                    for (Sent s : sent) {
                        for (String e : matching(s)) {
                            String id = WebhookSigning.webhookId(topic, s.partition(), s.offset(), e);
                            if (!got.contains(id) && !deadLetters.containsKey(id)) {
                                missing.add(e + " " + topic + "/" + s.partition() + "/" + s.offset() + " " + id);
                            }
                        }
                    }
                    boolean committed = committedAll(samples, sent);
                    if ((missing.isEmpty() && committed && !writer.isAlive()) || System.nanoTime() > end) {
                        break;
                    }
                    Thread.sleep(200);
                }
            }
            if (current != null) {
                dups.merge(current, duplicates(sim) - dupsAt, Long::sum);
            }
            monitor.interrupt();
            monitor.join(10_000);
            Set<String> got = received(sim);
            int expected = 0;
            int delivered = 0;
            int dead = 0;
            for (Sent s : sent) {
                for (String e : matching(s)) {
                    expected++;
                    String id = WebhookSigning.webhookId(topic, s.partition(), s.offset(), e);
                    if (got.contains(id)) {
                        delivered++;
                    } else if (deadLetters.containsKey(id)) {
                        dead++;
                    }
                }
            }
            List<String> early = earlyCommits(topic, sent, samples, parkedAt);
            if (sent.size() < o.records()) {
                missing.add(0, "the writer had " + sent.size() + " of " + o.records() + " records acknowledged");
            }
            return new RunResult(seed, applied, sent.size(), expected, delivered, dead, missing, dups, early, samples.size(), restarts,
                    brokerRestarts, takeovers);
        } finally {
            if (writer != null) {
                writer.interrupt();
            }
            if (monitor != null) {
                monitor.interrupt();
            }
            tp.reset();
            dispatchers.forEach(ChildProcess::close);
            Files.deleteIfExists(cfg);
        }
    }

    private static List<String> matching(Sent s) {
        return s.typeA() ? ENDPOINTS : List.of("a");
    }

    /** A fault's toxic attributes (or KILL_9_ONE's instance, of {@code instances}), drawn from {@code rnd}. */
    static Map<String, Long> attributes(Fault f, int instances, Random rnd) {
        return switch (f) {
            case BROKER_LATENCY, ENDPOINT_LATENCY -> Map.of("latency", 100L + rnd.nextInt(1900), "jitter", 100L);
            case BROKER_RESET_PEER, ENDPOINT_RESET_PEER -> Map.of("timeout", (long) rnd.nextInt(500));
            case BROKER_TIMEOUT, ENDPOINT_TIMEOUT -> Map.of("timeout", (long) rnd.nextInt(2000));
            case BROKER_BANDWIDTH, ENDPOINT_BANDWIDTH -> Map.of("rate", 1L + rnd.nextInt(20));
            case BROKER_SLICER, ENDPOINT_SLICER -> {
                long avg = 1 + rnd.nextInt(64);
                yield Map.of("average_size", avg, "size_variation", avg / 2, "delay", 10L + rnd.nextInt(1000));
            }
            case KILL_9, BROKER_KILL_9 -> Map.of();
            case KILL_9_ONE -> Map.of("instance", (long) rnd.nextInt(instances));
        };
    }

    /** How long KILL_9_ONE waits for the survivors to own every partition (the session timeout is 10 s). */
    static final Duration TAKEOVER_MAX = Duration.ofSeconds(45);

    /**
     * Milliseconds until the group has {@code members} members owning all {@value #PARTITIONS} partitions of
     * {@code topic}, or -1 when it had not after {@code max}.
     */
    private static long awaitAssigned(String bootstrap, String group, String topic, int members, Duration max)
            throws InterruptedException {
        long start = System.nanoTime();
        try (Admin a = admin(bootstrap)) {
            while (System.nanoTime() - start < max.toNanos()) {
                try {
                    ConsumerGroupDescription d = a.describeConsumerGroups(List.of(group)).describedGroups().get(group)
                            .get(5, TimeUnit.SECONDS);
                    long owned = d.members().stream().flatMap(m -> m.assignment().topicPartitions().stream())
                            .filter(tp -> tp.topic().equals(topic)).distinct().count();
                    if (d.members().size() == members && owned == PARTITIONS) {
                        return Duration.ofNanos(System.nanoTime() - start).toMillis();
                    }
                } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                    // the coordinator is rebalancing or busy: ask again
                }
                Thread.sleep(200);
            }
        }
        return -1;
    }

    private static ChildProcess dispatcher(Path cfg) throws Exception {
        return ChildProcess.startJvm(List.of("-Xmx384m", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn"),
                DispatchService.class, List.of(cfg.toString(), "127.0.0.1:0"));
    }

    /** Writes {@code n} records evenly over {@code over}, half with header {@code type: a}; records each acknowledged one. */
    private static Thread writer(String bootstrap, String topic, int n, Duration over, List<Sent> sent) {
        return Thread.ofPlatform().daemon().name("chaos-writer").start(() -> {
            try (KafkaProducer<byte[], byte[]> p = new KafkaProducer<>(Map.of(
                    ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap, ProducerConfig.ACKS_CONFIG, "all",
                    ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true,
                    ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 120_000, ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000,
                    ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class,
                    ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class))) {
                long start = System.nanoTime();
                List<java.util.concurrent.Future<org.apache.kafka.clients.producer.RecordMetadata>> fs = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    long due = start + over.toNanos() * i / n;
                    long wait = due - System.nanoTime();
                    if (wait > 0) {
                        TimeUnit.NANOSECONDS.sleep(wait);
                    }
                    boolean a = i % 2 == 0;
                    ProducerRecord<byte[], byte[]> r = new ProducerRecord<>(topic, ("k" + i).getBytes(StandardCharsets.UTF_8),
                            ("{\"n\":" + i + "}").getBytes(StandardCharsets.UTF_8));
                    r.headers().add("type", (a ? "a" : "z").getBytes(StandardCharsets.UTF_8));
                    p.send(r, (m, e) -> {
                        if (e == null) {
                            sent.add(new Sent(m.partition(), m.offset(), a));
                        }
                    });
                }
                p.flush();
            } catch (InterruptedException | org.apache.kafka.common.errors.InterruptException e) {
                // the run is over
            }
        });
    }

    private static Admin admin(String bootstrap) {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 3000, AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 5000));
    }

    /** Polls the group's committed offsets of {@code topic}; keeps a sample each time one advanced. */
    private static Thread monitor(String bootstrap, String group, String topic, UpstreamServer sim, List<Sample> samples) {
        return Thread.ofPlatform().daemon().name("chaos-monitor").start(() -> {
            Map<TopicPartition, Long> last = new HashMap<>();
            try (Admin a = admin(bootstrap)) {
                while (!Thread.currentThread().isInterrupted()) {
                    try {
                        Map<TopicPartition, OffsetAndMetadata> c = a.listConsumerGroupOffsets(group)
                                .partitionsToOffsetAndMetadata().get(5, TimeUnit.SECONDS);
                        Set<String> got = received(sim); // after the offsets were read: what had arrived by then
                        long at = System.currentTimeMillis();
                        Map<TopicPartition, Long> now = new HashMap<>();
                        c.forEach((tp, om) -> {
                            if (om != null && tp.topic().equals(topic)) {
                                now.put(tp, om.offset());
                            }
                        });
                        if (!now.equals(last)) {
                            samples.add(new Sample(at, now, got));
                            last = now;
                        }
                    } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                        // the broker behind a toxic: try again
                    }
                    Thread.sleep(SAMPLE_MS);
                }
            } catch (InterruptedException e) {
                // the run is over
            }
        });
    }

    private static boolean committedAll(List<Sample> samples, List<Sent> sent) {
        if (samples.isEmpty()) {
            return false;
        }
        Map<Integer, Long> need = new HashMap<>();
        for (Sent s : sent) {
            need.merge(s.partition(), s.offset() + 1, Math::max);
        }
        Map<TopicPartition, Long> c = samples.getLast().committed();
        return need.entrySet().stream().allMatch(e -> c.entrySet().stream()
                .anyMatch(x -> x.getKey().partition() == e.getKey() && x.getValue() >= e.getValue()));
    }

    private static KafkaConsumer<byte[], byte[]> parkingReader(String bootstrap, String group) {
        KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ConsumerConfig.GROUP_ID_CONFIG, group + "-chaos-reader",
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                ConsumerConfig.METADATA_MAX_AGE_CONFIG, 1000,
                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class,
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class));
        c.subscribe(Pattern.compile(Pattern.quote(group) + "\\.(retry\\..*|wait\\..*|dlq)"));
        return c;
    }

    private static void readParking(KafkaConsumer<byte[], byte[]> c, Map<String, Long> parkedAt, Map<String, String> dead) {
        for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(300))) {
            String id = header(r, "webhook-id");
            if (id == null) {
                continue;
            }
            parkedAt.merge(id, r.timestamp(), Math::min);
            String reason = header(r, "weft-reason");
            if (r.topic().endsWith(".dlq") && reason != null && !reason.isBlank()) { // a dead letter without its reason: lost
                dead.put(id, reason);
            }
        }
    }

    private static String header(ConsumerRecord<byte[], byte[]> r, String name) {
        var h = r.headers().lastHeader(name);
        return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
    }

    /**
     * For each committed offset seen, the records below it that it committed first: each matching endpoint's
     * webhook-id must have been at weft-upstream then, or parked or dead-lettered (producer timestamp) by then.
     */
    static List<String> earlyCommits(String topic, List<Sent> sent, List<Sample> samples, Map<String, Long> parkedAt) {
        List<String> out = new ArrayList<>();
        Map<Integer, Long> prev = new HashMap<>();
        Map<Integer, List<Sent>> byPartition = new HashMap<>();
        sent.forEach(s -> byPartition.computeIfAbsent(s.partition(), p -> new ArrayList<>()).add(s));
        for (Sample sm : samples) {
            for (var e : sm.committed().entrySet()) {
                int p = e.getKey().partition();
                long from = prev.getOrDefault(p, 0L);
                long to = e.getValue();
                for (Sent s : byPartition.getOrDefault(p, List.of())) {
                    if (s.offset() < from || s.offset() >= to) {
                        continue;
                    }
                    for (String ep : matching(s)) {
                        String id = WebhookSigning.webhookId(topic, p, s.offset(), ep);
                        Long parked = parkedAt.get(id);
                        if (!sm.received().contains(id) && (parked == null || parked > sm.atMillis())) {
                            out.add(topic + "-" + p + " offset " + to + " committed at " + sm.atMillis() + " before "
                                    + ep + " " + s.offset() + " settled (parked at " + parked + ")");
                        }
                    }
                }
                prev.put(p, Math.max(from, to));
            }
        }
        return out;
    }
}
