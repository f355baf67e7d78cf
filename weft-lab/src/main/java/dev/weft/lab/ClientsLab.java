package dev.weft.lab;

import dev.weft.core.Deadline;
import dev.weft.core.Durations;
import dev.weft.core.call.CallRequest;
import dev.weft.core.call.CallResult;
import dev.weft.core.call.Transport;
import dev.weft.sim.SimProcess;

import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * {@code weft lab clients}: outbound HTTP clients side by side, closed loop on virtual threads, against
 * a weft-sim backend in its own process, at each backend latency.
 */
public final class ClientsLab {
    /** The clients this lab knows. */
    public static final List<String> CLIENTS = List.of("weft", "jdk");

    public record Options(List<String> clients, List<Duration> latencies, int concurrency, Duration warmup,
                          Duration duration, String target) {
    }

    /**
     * One measured run.
     *
     * @param clientCpu  CPU time of this (client) process over the run, warm-up included
     * @param backendCpu CPU time of the backend process over the run, or null when it is not ours
     */
    public record Row(String client, Duration latency, ClosedLoop.Result result, Duration clientCpu,
                      Duration backendCpu) {
    }

    private ClientsLab() {
    }

    public static List<Row> run(Options o, PrintWriter out, PrintWriter progress) throws Exception {
        List<Row> rows = new ArrayList<>();
        SimProcess backend = o.target() == null
                ? SimProcess.start(List.of(new InetSocketAddress("127.0.0.1", 0))) : null;
        String base = backend != null ? backend.url() : o.target().replaceAll("/+$", "");
        try {
            out.println("backend: " + (backend != null ? "weft-sim in its own JVM (pid " + backend.pid() + ") at "
                    + base : base));
            out.println();
            for (Duration latency : o.latencies()) {
                String url = base + "/lab?latency=" + Durations.format(latency);
                for (String client : o.clients()) {
                    progress.printf("lab clients: %s at latency %s, %d virtual threads, %s warm-up + %s ...%n",
                            client, Durations.format(latency), o.concurrency(), Durations.format(o.warmup()),
                            Durations.format(o.duration()));
                    progress.flush();
                    Duration c0 = cpu(ProcessHandle.current());
                    Duration b0 = backend != null ? cpu(ProcessHandle.of(backend.pid()).orElse(null)) : null;
                    ClosedLoop.Result r = runOne(client, url, o);
                    Duration c1 = cpu(ProcessHandle.current());
                    Duration b1 = backend != null ? cpu(ProcessHandle.of(backend.pid()).orElse(null)) : null;
                    rows.add(new Row(client, latency, r, c1.minus(c0), b0 == null || b1 == null ? null : b1.minus(b0)));
                    progress.printf("lab clients: %s at latency %s: %.0f req/s, p99 %.1f ms, %d errors%n", client,
                            Durations.format(latency), r.throughput(), r.percentileMillis(99), r.errors());
                    progress.flush();
                }
            }
        } finally {
            if (backend != null) {
                backend.close();
            }
        }
        out.println(table(rows));
        return rows;
    }

    private static Duration cpu(ProcessHandle p) {
        return p == null ? null : p.info().totalCpuDuration().orElse(Duration.ZERO);
    }

    private static ClosedLoop.Result runOne(String client, String url, Options o) throws Exception {
        Duration timeout = Duration.ofSeconds(10);
        switch (client) {
            case "weft" -> {
                try (Transport t = LoadClient.transport(o.concurrency())) {
                    CallRequest req = CallRequest.get(url);
                    return ClosedLoop.run(o.concurrency(), o.warmup(), o.duration(), () -> {
                        CallResult r = t.call(req, Deadline.in(timeout));
                        return r.ok() ? null : r.outcome();
                    });
                }
            }
            case "jdk" -> {
                try (ExecutorService ex = Executors.newVirtualThreadPerTaskExecutor();
                     HttpClient c = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).executor(ex)
                             .connectTimeout(Duration.ofSeconds(2)).build()) {
                    HttpRequest req = HttpRequest.newBuilder(URI.create(url)).timeout(timeout).GET().build();
                    return ClosedLoop.run(o.concurrency(), o.warmup(), o.duration(), () -> {
                        HttpResponse<byte[]> r = c.send(req, HttpResponse.BodyHandlers.ofByteArray());
                        return r.statusCode() < 400 ? null : "status-" + r.statusCode();
                    });
                }
            }
            default -> throw new IllegalArgumentException("unknown client '" + client + "'; known: " + CLIENTS);
        }
    }

    /** The rows as a Markdown table, with raw counts. */
    public static String table(List<Row> rows) {
        StringBuilder sb = new StringBuilder();
        sb.append("| backend latency | client | req/s | p50 ms | p99 ms | p99.9 ms | max ms | requests | errors "
                + "| client CPU s | backend CPU s |\n");
        sb.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (Row r : rows) {
            ClosedLoop.Result x = r.result();
            sb.append(String.format(Locale.ROOT, "| %s | %s | %.0f | %.2f | %.2f | %.2f | %.2f | %d | %d%s | %.1f | %s |%n",
                    Durations.format(r.latency()), r.client(), x.throughput(), x.percentileMillis(50),
                    x.percentileMillis(99), x.percentileMillis(99.9), x.maxMillis(), x.requests(), x.errors(),
                    x.errors() > 0 ? " " + x.errorsByReason() : "", r.clientCpu().toMillis() / 1000.0,
                    r.backendCpu() == null ? "n/a" : String.format(Locale.ROOT, "%.1f", r.backendCpu().toMillis() / 1000.0)));
        }
        sb.append("\nCPU seconds cover warm-up and measurement of each run; the machine has ")
                .append(Runtime.getRuntime().availableProcessors()).append(" cores shared by both processes.\n");
        return sb.toString();
    }
}
