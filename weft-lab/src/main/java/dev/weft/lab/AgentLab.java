package dev.weft.lab;

import dev.weft.client.CallRequest;
import dev.weft.client.CallResult;
import dev.weft.http.Headers;
import dev.weft.client.Transport;
import dev.weft.core.Durations;
import dev.weft.devtools.ChildProcess;
import dev.weft.devtools.UpstreamProcess;
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
 * {@code weft lab agent}: the unmodified service ({@link LegacyService}, seed 000's System A as a team wrote it
 * before virtual threads: JDK HttpServer, fixed pools of 200, HttpURLConnection) with and without weft-agent,
 * and {@code weft gateway} beside it, each in a fresh process, models alternating at each latency. Backends B,
 * C and D: weft-upstream in one JVM on 127.0.0.2-4. Load: {@link Bench}, closed loop, in this process.
 * <ul>
 *   <li>{@code pool}: the service as it is;</li>
 *   <li>{@code agent}: the same with {@code -javaagent:weft-agent.jar} (each pool's own bound);</li>
 *   <li>{@code agent-N}: the same with {@code concurrency=N} (default model {@code agent-10000});</li>
 *   <li>{@code agent-pinned}: {@code agent} with the agent's {@code pinned} option (its JFR recording stream runs
 *   from the start: what counting pinned workers costs);</li>
 *   <li>{@code weft}: {@code weft gateway --executor virtual} on the same route.</li>
 * </ul>
 * {@code --json} adds a TechEmpower-style row per JVM model but the gateway: {@code GET /json} (no backend).
 */
public final class AgentLab {
    /** The models run when none are named. */
    public static final List<String> DEFAULT_MODELS = List.of("pool", "agent", "agent-10000", "weft");
    /** The agent at its own bounds with its {@code pinned} option. */
    private static final String PINNED = "agent-pinned";

    /**
     * @param agentJar   weft-agent.jar ({@code ./weft agent} builds it)
     * @param rounds     times each latency's models are run in turn (alternating)
     * @param json       also measure the TechEmpower-style {@code /json} endpoint (pool, agent models)
     */
    public record Options(List<String> models, List<Duration> latencies, int concurrency, Duration warmup,
                          Duration duration, Duration jitWarmup, Path agentJar, int rounds, boolean json) {
    }

    /** What one run measured; {@code latency} null for the {@code /json} rows. */
    public record Row(String model, String route, Duration latency, int round, Bench.Result result, double cpuSeconds,
                      long peakRssMb, long threads) {
    }

    private AgentLab() {
    }

    /** A model name's meaning, or an error naming the known ones. */
    public static String describe(String model) {
        if (model.equals("pool")) {
            return "the service as it is (JDK HttpServer, fixed pools of 200: http-handler-N, backend-call-N)";
        }
        if (model.equals("agent")) {
            return "the same JVM with -javaagent:weft-agent.jar (virtual threads, each pool's own bound)";
        }
        if (model.equals(PINNED)) {
            return "the same JVM with -javaagent:weft-agent.jar=pinned (each pool's own bound; pinned workers counted "
                    + "from the start by a JFR recording stream)";
        }
        if (model.equals("weft")) {
            return "weft gateway --executor virtual, the same route (System A's config of weft lab system-a)";
        }
        if (model.startsWith("agent-")) {
            return "the same JVM with -javaagent:weft-agent.jar=concurrency=" + concurrencyOf(model);
        }
        throw new IllegalArgumentException("unknown model '" + model + "'; known: pool, agent, agent-N (N: concurrency=N), "
                + PINNED + ", weft");
    }

    private static int concurrencyOf(String model) {
        try {
            int n = Integer.parseInt(model.substring("agent-".length()));
            if (n < 1) {
                throw new NumberFormatException();
            }
            return n;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("model " + model + ": agent-N takes a whole number N >= 1");
        }
    }

    /** Runs every round of every latency, the models in turn; then the /json rows when asked. */
    public static List<Row> run(Options o, PrintWriter out, PrintWriter progress, boolean live) throws Exception {
        o.models().forEach(AgentLab::describe);
        if (!Files.isRegularFile(o.agentJar())) {
            throw new IOException(o.agentJar() + " is missing: build it with ./weft agent (or give --agent-jar)");
        }
        List<Row> rows = new ArrayList<>();
        try (UpstreamProcess backends = UpstreamProcess.start(List.of(new InetSocketAddress("127.0.0.2", 0),
                new InetSocketAddress("127.0.0.3", 0), new InetSocketAddress("127.0.0.4", 0)))) {
            List<String> b = backends.urls();
            out.println("backends: B " + b.get(0) + ", C " + b.get(1) + ", D " + b.get(2) + " (weft-upstream, one JVM)");
            out.println("agent: " + o.agentJar());
            out.println("services, one fresh process per row (JVMs: " + String.join(" ", SystemALab.serviceJvmFlags()) + "):");
            for (String m : o.models()) {
                out.println("  " + m + ": " + describe(m));
            }
            out.println();
            out.flush();
            Path config = Files.createTempFile("weft-lab-agent", ".yaml");
            try {
                Files.writeString(config, SystemALab.config(b, o.concurrency()));
                for (Duration latency : o.latencies()) {
                    for (int round = 1; round <= o.rounds(); round++) {
                        for (String model : o.models()) {
                            rows.add(measure(o, model, "/a/1?latency=" + Durations.format(latency), latency, round,
                                    config, b, progress, live));
                        }
                    }
                }
                if (o.json()) {
                    for (int round = 1; round <= o.rounds(); round++) {
                        for (String model : o.models()) {
                            if (!model.equals("weft")) {
                                rows.add(measure(o, model, "/json", null, round, config, b, progress, live));
                            }
                        }
                    }
                }
            } finally {
                Files.deleteIfExists(config);
            }
        }
        return rows;
    }

    private static ChildProcess start(Options o, String model, Path config, List<String> b) throws IOException {
        if (model.equals("weft")) {
            return ChildProcess.startJvm(SystemALab.serviceJvmFlags(), GatewayProcess.class, List.of(config.toString(), "virtual"));
        }
        List<String> flags = new ArrayList<>(SystemALab.serviceJvmFlags());
        if (model.startsWith("agent")) {
            flags.add("-javaagent:" + o.agentJar() + (model.equals("agent") ? ""
                    : model.equals(PINNED) ? "=pinned" : "=concurrency=" + concurrencyOf(model)));
        }
        return ChildProcess.startJvm(flags, LegacyService.class, List.of("--backends", String.join(",", b)));
    }

    private static Row measure(Options o, String model, String route, Duration latency, int round, Path config,
                               List<String> b, PrintWriter progress, boolean live) throws Exception {
        try (ChildProcess svc = start(o, model, config, b); Transport client = LoadClient.transport(o.concurrency())) {
            String url = svc.ready() + route;
            CallResult first = client.call(CallRequest.get(svc.ready() + "/a/1?latency=0ms"), Duration.ofSeconds(30));
            if (!first.ok()) {
                throw new IOException(model + " failed its first request: " + first);
            }
            String warm = svc.ready() + (latency == null ? route : "/a/1?latency=0ms");
            Bench.run(new Bench.Options(List.of(warm), "GET", Headers.EMPTY, null, 0, Math.min(200, o.concurrency()),
                    Duration.ZERO, o.jitWarmup(), Duration.ofSeconds(60)), sender(client, warm), null, false);
            progress.printf("lab agent: %s %s, round %d, %d concurrent requests, %s warm-up + %s ...%n", model, route, round,
                    o.concurrency(), Durations.format(o.warmup()), Durations.format(o.duration()));
            progress.flush();
            java.time.Duration cpu0 = svc.cpu();
            Bench.Result r = Bench.run(new Bench.Options(List.of(url), "GET", Headers.EMPTY, null, 0, o.concurrency(),
                    o.warmup(), o.duration(), Duration.ofSeconds(60)), sender(client, url), progress, live);
            Row row = new Row(model, route.startsWith("/json") ? "/json" : "/a", latency, round, r,
                    svc.cpu().minus(cpu0).toMillis() / 1000.0, svc.procStatus("VmHWM"), svc.procStatus("Threads"));
            String died = svc.exited();
            if (died != null) {
                throw new IOException(model + " " + died + " during the run");
            }
            progress.printf("lab agent: %s %s: %.0f req/s, p99 %.0f ms, %d errors%n", model, route, r.throughput(),
                    r.percentileMillis(99), r.errors());
            progress.flush();
            return row;
        }
    }

    private static Bench.Sender sender(Transport client, String url) {
        return Bench.sender(client, List.of(CallRequest.get(url)), Duration.ofSeconds(60));
    }

    /** The Markdown table, then each model's throughput against {@code pool}'s at the same route and latency. */
    public static String table(List<Row> rows) {
        StringBuilder sb = new StringBuilder();
        sb.append("| route | backend latency | round | model | req/s | p50 ms | p99 ms | errors | service CPU s "
                + "| service peak RSS MB | service OS threads |\n|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|\n");
        for (Row r : rows) {
            Bench.Result x = r.result();
            sb.append(String.format(Locale.ROOT, "| %s | %s | %d | %s | %.0f | %.1f | %.1f | %d%s | %.1f | %d | %d |%n",
                    r.route(), r.latency() == null ? "-" : Durations.format(r.latency()), r.round(), r.model(),
                    x.throughput(), x.percentileMillis(50), x.percentileMillis(99), x.errors(),
                    x.errors() > 0 ? " " + x.errorsByReason() : "", r.cpuSeconds(), r.peakRssMb(), r.threads()));
        }
        Map<String, Double> pool = new LinkedHashMap<>();
        for (Row r : rows) {
            if (r.model().equals("pool")) {
                pool.merge(key(r), r.result().throughput(), Double::sum);
            }
        }
        Map<String, Map<String, Double>> sums = new LinkedHashMap<>();
        for (Row r : rows) {
            if (!r.model().equals("pool")) {
                sums.computeIfAbsent(r.model(), k -> new LinkedHashMap<>()).merge(key(r), r.result().throughput(), Double::sum);
            }
        }
        if (!pool.isEmpty() && !sums.isEmpty()) {
            sb.append("\nThroughput against pool (the service without the agent), rounds summed, at each route and latency:\n\n");
            sums.forEach((model, byKey) -> {
                List<String> parts = new ArrayList<>();
                byKey.forEach((k, t) -> {
                    Double p = pool.get(k);
                    if (p != null && p > 0) {
                        parts.add(k + " " + String.format(Locale.ROOT, "%.2fx", t / p));
                    }
                });
                sb.append("- ").append(model).append(" / pool: ").append(String.join(", ", parts)).append('\n');
            });
        }
        return sb.toString();
    }

    private static String key(Row r) {
        return r.route().equals("/json") ? "/json" : Durations.format(r.latency());
    }
}
