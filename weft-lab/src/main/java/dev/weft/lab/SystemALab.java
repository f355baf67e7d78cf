package dev.weft.lab;

import dev.weft.lab.peers.AsyncPeer;
import dev.weft.json.Json;
import dev.weft.lab.peers.GoPeers;
import dev.weft.devtools.ChildProcess;

import dev.weft.core.Durations;
import dev.weft.client.CallRequest;
import dev.weft.client.CallResult;
import dev.weft.http.Headers;
import dev.weft.client.Transport;
import dev.weft.devtools.UpstreamProcess;

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
import java.util.function.Consumer;

/**
 * {@code weft lab system-a}: seed 000's System A. Backends B, C and D (weft-upstream, one JVM, listening on
 * 127.0.0.2, .3 and .4) answer after latency L; a service answers each request by calling B, C and D in
 * parallel and combining the three bodies; closed-loop load from {@link Bench} in this process. Each
 * model is a service in a process of its own:
 * <ul>
 *   <li>{@code weft}: the gateway with {@code --executor virtual};</li>
 *   <li>{@code pool-200}, {@code pool-2000}: the same gateway and route with {@code --executor
 *       platform:200 / platform:2000}, the seed's design;</li>
 *   <li>{@code async}: futures and callbacks on Vert.x 5 (Netty), {@link AsyncPeer};</li>
 *   <li>{@code go}: goroutines and net/http, {@code lab/peers/go}, built with the machine's Go (skipped
 *       with a note where there is none).</li>
 * </ul>
 * Every model must answer the same combined body before it is measured.
 */
public final class SystemALab {
    /** The models, in the order they run by default, with what each is. */
    public static final Map<String, String> MODELS = models();

    private static Map<String, String> models() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("weft", "weft gateway --executor virtual");
        m.put("pool-200", "weft gateway --executor platform:200 (seed 000's thread pool)");
        m.put("pool-2000", "weft gateway --executor platform:2000");
        m.put("async", "Vert.x 5 (Netty) futures and callbacks, one event loop per core (weft-lab peers/AsyncPeer.java)");
        m.put("go", "Go net/http with a goroutine per call (lab/peers/go)");
        m.put("lura", "lura, the engine of KrakenD CE: its gin router and default proxy, the three backends merged "
                + "by group (lab/peers/lura; built from a lura checkout named by " + GoPeers.LURA_SRC
                + ", which the Go module proxy cannot serve); not run by default");
        m.put("weft-traced", "weft gateway --executor virtual with tracing: {otlp, sample: 1.0} (a span per request "
                + "and per call, exported to an OTLP/HTTP receiver in the lab's process); not run by default");
        m.put("weft-sampled", "weft gateway --executor virtual with tracing: {otlp, sample: 0.1} (a tenth of new "
                + "traces recorded, docs/gateway.md's example; same receiver); not run by default");
        return java.util.Collections.unmodifiableMap(m);
    }

    /** The models run when none are named: all but weft-traced and weft-sampled (cost measurements, asked by name). */
    public static final List<String> DEFAULT_MODELS = List.of("weft", "pool-200", "pool-2000", "async", "go");

    /**
     * @param jitWarmup load at low concurrency (200) on each service before its first measurement
     */
    public record Options(List<String> models, List<Duration> latencies, int concurrency, Duration warmup,
                          Duration duration, Duration jitWarmup) {
    }

    /**
     * One measured run of one model at one latency. CPU seconds cover warm-up and measurement: the
     * service's, the backends' (weft-upstream) and the load generator's (this process), so that where the
     * machine's two cores went is on the same row.
     */
    public record Row(String model, Duration latency, Bench.Result result, double cpuSeconds, long peakRssMb,
                      long threads, double backendCpuSeconds, double loadCpuSeconds) {
        /** The record {@code results.json} holds. */
        public Map<String, Object> json() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("model", model);
            m.put("latency_ms", latency.toMillis());
            m.put("throughput", round(result.throughput()));
            m.put("p50_ms", round(result.percentileMillis(50)));
            m.put("p99_ms", round(result.percentileMillis(99)));
            m.put("errors", result.errors());
            m.put("cpu_s", round(cpuSeconds));
            m.put("rss_mb", peakRssMb);
            m.put("threads", threads);
            m.put("backends_cpu_s", round(backendCpuSeconds));
            m.put("load_cpu_s", round(loadCpuSeconds));
            m.put("requests", result.requests());
            m.put("errors_by_reason", result.errorsByReason());
            return m;
        }

        private static Double round(double d) {
            return Double.isNaN(d) ? null : Math.round(d * 10) / 10.0;
        }
    }

    /** The gateway models and the --executor each runs with. */
    private static final Map<String, String> GATEWAY_EXECUTORS = Map.of("weft", "virtual", "pool-200", "platform:200",
            "pool-2000", "platform:2000", "weft-traced", "virtual", "weft-sampled", "virtual");

    /** What a run produced: the rows, and the models skipped with why. */
    public record Report(List<Row> rows, Map<String, String> skipped) {
    }

    /** Default load at low concurrency on each fresh service process before it is measured. */
    public static final Duration JIT_WARMUP = Duration.ofSeconds(8);

    private SystemALab() {
    }

    /**
     * JVM flags of each JVM service (every model the same); WEFT_LAB_SERVICE_OPTS replaces them. The heap
     * is sized for 4,000+ requests in flight: with -Xmx2g the gateway at 1 s spent a fifth of its time in
     * young collections and served half the rate it does with 6g. Transparent huge pages for the heap: a
     * fresh service grows its heap during the run, and with 4 KiB pages the gateway took ~500,000 minor
     * page faults in 30 s (a fifth of its CPU samples zeroing pages in the kernel); with huge pages 22,000.
     */
    static List<String> serviceJvmFlags() {
        String env = System.getenv("WEFT_LAB_SERVICE_OPTS");
        return env != null && !env.isBlank() ? List.of(env.strip().split("\\s+")) : List.of("-Xmx6g", "-XX:+UseG1GC",
                "-XX:+UseTransparentHugePages");
    }

    /**
     * Runs every model at every latency. {@code onRow} sees each row as it is measured; {@code progress}
     * gets what is happening (a live line when {@code live}).
     */
    public static Report run(Options o, PrintWriter out, PrintWriter progress, boolean live, Consumer<Row> onRow)
            throws Exception {
        List<Row> rows = new ArrayList<>();
        Map<String, String> skipped = new LinkedHashMap<>();
        try (UpstreamProcess backends = UpstreamProcess.start(List.of(new InetSocketAddress("127.0.0.2", 0),
                new InetSocketAddress("127.0.0.3", 0), new InetSocketAddress("127.0.0.4", 0)))) {
            List<String> b = backends.urls();
            out.println("backends: B " + b.get(0) + ", C " + b.get(1) + ", D " + b.get(2)
                    + " (weft-upstream, one JVM, pid " + backends.pid() + ")");
            out.print(describe(o.models()));
            out.println();
            out.flush();
            Path config = Files.createTempFile("weft-lab-system-a", ".yaml");
            Files.writeString(config, config(b, o.concurrency()));
            OtlpSink otlp = o.models().contains("weft-traced") || o.models().contains("weft-sampled")
                    ? new OtlpSink() : null;
            Path traced = Files.createTempFile("weft-lab-system-a-traced", ".yaml");
            Files.writeString(traced, config(b, o.concurrency()) + (otlp == null ? ""
                    : "tracing: { otlp: \"" + otlp.url() + "\", sample: 1.0 }\n"));
            Path sampled = Files.createTempFile("weft-lab-system-a-sampled", ".yaml");
            Files.writeString(sampled, config(b, o.concurrency()) + (otlp == null ? ""
                    : "tracing: { otlp: \"" + otlp.url() + "\", sample: 0.1 }\n"));
            String reference = null;
            String referenceModel = null;
            try {
                for (String model : o.models()) {
                    for (Duration latency : o.latencies()) {
                        ChildProcess svc;
                        try {
                            svc = start(model, switch (model) {
                                case "weft-traced" -> traced;
                                case "weft-sampled" -> sampled;
                                default -> config;
                            }, b, o.concurrency());
                        } catch (GoPeers.Unavailable e) {
                            skipped.put(model, e.getMessage());
                            progress.println("lab system-a: SKIPPED " + model + ": " + e.getMessage());
                            progress.flush();
                            break;
                        }
                        // A load client per service process: the pool of a finished one would keep its
                        // thousands of sockets open until they idled out, and the lab ran out of descriptors.
                        try (svc; Transport client = LoadClient.transport(o.concurrency())) {
                            String body = check(client, svc.ready());
                            if (reference == null) {
                                reference = body;
                                referenceModel = model;
                            } else if (!sameJson(reference, body)) {
                                throw new IllegalStateException("model " + model + " answers a different body than "
                                        + referenceModel + ":\n" + body + "\nvs\n" + reference);
                            }
                            progress.println("lab system-a: " + model + " (a fresh process) returns the same combined body ("
                                    + body.length() + " bytes); warming it up for " + Durations.format(o.jitWarmup()) + " ...");
                            progress.flush();
                            Row row = measure(o, model, latency, svc, backends, client, progress, live);
                            String died = svc.exited();
                            if (died != null) {
                                skipped.put(model, "stopped at latency " + Durations.format(latency) + ": " + died
                                        + " (its output is above); its row is not reported");
                                progress.println("lab system-a: " + model + ": " + died);
                                progress.flush();
                                continue;
                            }
                            rows.add(row);
                            progress.printf("lab system-a: %s at latency %s: %.0f req/s, p99 %.0f ms, %d errors%n", model,
                                    Durations.format(latency), row.result().throughput(),
                                    row.result().percentileMillis(99), row.result().errors());
                            progress.flush();
                            if (onRow != null) {
                                onRow.accept(row);
                            }
                        }
                    }
                }
            } finally {
                Files.deleteIfExists(config);
                Files.deleteIfExists(traced);
                Files.deleteIfExists(sampled);
                if (otlp != null) {
                    out.println("otlp receiver (weft-traced, weft-sampled): " + otlp.summary());
                    otlp.close();
                }
            }
        }
        return new Report(rows, skipped);
    }

    /** The route and the services, as the lab prints them before it starts. */
    public static String describe(List<String> models) {
        StringBuilder sb = new StringBuilder();
        sb.append("route: GET /a/{id}?latency=L calls B, C and D in parallel and combines their bodies\n");
        sb.append("services, one process each (JVMs: ").append(String.join(" ", serviceJvmFlags())).append("):\n");
        for (String m : models) {
            sb.append("  ").append(m).append(": ").append(MODELS.get(m)).append('\n');
        }
        return sb.toString();
    }

    /**
     * Warms a fresh service up, then measures it at one latency. Each run gets a process of its own:
     * measured here, a gateway that had already served the 0, 100 and 500 ms runs gave 2,749 req/s at
     * 1 s, a fresh one 3,805 (a heap grown by the earlier runs, more to collect).
     */
    private static Row measure(Options o, String model, Duration latency, ChildProcess svc, UpstreamProcess backends,
                               Transport client, PrintWriter progress, boolean live) throws InterruptedException {
        // A cold JVM with thousands of connections opening at once spends its first seconds compiling on
        // cores the load needs: measured here, the first 0 ms run of a fresh gateway gave 125-485 req/s,
        // a warm one 3,700.
        String warm = svc.ready() + "/a/1?latency=0ms";
        Bench.run(new Bench.Options(List.of(warm), "GET", Headers.EMPTY, null, 0, Math.min(200, o.concurrency()),
                Duration.ZERO, o.jitWarmup(), Duration.ofSeconds(60)), sender(client, warm), null, false);
        progress.printf("lab system-a: %s at latency %s, %d concurrent requests, %s warm-up + %s ...%n",
                model, Durations.format(latency), o.concurrency(), Durations.format(o.warmup()),
                Durations.format(o.duration()));
        progress.flush();
        String url = svc.ready() + "/a/1?latency=" + Durations.format(latency);
        Duration cpu0 = svc.cpu();
        Duration simCpu0 = backends.cpu();
        Duration loadCpu0 = ownCpu();
        Bench.Result r = Bench.run(new Bench.Options(List.of(url), "GET", Headers.EMPTY, null, 0,
                o.concurrency(), o.warmup(), o.duration(), Duration.ofSeconds(60)), sender(client, url), progress, live);
        return new Row(model, latency, r, seconds(svc.cpu().minus(cpu0)), svc.procStatus("VmHWM"),
                svc.procStatus("Threads"), seconds(backends.cpu().minus(simCpu0)), seconds(ownCpu().minus(loadCpu0)));
    }

    private static Duration ownCpu() {
        return ProcessHandle.current().info().totalCpuDuration().orElse(Duration.ZERO);
    }

    private static double seconds(Duration d) {
        return d.toMillis() / 1000.0;
    }

    private static Bench.Sender sender(Transport client, String url) {
        return Bench.sender(client, List.of(CallRequest.get(url)), Duration.ofSeconds(60));
    }

    /** Starts one model's service; it prints READY with its base URL. */
    static ChildProcess start(String model, Path config, List<String> backends, int concurrency)
            throws IOException, GoPeers.Unavailable {
        String connections = String.valueOf(concurrency + 100);
        return switch (model) {
            case "weft", "pool-200", "pool-2000", "weft-traced", "weft-sampled" -> ChildProcess.startJvm(serviceJvmFlags(), GatewayProcess.class,
                    List.of(config.toString(), GATEWAY_EXECUTORS.get(model)));
            case "async" -> ChildProcess.startJvm(serviceJvmFlags(), AsyncPeer.class,
                    List.of(backends.get(0), backends.get(1), backends.get(2), connections));
            case "go" -> ChildProcess.start(List.of(GoPeers.build("go").toString(), backends.get(0), backends.get(1),
                    backends.get(2), connections), "the Go peer");
            case "lura" -> ChildProcess.start(List.of(GoPeers.buildLura().toString(), backends.get(0), backends.get(1),
                    backends.get(2), connections), "the lura peer");
            default -> throw new IllegalArgumentException("unknown model '" + model + "'; known: " + MODELS.keySet());
        };
    }

    /**
     * The gateway config every model runs: the concurrency sizes every bound that would otherwise cap it. The
     * admission is off: this closed loop keeps {@code concurrency} callers past the CPU at low latencies, where the
     * default admission answers the excess 503 at once and each is sent again at once; the lab measures what each
     * design carries (the admission in a closed loop: docs/design/admission.md; `weft lab overload`).
     */
    /**
     * The head of a measured gateway's config: loopback, no admission (the labs compare what each design carries),
     * room for {@code n} requests and calls in flight, no retries, no breaker.
     */
    static String measuredGateway(int n) {
        return measuredGateway(n, n);
    }

    /**
     * {@link #measuredGateway(int)} with {@code connections} inbound connections for {@code n} requests at once: a
     * relay takes many requests (streams) over few connections, and what it does not hold inbound its pools may
     * hold (the destinations' pools are sized to the open-file limit left: docs/gateway.md, File descriptors).
     */
    static String measuredGateway(int n, int connections) {
        return "listen: 127.0.0.1:0\n"
                + "admission: { enabled: false }\n"
                + "limits: { max_concurrent: " + n + ", max_connections: " + connections + ", max_wait: 1s }\n"
                + "destination_defaults: { max_in_flight: " + n + ", retry: { attempts: 1 }, breaker: { enabled: false } }\n";
    }

    static String config(List<String> b, int concurrency) {
        StringBuilder sb = new StringBuilder(measuredGateway(concurrency + 100));
        sb.append("routes:\n  - get: /a/{id}\n    timeout: 50s\n    calls:\n");
        String[] names = {"b", "c", "d"};
        for (int i = 0; i < 3; i++) {
            sb.append("      ").append(names[i]).append(": { url: \"").append(b.get(i)).append('/').append(names[i])
                    .append("/{path.id}?latency={query.latency}\", timeout: 50s }\n");
        }
        return sb.toString();
    }

    /**
     * Whether two answers are the same JSON value: lura decodes each backend's body and encodes the merge again,
     * so its members come in another order than the bytes the other models pass through.
     */
    static boolean sameJson(String a, String b) {
        try {
            return Json.MAPPER.readTree(a).equals(Json.MAPPER.readTree(b));
        } catch (IOException e) {
            return false;
        }
    }

    static String check(Transport client, String url) throws IOException {
        CallResult r = client.call(CallRequest.get(url + "/a/1?latency=0ms"), Duration.ofSeconds(30));
        if (!r.ok()) {
            throw new IOException("the service at " + url + " failed its first request: " + r);
        }
        return r.bodyText();
    }

    /** The Markdown table of every row, then {@link #summary}. */
    public static String table(Report report, Options o) {
        StringBuilder sb = new StringBuilder();
        sb.append(header());
        for (Row r : report.rows()) {
            sb.append(line(r));
        }
        return sb.append(summary(report, o)).toString();
    }

    /** Skipped models, each model's throughput against its own at the first latency, Weft's ratios to each. */
    public static String summary(Report report, Options o) {
        List<Row> rows = report.rows();
        StringBuilder sb = new StringBuilder();
        report.skipped().forEach((m, why) -> sb.append("\nSkipped ").append(m).append(": ").append(why).append('\n'));
        Map<String, Map<Duration, Double>> by = new LinkedHashMap<>();
        for (Row r : rows) {
            by.computeIfAbsent(r.model(), k -> new LinkedHashMap<>()).put(r.latency(), r.result().throughput());
        }
        sb.append("\nThroughput at each latency relative to the same model at ")
                .append(Durations.format(o.latencies().getFirst())).append(":\n\n");
        for (Map.Entry<String, Map<Duration, Double>> e : by.entrySet()) {
            double base = e.getValue().getOrDefault(o.latencies().getFirst(), Double.NaN);
            List<String> parts = new ArrayList<>();
            e.getValue().forEach((l, t) -> parts.add(Durations.format(l) + " " + String.format(Locale.ROOT, "%.0f%%", 100 * t / base)));
            sb.append("- ").append(e.getKey()).append(": ").append(String.join(", ", parts)).append('\n');
        }
        if (by.containsKey("weft") && by.size() > 1) {
            sb.append("\nWeft against each model, throughput ratio at each latency (above 1: Weft ahead):\n\n");
            for (String m : by.keySet()) {
                if (m.equals("weft")) {
                    continue;
                }
                List<String> parts = new ArrayList<>();
                for (Duration l : o.latencies()) {
                    Double w = by.get("weft").get(l);
                    Double x = by.get(m).get(l);
                    if (w != null && x != null && x > 0) {
                        parts.add(Durations.format(l) + " " + String.format(Locale.ROOT, "%.2fx", w / x));
                    }
                }
                sb.append("- weft / ").append(m).append(": ").append(String.join(", ", parts)).append('\n');
            }
        }
        sb.append("\nCPU seconds over warm-up and measurement of each run: the service process, the backends "
                + "(weft-upstream, one JVM) and the load generator (weft bench, the lab's own JVM); all three share the "
                + "machine's ").append(Runtime.getRuntime().availableProcessors()).append(" cores. Peak RSS: the "
                + "service's high-water mark (each run has a fresh service process). OS threads: the service's at the end "
                + "of the run.\n");
        return sb.toString();
    }

    /** The Markdown table's header. */
    public static String header() {
        return "| backend latency | model | req/s | p50 ms | p99 ms | errors | service CPU s | service peak RSS MB "
                + "| service OS threads | backends CPU s | load CPU s |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    }

    /** One row of the Markdown table. */
    public static String line(Row r) {
        Bench.Result x = r.result();
        return String.format(Locale.ROOT, "| %s | %s | %.0f | %.1f | %.1f | %d%s | %.1f | %d | %d | %.1f | %.1f |%n",
                Durations.format(r.latency()), r.model(), x.throughput(), x.percentileMillis(50),
                x.percentileMillis(99), x.errors(), x.errors() > 0 ? " " + x.errorsByReason() : "", r.cpuSeconds(),
                r.peakRssMb(), r.threads(), r.backendCpuSeconds(), r.loadCpuSeconds());
    }
}
