package dev.weft.lab;

import dev.weft.client.CallRequest;
import dev.weft.client.CallResult;
import dev.weft.http.Headers;
import dev.weft.client.Transport;
import dev.weft.config.ConfigException;
import dev.weft.core.Durations;
import dev.weft.devtools.ChildProcess;
import dev.weft.devtools.UpstreamProcess;
import dev.weft.gateway.config.GatewayConfigLoader;
import dev.weft.lab.peers.GoPeers;
import dev.weft.legacy.LegacyService;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code weft lab relay}: seed 000's System A ({@link LegacyService}, a fixed pool of 200 request threads, JDK 17
 * code) calling B, C and D three ways, each row a fresh service (and relay) process, models alternating at each
 * latency; backends: weft-upstream in one JVM on 127.0.0.2-4. Load: {@link Bench}, closed loop, then an open-loop row
 * per model at half the knee, in this process.
 * <ul>
 *   <li>{@code direct}: the service as it is: blocking HttpURLConnection calls straight to the backends;</li>
 *   <li>{@code relay-weft}: {@code --mode relay-async} through {@code weft gateway} with {@code proxy:} routes on
 *       loopback ({@code http2: { upgrade: true, max_concurrent_streams: 3N+100 }});</li>
 *   <li>{@code relay-go}: the same through {@code lab/peers/go-relay} (Go's h2c handler and httputil.ReverseProxy).</li>
 * </ul>
 */
public final class RelayLab {
    /** The models, in the order each latency runs them. */
    public static final List<String> MODELS = List.of("direct", "relay-weft", "relay-go");

    /**
     * @param openRate     requests a second of the open-loop rows; 0: half the lowest closed-loop req/s at 0 ms
     *                     (the knee of the slowest model); negative: no open-loop rows
     * @param openDuration measured time of each open-loop row
     */
    public record Options(List<String> models, List<Duration> latencies, int concurrency, Duration warmup,
                          Duration duration, Duration jitWarmup, double openRate, Duration openDuration) {
        /** SETTINGS_MAX_CONCURRENT_STREAMS of both relays: each request in flight is three streams. */
        public int maxStreams() {
            return 3 * concurrency + 100;
        }
    }

    /**
     * What one row measured. {@code relayCpuSeconds} is NaN for {@code direct}; {@code calls} the backend calls the
     * measured requests made (three each).
     */
    public record Row(String model, Duration latency, boolean openLoop, Bench.Result result, double serviceCpuSeconds,
                      double relayCpuSeconds, boolean hop) {
        public Row(String model, Duration latency, boolean openLoop, Bench.Result result, double serviceCpuSeconds,
                   double relayCpuSeconds) {
            this(model, latency, openLoop, result, serviceCpuSeconds, relayCpuSeconds, false);
        }

        /** The backend calls the measured requests made: three per service request, one per hop-row call. */
        public long calls() {
            return (hop ? 1 : 3) * result.requests();
        }

        /** The relay's CPU milliseconds per 1,000 backend calls; NaN without a relay. */
        public double relayCpuMsPer1000Calls() {
            return calls() == 0 ? Double.NaN : relayCpuSeconds * 1000.0 / (calls() / 1000.0);
        }
    }

    /** The rows, and the models that could not run with the reason (a lab that cannot run a model says why). */
    public record Report(List<Row> rows, Map<String, String> failed, double openRate) {
    }

    private RelayLab() {
    }

    public static String describe(String model) {
        return switch (model) {
            case "direct" -> "--mode direct: blocking HttpURLConnection calls straight to B, C, D (pools of 200)";
            case "relay-weft" -> "--mode relay-async through weft gateway with proxy: routes on loopback "
                    + "(HTTP/2 by Upgrade: h2c, one connection)";
            case "relay-go" -> "--mode relay-async through lab/peers/go-relay (x/net/http2/h2c + httputil.ReverseProxy, "
                    + "one connection)";
            default -> throw new IllegalArgumentException("unknown model '" + model + "'; known: " + String.join(", ", MODELS));
        };
    }

    /**
     * Inbound connections of the Weft relay: the service's one, and the hop rows' (an open loop of single calls at a
     * few milliseconds holds a few dozen). Not one per stream: at 2,000 in flight and more, inbound bounds of
     * 3N+100 left the three backend pools (sized to the 20,000 descriptors left) fewer connections than calls
     * in flight, and the 1 s rows queued for them (5,000 in flight: 1,702 req/s, p50 3.2 s).
     */
    static final int RELAY_INBOUND_CONNECTIONS = 1_100;

    /** The config of the Weft relay: one {@code proxy:} route per backend, HTTP/2 with Upgrade: h2c. */
    static String weftRelayConfig(List<String> b, int concurrency, int maxStreams) {
        StringBuilder sb = new StringBuilder(SystemALab.measuredGateway(3 * concurrency + 100,
                RELAY_INBOUND_CONNECTIONS));
        sb.append("http2: { upgrade: true, max_concurrent_streams: ").append(maxStreams).append(" }\n");
        sb.append("routes:\n");
        String[] names = {"b", "c", "d"};
        for (int i = 0; i < 3; i++) {
            sb.append("  - prefix: /").append(names[i]).append("/\n    proxy: \"").append(b.get(i)).append('/')
                    .append(names[i]).append("/\"\n    timeout: 50s\n");
        }
        return sb.toString();
    }

    /**
     * Null when this build's gateway takes the relay config, else what is missing: the {@code proxy:} routes of
     * issue 49 item 3 (branch {@code proxy}) are not in every build.
     */
    static String weftRelayMissing(Path config) {
        try {
            GatewayConfigLoader.load(config);
            return null;
        } catch (ConfigException e) {
            return "this build's weft gateway does not take the relay's config (proxy: routes, issue 49 item 3, are "
                    + "not in it: merge branch 'proxy'); the first problem: "
                    + e.getMessage().strip().lines().findFirst().orElse("");
        }
    }

    /** The running relay of a row (null for direct) and the service in front of it. */
    record Stack(ChildProcess relay, ChildProcess service) implements AutoCloseable {
        @Override
        public void close() {
            service.close();
            if (relay != null) {
                relay.close();
            }
        }
    }

    static Stack start(String model, List<String> b, Path weftConfig, int maxStreams) throws Exception {
        List<String> args = new ArrayList<>(List.of("--backends", String.join(",", b)));
        ChildProcess relay = startRelay(model, b, weftConfig, maxStreams);
        if (relay != null) {
            args.addAll(List.of("--mode", "relay-async", "--relay", relay.ready()));
        }
        try {
            return new Stack(relay, ChildProcess.startJvm(SystemALab.serviceJvmFlags(), LegacyService.class, args));
        } catch (IOException e) {
            if (relay != null) {
                relay.close();
            }
            throw new IOException(e.getMessage() + " (its error is above)", e);
        }
    }

    /**
     * JVM flags of the Weft relay: WEFT_LAB_RELAY_OPTS, else the service's ({@link SystemALab#serviceJvmFlags}), so
     * that a flag of the relay's (its collector) can be measured with the service as it was.
     */
    static List<String> relayJvmFlags() {
        String env = System.getenv("WEFT_LAB_RELAY_OPTS");
        return env != null && !env.isBlank() ? List.of(env.strip().split("\\s+")) : SystemALab.serviceJvmFlags();
    }

    /** The relay of {@code model} alone (null for direct); it prints its base URL (the routes are /b/, /c/, /d/). */
    static ChildProcess startRelay(String model, List<String> b, Path weftConfig, int maxStreams) throws Exception {
        return switch (model) {
            case "direct" -> null;
            case "relay-weft" -> ChildProcess.startJvm(relayJvmFlags(), GatewayProcess.class,
                    List.of(weftConfig.toString(), "virtual"));
            case "relay-go" -> ChildProcess.start(List.of(GoPeers.build("go-relay").toString(), String.valueOf(maxStreams),
                    "/b/=" + b.get(0) + "/b/", "/c/=" + b.get(1) + "/c/", "/d/=" + b.get(2) + "/d/"), "go-relay");
            default -> throw new IllegalArgumentException(describe(model));
        };
    }

    /** Runs every latency's models in turn, then the open-loop rows at 0 ms, then the hop rows. */
    public static Report run(Options o, PrintWriter out, PrintWriter progress, boolean live) throws Exception {
        o.models().forEach(RelayLab::describe);
        List<Row> rows = new ArrayList<>();
        Map<String, String> failed = new LinkedHashMap<>();
        double openRate = o.openRate();
        try (UpstreamProcess backends = UpstreamProcess.start(List.of(new InetSocketAddress("127.0.0.2", 0),
                new InetSocketAddress("127.0.0.3", 0), new InetSocketAddress("127.0.0.4", 0)))) {
            List<String> b = backends.urls();
            out.println("backends: B " + b.get(0) + ", C " + b.get(1) + ", D " + b.get(2) + " (weft-upstream, one JVM)");
            out.println("service JVM: " + String.join(" ", SystemALab.serviceJvmFlags()) + "; Weft relay JVM: "
                    + String.join(" ", relayJvmFlags()) + "; relays' max_concurrent_streams " + o.maxStreams());
            for (String m : o.models()) {
                out.println("  " + m + ": " + describe(m));
            }
            out.println();
            out.flush();
            Path config = Files.createTempFile("weft-lab-relay", ".yaml");
            try {
                Files.writeString(config, weftRelayConfig(b, o.concurrency(), o.maxStreams()));
                if (o.models().contains("relay-weft")) {
                    String missing = weftRelayMissing(config);
                    if (missing != null) {
                        failed.put("relay-weft", missing);
                        progress.println("lab relay: relay-weft FAILED: " + missing);
                        progress.flush();
                    }
                }
                for (Duration latency : o.latencies()) {
                    for (String model : o.models()) {
                        if (!failed.containsKey(model)) {
                            measure(o, model, latency, 0, b, config, progress, live, rows, failed);
                        }
                    }
                }
                if (openRate == 0) {
                    openRate = rows.stream().filter(r -> r.latency().isZero()).mapToDouble(r -> r.result().throughput())
                            .min().orElse(-1) / 2;
                    if (openRate <= 0) {
                        progress.println("lab relay: no open-loop rows: no closed-loop row at 0 ms gave a knee "
                                + "(add 0ms to --latency or give --open-rate)");
                    }
                }
                if (openRate > 0) {
                    for (String model : o.models()) {
                        if (!failed.containsKey(model)) {
                            measure(o, model, Duration.ZERO, openRate, b, config, progress, live, rows, failed);
                        }
                    }
                    for (String model : o.models()) {
                        if (!failed.containsKey(model)) {
                            measureHop(o, model, 3 * openRate, b, config, progress, live, rows, failed);
                        }
                    }
                }
            } finally {
                Files.deleteIfExists(config);
            }
        }
        return new Report(rows, failed, openRate);
    }

    private static void measure(Options o, String model, Duration latency, double rate, List<String> b, Path config,
                                PrintWriter progress, boolean live, List<Row> rows, Map<String, String> failed)
            throws Exception {
        Stack s;
        try {
            s = start(model, b, config, o.maxStreams());
        } catch (GoPeers.Unavailable | IOException e) {
            failed(model, e, failed, progress);
            return;
        }
        try (s; Transport client = LoadClient.transport(o.concurrency())) {
            String base = s.service().ready();
            CallResult first = client.call(CallRequest.get(base + "/a/1?latency=0ms"), Duration.ofSeconds(30));
            if (!first.ok()) {
                failed.put(model, "the service failed its first request: " + first);
                return;
            }
            String warm = base + "/a/1?latency=0ms";
            Bench.run(new Bench.Options(List.of(warm), "GET", Headers.EMPTY, null, 0, Math.min(200, o.concurrency()),
                    Duration.ZERO, o.jitWarmup(), Duration.ofSeconds(60)), sender(client, warm), null, false);
            String url = base + "/a/1?latency=" + Durations.format(latency);
            // the warm-up at full load apart, so that the CPU measured is that of the measured requests' calls
            Bench.run(new Bench.Options(List.of(url), "GET", Headers.EMPTY, null, rate, o.concurrency(), Duration.ZERO,
                    o.warmup(), Duration.ofSeconds(60)), sender(client, url), null, false);
            progress.printf(Locale.ROOT, "lab relay: %s at %s, %s, %s ...%n", model, Durations.format(latency),
                    rate > 0 ? String.format(Locale.ROOT, "open loop %.0f req/s", rate) : o.concurrency() + " concurrent",
                    Durations.format(rate > 0 ? o.openDuration() : o.duration()));
            progress.flush();
            Duration svc0 = s.service().cpu();
            Duration relay0 = s.relay() == null ? Duration.ZERO : s.relay().cpu();
            Bench.Result r = Bench.run(new Bench.Options(List.of(url), "GET", Headers.EMPTY, null, rate, o.concurrency(),
                    Duration.ZERO, rate > 0 ? o.openDuration() : o.duration(), Duration.ofSeconds(60)),
                    sender(client, url), progress, live);
            Row row = new Row(model, latency, rate > 0, r, s.service().cpu().minus(svc0).toMillis() / 1000.0,
                    s.relay() == null ? Double.NaN : s.relay().cpu().minus(relay0).toMillis() / 1000.0);
            for (ChildProcess p : s.relay() == null ? List.of(s.service()) : List.of(s.service(), s.relay())) {
                String died = p.exited();
                if (died != null) {
                    throw new IOException(model + ": " + died + " during the run");
                }
            }
            rows.add(row);
            progress.printf(Locale.ROOT, "lab relay: %s at %s: %.0f req/s, p50 %.1f ms, p99 %.1f ms, %d errors%n", model,
                    Durations.format(latency), r.throughput(), r.percentileMillis(50), r.percentileMillis(99), r.errors());
            progress.flush();
        }
    }

    /**
     * A hop row: one call per request, without the service, so that only the hop differs between rows: the same
     * client (Weft's, the lab's load client), the same protocol (HTTP/1.1, which both relays also serve) and the same
     * backends, B, C and D in turn, straight ({@code direct}) or through the relay's /b/, /c/, /d/. Open loop at
     * {@code rate} calls a second (three times the request-level open rows' rate: the relay carries the calls a second
     * it carries there), 0 ms backends. What HTTP/2 on one connection adds besides is in the request-level open rows,
     * where the service's JDK HttpClient makes its calls over it.
     */
    private static void measureHop(Options o, String model, double rate, List<String> b, Path config,
                                   PrintWriter progress, boolean live, List<Row> rows, Map<String, String> failed)
            throws Exception {
        ChildProcess relay;
        try {
            relay = startRelay(model, b, config, o.maxStreams());
        } catch (GoPeers.Unavailable | IOException e) {
            failed(model, e, failed, progress);
            return;
        }
        String[] names = {"b", "c", "d"};
        List<String> urls = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            urls.add((relay == null ? b.get(i) : relay.ready()) + "/" + names[i] + "/1?latency=0ms");
        }
        try (Transport client = LoadClient.transport(o.concurrency())) {
            Bench.Sender sender = Bench.sender(client, urls.stream().map(CallRequest::get).toList(), Duration.ofSeconds(60));
            String first = sender.send(0, false);
            if (first != null) {
                failed.put(model, "the hop row's first call failed: " + first);
                return;
            }
            Bench.run(new Bench.Options(urls, "GET", Headers.EMPTY, null, rate, o.concurrency(), Duration.ZERO,
                    o.jitWarmup(), Duration.ofSeconds(60)), sender, null, false);
            progress.printf(Locale.ROOT, "lab relay: hop %s, open loop %.0f calls/s, %s ...%n", model, rate,
                    Durations.format(o.openDuration()));
            progress.flush();
            Duration relay0 = relay == null ? Duration.ZERO : relay.cpu();
            Bench.Result r = Bench.run(new Bench.Options(urls, "GET", Headers.EMPTY, null, rate, o.concurrency(),
                    Duration.ZERO, o.openDuration(), Duration.ofSeconds(60)), sender, progress, live);
            if (relay != null && relay.exited() != null) {
                throw new IOException(model + ": " + relay.exited() + " during the hop row");
            }
            rows.add(new Row(model, Duration.ZERO, true, r, Double.NaN,
                    relay == null ? Double.NaN : relay.cpu().minus(relay0).toMillis() / 1000.0, true));
            progress.printf(Locale.ROOT, "lab relay: hop %s: %.0f calls/s, p50 %.2f ms, p99 %.2f ms, %d errors%n", model,
                    r.throughput(), r.percentileMillis(50), r.percentileMillis(99), r.errors());
            progress.flush();
        } finally {
            if (relay != null) {
                relay.close();
            }
        }
    }

    /** A model that could not start: its reason kept for the report and said at once. */
    private static void failed(String model, Exception why, Map<String, String> failed, PrintWriter progress) {
        failed.put(model, why.getMessage());
        progress.println("lab relay: " + model + " FAILED: " + why.getMessage());
        progress.flush();
    }

    private static Bench.Sender sender(Transport client, String url) {
        return Bench.sender(client, List.of(CallRequest.get(url)), Duration.ofSeconds(60));
    }

    /** Every row, then each model's flatness, Weft against Go, and what a relay adds in the open loop. */
    public static String table(Report report, Options o) {
        StringBuilder sb = new StringBuilder();
        List<String> notes = new ArrayList<>();
        sb.append("| loop | backend latency | model | req/s | p50 ms | p99 ms | errors | service CPU s | relay CPU s "
                + "| relay CPU ms / 1,000 calls |\n|---|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
        for (Row r : report.rows()) {
            Bench.Result x = r.result();
            sb.append(String.format(Locale.ROOT, "| %s | %s | %s | %.0f | %.2f | %.2f | %d%s | %s | %s | %s |%n",
                    r.hop() ? String.format(Locale.ROOT, "hop, open %.0f calls/s", x.options().rate())
                            : r.openLoop() ? String.format(Locale.ROOT, "open %.0f/s", x.options().rate()) : "closed "
                            + o.concurrency(), Durations.format(r.latency()), r.model(), x.throughput(),
                    x.percentileMillis(50), x.percentileMillis(99), x.errors(),
                    x.errors() > 0 ? " " + x.errorsByReason() : "",
                    Double.isNaN(r.serviceCpuSeconds()) ? "-" : String.format(Locale.ROOT, "%.1f", r.serviceCpuSeconds()),
                    Double.isNaN(r.relayCpuSeconds()) ? "-" : String.format(Locale.ROOT, "%.2f", r.relayCpuSeconds()),
                    Double.isNaN(r.relayCpuSeconds()) ? "-" : String.format(Locale.ROOT, "%.1f", r.relayCpuMsPer1000Calls())));
            String note = x.generatorNote();
            if (note != null) {
                notes.add("- " + r.model() + ", open loop: " + note);
            }
        }
        if (!notes.isEmpty()) {
            sb.append('\n').append(String.join("\n", notes)).append('\n');
        }
        Map<String, Map<Duration, Double>> closed = new LinkedHashMap<>();
        Map<String, Row> open = new LinkedHashMap<>();
        Map<String, Row> hops = new LinkedHashMap<>();
        for (Row r : report.rows()) {
            if (r.hop()) {
                hops.put(r.model(), r);
            } else if (r.openLoop()) {
                open.put(r.model(), r);
            } else {
                closed.computeIfAbsent(r.model(), k -> new LinkedHashMap<>()).put(r.latency(), r.result().throughput());
            }
        }
        if (!closed.isEmpty()) {
            sb.append("\nClosed loop, each model's req/s against its own at the first latency (flat is the seed's claim; "
                    + "Little's bound at L is ").append(o.concurrency()).append("/L):\n\n");
            closed.forEach((model, byLatency) -> {
                double first = byLatency.values().iterator().next();
                List<String> parts = new ArrayList<>();
                byLatency.forEach((l, t) -> parts.add(Durations.format(l) + " " + ratio(t, first)));
                sb.append("- ").append(model).append(": ").append(String.join(", ", parts)).append('\n');
            });
            Map<Duration, Double> weft = closed.get("relay-weft");
            Map<Duration, Double> go = closed.get("relay-go");
            Map<Duration, Double> direct = closed.get("direct");
            if (weft != null && go != null) {
                sb.append("- relay-weft / relay-go: ").append(ratios(weft, go)).append('\n');
            }
            for (String m : List.of("relay-weft", "relay-go")) {
                if (closed.containsKey(m) && direct != null) {
                    sb.append("- ").append(m).append(" / direct: ").append(ratios(closed.get(m), direct)).append('\n');
                }
            }
        }
        Row base = open.get("direct");
        if (base != null && open.size() > 1) {
            sb.append(String.format(Locale.ROOT, "%nOpen loop at %.0f req/s, 0 ms backends: what the relay adds to a "
                    + "request (three calls through it) against direct:%n%n", report.openRate()));
            open.forEach((m, r) -> {
                if (!m.equals("direct")) {
                    sb.append(String.format(Locale.ROOT, "- %s: p50 %+.2f ms, p99 %+.2f ms%n", m,
                            r.result().percentileMillis(50) - base.result().percentileMillis(50),
                            r.result().percentileMillis(99) - base.result().percentileMillis(99)));
                }
            });
        }
        Row hopBase = hops.get("direct");
        if (hopBase != null && hops.size() > 1) {
            sb.append(String.format(Locale.ROOT, "%nOne hop alone, open loop at %.0f calls/s, 0 ms backends, the same client "
                    + "and protocol both ways (Weft's, HTTP/1.1, straight to B, C, D or through the relay): what the hop "
                    + "adds to a call:%n%n", hopBase.result().options().rate()));
            hops.forEach((m, r) -> {
                if (!m.equals("direct")) {
                    sb.append(String.format(Locale.ROOT, "- %s: p50 %+.2f ms, p99 %+.2f ms%n", m,
                            r.result().percentileMillis(50) - hopBase.result().percentileMillis(50),
                            r.result().percentileMillis(99) - hopBase.result().percentileMillis(99)));
                }
            });
        }
        report.failed().forEach((m, why) -> sb.append("\nFAILED ").append(m).append(": ").append(why).append('\n'));
        return sb.toString();
    }

    private static String ratios(Map<Duration, Double> a, Map<Duration, Double> b) {
        List<String> parts = new ArrayList<>();
        a.forEach((l, t) -> {
            Double d = b.get(l);
            if (d != null) {
                parts.add(Durations.format(l) + " " + ratio(t, d));
            }
        });
        return String.join(", ", parts);
    }

    private static String ratio(double a, double b) {
        return b > 0 ? String.format(Locale.ROOT, "%.2fx", a / b) : "-";
    }
}
