package dev.weft.lab;

import dev.weft.sim.ChildJvm;

import dev.weft.core.Deadline;
import dev.weft.core.Durations;
import dev.weft.core.call.CallRequest;
import dev.weft.core.call.CallResult;
import dev.weft.core.call.Transport;
import dev.weft.sim.SimProcess;

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
 * {@code weft lab system-a}: seed 000's System A. Backends B, C and D (weft-sim, one JVM, listening on
 * 127.0.0.2, .3 and .4) answer after latency L; a service answers each request by calling B, C and D in
 * parallel and combining the three bodies; closed-loop load from this process. Each model is the same
 * gateway and route in a JVM of its own, with another thread model:
 * <ul>
 *   <li>{@code weft}: {@code --executor virtual};</li>
 *   <li>{@code pool-200}, {@code pool-2000}: {@code --executor platform:200 / platform:2000}, the seed's design.</li>
 * </ul>
 */
public final class SystemALab {
    public static final Map<String, String> MODELS = Map.of("weft", "virtual", "pool-200", "platform:200",
            "pool-2000", "platform:2000");

    public record Options(List<String> models, List<Duration> latencies, int concurrency, Duration warmup,
                          Duration duration) {
    }

    /** One measured run of one model at one latency. */
    public record Row(String model, Duration latency, ClosedLoop.Result result, double cpuSeconds, long peakRssMb,
                      long threads) {
    }

    /** Load at low concurrency before the first measurement of each service JVM. */
    static final Duration JIT_WARMUP = Duration.ofSeconds(10);

    private SystemALab() {
    }

    public static List<Row> run(Options o, PrintWriter out, PrintWriter progress) throws Exception {
        List<Row> rows = new ArrayList<>();
        try (SimProcess backends = SimProcess.start(List.of(new InetSocketAddress("127.0.0.2", 0),
                new InetSocketAddress("127.0.0.3", 0), new InetSocketAddress("127.0.0.4", 0)))) {
            List<String> b = backends.urls();
            out.println("backends: B " + b.get(0) + ", C " + b.get(1) + ", D " + b.get(2)
                    + " (weft-sim, one JVM, pid " + backends.pid() + ")");
            Path config = Files.createTempFile("weft-lab-system-a", ".yaml");
            Files.writeString(config, config(b, o.concurrency()));
            out.println("service: weft gateway, route GET /a/{id}: B, C and D in parallel, bodies combined; "
                    + "one JVM per model (-Xmx2g)");
            out.println();
            out.flush();
            String reference = null;
            try (Transport client = LoadClient.transport(o.concurrency())) {
                for (String model : o.models()) {
                    try (ChildJvm svc = ChildJvm.start(List.of("-Xmx2g", "-XX:+UseG1GC"), GatewayProcess.class,
                            List.of(config.toString(), MODELS.get(model)))) {
                        String body = check(client, svc.ready());
                        if (reference == null) {
                            reference = body;
                        } else if (!reference.equals(body)) {
                            throw new IllegalStateException("model " + model + " answers a different body than "
                                    + o.models().getFirst() + ":\n" + body + "\nvs\n" + reference);
                        }
                        progress.println("lab system-a: " + model + " returns the same combined body ("
                                + body.length() + " bytes); warming its JIT for " + Durations.format(JIT_WARMUP) + " ...");
                        progress.flush();
                        // A cold JVM with thousands of connections opening at once spends its first seconds
                        // compiling on cores the load needs: measured here, the first 0 ms run of a fresh
                        // gateway gave 125-485 req/s, a warm one 3,700.
                        CallRequest warm = CallRequest.get(svc.ready() + "/a/1?latency=0ms");
                        ClosedLoop.run(Math.min(200, o.concurrency()), Duration.ZERO, JIT_WARMUP, () -> {
                            CallResult x = client.call(warm, Deadline.in(Duration.ofSeconds(60)));
                            return x.ok() ? null : x.outcome();
                        });
                        for (Duration latency : o.latencies()) {
                            progress.printf("lab system-a: %s at latency %s, %d concurrent requests, %s warm-up + %s ...%n",
                                    model, Durations.format(latency), o.concurrency(), Durations.format(o.warmup()),
                                    Durations.format(o.duration()));
                            progress.flush();
                            CallRequest req = CallRequest.get(svc.ready() + "/a/1?latency=" + Durations.format(latency));
                            Duration cpu0 = svc.cpu();
                            ClosedLoop.Result r = ClosedLoop.run(o.concurrency(), o.warmup(), o.duration(), () -> {
                                CallResult x = client.call(req, Deadline.in(Duration.ofSeconds(60)));
                                return x.ok() ? null : x.outcome();
                            });
                            Row row = new Row(model, latency, r, svc.cpu().minus(cpu0).toMillis() / 1000.0,
                                    svc.procStatus("VmHWM"), svc.procStatus("Threads"));
                            rows.add(row);
                            progress.printf("lab system-a: %s at latency %s: %.0f req/s, p99 %.0f ms, %d errors%n", model,
                                    Durations.format(latency), r.throughput(), r.percentileMillis(99), r.errors());
                            progress.flush();
                        }
                    }
                }
            } finally {
                Files.deleteIfExists(config);
            }
        }
        out.println(table(rows, o));
        return rows;
    }

    /** The gateway config every model runs: the concurrency sizes every bound that would otherwise cap it. */
    static String config(List<String> b, int concurrency) {
        int n = concurrency + 100;
        StringBuilder sb = new StringBuilder();
        sb.append("listen: 127.0.0.1:0\n");
        sb.append("limits: { max_concurrent: ").append(n).append(", max_connections: ").append(n)
                .append(", max_wait: 1s }\n");
        sb.append("destination_defaults: { max_in_flight: ").append(n)
                .append(", retry: { attempts: 1 }, breaker: { enabled: false } }\n");
        sb.append("routes:\n  - get: /a/{id}\n    timeout: 50s\n    calls:\n");
        String[] names = {"b", "c", "d"};
        for (int i = 0; i < 3; i++) {
            sb.append("      ").append(names[i]).append(": { url: \"").append(b.get(i)).append('/').append(names[i])
                    .append("/{path.id}?latency={query.latency}\", timeout: 50s }\n");
        }
        return sb.toString();
    }

    private static String check(Transport client, String url) throws IOException {
        CallResult r = client.call(CallRequest.get(url + "/a/1?latency=0ms"), Duration.ofSeconds(30));
        if (!r.ok()) {
            throw new IOException("the service at " + url + " failed its first request: " + r);
        }
        return r.bodyText();
    }

    public static String table(List<Row> rows, Options o) {
        StringBuilder sb = new StringBuilder();
        sb.append("| backend latency | model | req/s | p50 ms | p99 ms | errors | service CPU s | service peak RSS MB "
                + "| service OS threads |\n");
        sb.append("|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
        for (Row r : rows) {
            ClosedLoop.Result x = r.result();
            sb.append(String.format(Locale.ROOT, "| %s | %s | %.0f | %.1f | %.1f | %d%s | %.1f | %d | %d |%n",
                    Durations.format(r.latency()), r.model(), x.throughput(), x.percentileMillis(50),
                    x.percentileMillis(99), x.errors(), x.errors() > 0 ? " " + x.errorsByReason() : "", r.cpuSeconds(),
                    r.peakRssMb(), r.threads()));
        }
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
        Duration last = o.latencies().getLast();
        Double weft = by.containsKey("weft") ? by.get("weft").get(last) : null;
        for (String m : by.keySet()) {
            if (!m.equals("weft") && weft != null && by.get(m).get(last) != null) {
                sb.append(String.format(Locale.ROOT, "- at %s, weft / %s = %.1fx%n", Durations.format(last), m,
                        weft / by.get(m).get(last)));
            }
        }
        sb.append("\nCPU seconds: the service process over warm-up and measurement of each run. Peak RSS: the "
                + "service's high-water mark since it started. OS threads: the service's at the end of the run.\n");
        return sb.toString();
    }
}
