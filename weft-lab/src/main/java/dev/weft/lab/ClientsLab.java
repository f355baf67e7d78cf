package dev.weft.lab;

import dev.weft.core.Durations;
import dev.weft.client.CallRequest;
import dev.weft.client.CallResult;
import dev.weft.http.Headers;
import dev.weft.client.Transport;
import dev.weft.lab.peers.GoPeers;
import dev.weft.lab.peers.RawClient;
import dev.weft.devtools.ChildProcess;
import dev.weft.devtools.UpstreamProcess;
import io.helidon.webclient.api.HttpClientResponse;
import io.helidon.webclient.api.WebClient;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClientAgent;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import org.HdrHistogram.Histogram;
import org.apache.hc.client5.http.classic.methods.HttpGet;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClients;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManagerBuilder;
import org.apache.hc.core5.http.io.entity.EntityUtils;
import org.eclipse.jetty.client.ContentResponse;

import java.io.BufferedReader;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * {@code weft lab clients}: outbound HTTP clients side by side against a weft-upstream backend in its own
 * process, at each backend latency.
 *
 * <p>The shoot-out ({@link #SHOOTOUT}): each client closed loop on {@code concurrency} virtual threads,
 * blocking calls, as many connections as threads. Then seed 002's client-side models ({@link #SEED_002}):
 * 80 platform threads with a blocking client; an async client (Vert.x) with 128 connections and
 * {@code concurrency} requests in flight; {@code concurrency} virtual threads with a blocking client
 * (Weft's); Go with 256 goroutines.
 */
public final class ClientsLab {
    /** The outbound-client shoot-out, each on virtual threads. */
    public static final Map<String, String> SHOOTOUT = ordered(
            "weft", "Weft's Transport (its own HTTP/1.1 client, with bulkhead, deadline, metrics)",
            "jdk", "java.net.http.HttpClient, HTTP/1.1",
            "apache", "Apache HttpClient 5 classic, pooled, nothing else",
            "jetty", "Jetty 12 HttpClient, blocking send()",
            "helidon", "Helidon 4 WebClient (blocking, built for virtual threads)",
            "raw", "a minimal HTTP/1.1 client on plain sockets (the reference: the least a client can do)");
    /** Seed 002's client-side models. */
    public static final Map<String, String> SEED_002 = ordered(
            "pool-80", "80 platform threads, blocking Apache 5 classic client",
            "async-128", "Vert.x 5 HttpClient, 128 connections, all requests in flight as futures",
            "virtual", "one virtual thread per request in flight, blocking Weft Transport",
            "go-256", "Go, 256 goroutines, net/http (lab/peers/go-client)");
    /** Every client this lab knows. */
    public static final Map<String, String> CLIENTS = all();

    public record Options(List<String> clients, List<Duration> latencies, int concurrency, Duration warmup,
                          Duration duration, String target) {
    }

    /**
     * One measured run.
     *
     * @param threads    load-side concurrency of this run (threads, goroutines or requests in flight)
     * @param clientCpu  CPU time of the client process over the run, warm-up included
     * @param backendCpu CPU time of the backend process over the run, or null when it is not ours
     */
    public record Row(String client, Duration latency, int threads, Bench.Result result, Duration clientCpu,
                      Duration backendCpu) {
    }

    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    private ClientsLab() {
    }

    public static List<Row> run(Options o, PrintWriter out, PrintWriter progress) throws Exception {
        List<Row> rows = new ArrayList<>();
        Map<String, String> skipped = new LinkedHashMap<>();
        UpstreamProcess backend = o.target() == null
                ? UpstreamProcess.start(List.of(new InetSocketAddress("127.0.0.1", 0))) : null;
        String base = backend != null ? backend.url() : o.target().replaceAll("/+$", "");
        try {
            out.println("backend: " + (backend != null ? "weft-upstream in its own JVM (pid " + backend.pid() + ") at "
                    + base : base));
            for (String c : o.clients()) {
                out.println("  " + c + ": " + CLIENTS.get(c));
            }
            out.println();
            out.flush();
            for (Duration latency : o.latencies()) {
                String url = base + "/lab?latency=" + Durations.format(latency);
                for (String client : o.clients()) {
                    int threads = threads(client, o.concurrency());
                    progress.printf("lab clients: %s at latency %s, %d concurrent, %s warm-up + %s ...%n", client,
                            Durations.format(latency), threads, Durations.format(o.warmup()), Durations.format(o.duration()));
                    progress.flush();
                    if (backend != null) {
                        resetStats(base);
                    }
                    Duration b0 = backend != null ? backend.cpu() : null;
                    Measured m;
                    try {
                        m = runOne(client, url, threads, o);
                    } catch (GoPeers.Unavailable e) {
                        skipped.put(client, e.getMessage());
                        progress.println("lab clients: SKIPPED " + client + ": " + e.getMessage());
                        continue;
                    }
                    Duration b1 = backend != null ? backend.cpu() : null;
                    if (backend != null) {
                        requireOnlyLabPath(base, client);
                    }
                    rows.add(new Row(client, latency, threads, m.result(), m.clientCpu(),
                            b0 == null || b1 == null ? null : b1.minus(b0)));
                    progress.printf("lab clients: %s at latency %s: %.0f req/s, p99 %.1f ms, %d errors%n", client,
                            Durations.format(latency), m.result().throughput(), m.result().percentileMillis(99),
                            m.result().errors());
                    progress.flush();
                }
            }
        } finally {
            if (backend != null) {
                backend.close();
            }
        }
        out.println(table(rows));
        skipped.forEach((c, why) -> out.println("Skipped " + c + ": " + why));
        return rows;
    }

    /** Load-side concurrency of a client: seed 002's models fix theirs. */
    static int threads(String client, int concurrency) {
        return switch (client) {
            case "pool-80" -> 80;
            case "go-256" -> 256;
            default -> concurrency;
        };
    }

    private record Measured(Bench.Result result, Duration clientCpu) {
    }

    private static void resetStats(String base) throws java.io.IOException {
        try (Transport t = LoadClient.transport(1)) {
            CallResult r = t.call(CallRequest.post(base + "/-/reset", ""), Duration.ofSeconds(10));
            if (!r.ok()) {
                throw new java.io.IOException("the backend did not reset its counts: " + r);
            }
        }
    }

    /**
     * The backend must have seen requests for {@code /lab} only: a client that mangles the URL (one did:
     * it percent-encoded the '?' into the path, so the latency was never applied) measures something else.
     */
    private static void requireOnlyLabPath(String base, String client) throws java.io.IOException {
        try (Transport t = LoadClient.transport(1)) {
            CallResult r = t.call(CallRequest.get(base + "/-/stats"), Duration.ofSeconds(10));
            java.util.Set<String> paths = new java.util.TreeSet<>();
            dev.weft.json.Json.MAPPER.readTree(r.body()).path("by_path").fieldNames().forEachRemaining(paths::add);
            if (!paths.equals(java.util.Set.of("/lab"))) {
                throw new IllegalStateException("client " + client + " sent requests the backend saw as " + paths
                        + ", not /lab?latency=...: its row would not measure what it claims");
            }
        }
    }

    private static Duration cpu(ProcessHandle p) {
        return p == null ? null : p.info().totalCpuDuration().orElse(Duration.ZERO);
    }

    private static Measured runOne(String client, String url, int threads, Options o) throws Exception {
        Bench.Options bo = new Bench.Options(List.of(url), "GET", Headers.EMPTY, null, 0, threads, o.warmup(),
                o.duration(), TIMEOUT);
        if (client.equals("go-256")) {
            return goClient(bo);
        }
        Duration c0 = cpu(ProcessHandle.current());
        Bench.Result r = switch (client) {
            case "weft", "virtual" -> {
                try (Transport t = LoadClient.transport(threads)) {
                    yield Bench.run(bo, Bench.sender(t, List.of(CallRequest.get(url)), TIMEOUT), null, false);
                }
            }
            case "jdk" -> {
                try (ExecutorService ex = Executors.newVirtualThreadPerTaskExecutor();
                     HttpClient c = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).executor(ex)
                             .connectTimeout(Duration.ofSeconds(2)).build()) {
                    HttpRequest req = HttpRequest.newBuilder(URI.create(url)).timeout(TIMEOUT).GET().build();
                    yield Bench.run(bo, (target, measured) -> {
                        HttpResponse<byte[]> x = c.send(req, HttpResponse.BodyHandlers.ofByteArray());
                        return x.statusCode() < 400 ? null : "status-" + x.statusCode();
                    }, null, false);
                }
            }
            case "apache", "pool-80" -> {
                try (CloseableHttpClient c = HttpClients.custom().setConnectionManager(
                        PoolingHttpClientConnectionManagerBuilder.create().setMaxConnTotal(threads)
                                .setMaxConnPerRoute(threads).build()).build()) {
                    yield Bench.run(client.equals("pool-80") ? bo.withPlatformThreads() : bo, (target, measured) ->
                            c.execute(new HttpGet(url), x -> {
                                EntityUtils.consume(x.getEntity());
                                return x.getCode() < 400 ? null : "status-" + x.getCode();
                            }), null, false);
                }
            }
            case "jetty" -> {
                org.eclipse.jetty.client.HttpClient c = new org.eclipse.jetty.client.HttpClient();
                c.setMaxConnectionsPerDestination(threads);
                c.setMaxRequestsQueuedPerDestination(threads * 2);
                c.start();
                try {
                    yield Bench.run(bo, (target, measured) -> {
                        ContentResponse x = c.newRequest(url).timeout(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS).send();
                        return x.getStatus() < 400 ? null : "status-" + x.getStatus();
                    }, null, false);
                } finally {
                    c.stop();
                }
            }
            case "helidon" -> {
                WebClient c = WebClient.builder().connectionCacheSize(threads).readTimeout(TIMEOUT).build();
                URI u = URI.create(url); // get(String) would percent-encode the '?' into the path
                yield Bench.run(bo, (target, measured) -> {
                    try (HttpClientResponse x = c.get().uri(u).request()) {
                        x.as(byte[].class);
                        return x.status().code() < 400 ? null : "status-" + x.status().code();
                    }
                }, null, false);
            }
            case "raw" -> {
                try (RawClient c = new RawClient(URI.create(url))) {
                    yield Bench.run(bo, (target, measured) -> {
                        int status = c.get();
                        return status < 400 ? null : "status-" + status;
                    }, null, false);
                }
            }
            case "async-128" -> {
                Vertx vertx = Vertx.vertx();
                try {
                    URI u = URI.create(url);
                    HttpClientAgent c = vertx.createHttpClient(new PoolOptions().setHttp1MaxSize(128)
                            .setMaxWaitQueueSize(threads * 2));
                    RequestOptions ro = new RequestOptions().setMethod(HttpMethod.GET).setHost(u.getHost())
                            .setPort(u.getPort()).setURI(u.getRawPath() + "?" + u.getRawQuery())
                            .setTimeout(TIMEOUT.toMillis());
                    // The harness waits on each future from a virtual thread; the requests themselves are the
                    // client's, on its event loops, over its 128 connections.
                    yield Bench.run(bo, (target, measured) -> {
                        int status = c.request(ro).compose(req -> req.send())
                                .compose(resp -> resp.body().map(b -> resp.statusCode()))
                                .toCompletionStage().toCompletableFuture().get();
                        return status < 400 ? null : "status-" + status;
                    }, null, false);
                } finally {
                    vertx.close().toCompletionStage().toCompletableFuture().get();
                }
            }
            default -> throw new IllegalArgumentException("unknown client '" + client + "'; known: " + CLIENTS.keySet());
        };
        return new Measured(r, cpu(ProcessHandle.current()).minus(c0));
    }

    /** Seed 002's Go client in a process of its own; its per-request lines become a {@link Bench.Result}. */
    private static Measured goClient(Bench.Options bo) throws Exception {
        List<String> cmd = List.of(GoPeers.build("go-client").toString(), bo.urls().getFirst(),
                String.valueOf(bo.concurrency()), bo.warmup().toMillis() + "ms", bo.duration().toMillis() + "ms");
        try (ChildProcess p = ChildProcess.start(cmd, "the Go client")) {
            Histogram h = new Histogram(3);
            Map<String, Long> reasons = new TreeMap<>();
            long requests = 0;
            long ok = 0;
            BufferedReader r = p.output();
            Duration cpu;
            for (String line = r.readLine(); ; line = r.readLine()) {
                if (line == null) {
                    throw new java.io.IOException("the Go client ended without its END line");
                }
                if (line.equals("END")) {
                    cpu = p.cpu();
                    break;
                }
                requests++;
                if (line.startsWith("ok ")) {
                    ok++;
                    h.recordValue(Math.max(1, Long.parseLong(line.substring(3))));
                } else {
                    reasons.merge(line.substring(line.indexOf(' ') + 1), 1L, Long::sum);
                }
            }
            return new Measured(new Bench.Result(bo, requests, ok, reasons, 0, bo.duration().toNanos() / 1e9, h,
                    new Histogram(3)), cpu);
        }
    }

    /** The rows as a Markdown table, with raw counts. */
    public static String table(List<Row> rows) {
        StringBuilder sb = new StringBuilder();
        sb.append("| backend latency | client | concurrency | req/s | p50 ms | p99 ms | p99.9 ms | max ms | requests "
                + "| errors | client CPU s | backend CPU s |\n");
        sb.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (Row r : rows) {
            Bench.Result x = r.result();
            sb.append(String.format(Locale.ROOT, "| %s | %s | %d | %.0f | %.2f | %.2f | %.2f | %.2f | %d | %d%s | %.1f | %s |%n",
                    Durations.format(r.latency()), r.client(), r.threads(), x.throughput(), x.percentileMillis(50),
                    x.percentileMillis(99), x.percentileMillis(99.9), x.maxMillis(), x.requests(), x.errors(),
                    x.errors() > 0 ? " " + x.errorsByReason() : "", r.clientCpu().toMillis() / 1000.0,
                    r.backendCpu() == null ? "n/a" : String.format(Locale.ROOT, "%.1f", r.backendCpu().toMillis() / 1000.0)));
        }
        sb.append("\nCPU seconds cover warm-up and measurement of each run; the machine has ")
                .append(Runtime.getRuntime().availableProcessors()).append(" cores shared by both processes.\n");
        return sb.toString();
    }

    private static Map<String, String> ordered(String... kv) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put(kv[i], kv[i + 1]);
        }
        return java.util.Collections.unmodifiableMap(m);
    }

    private static Map<String, String> all() {
        Map<String, String> m = new LinkedHashMap<>(SHOOTOUT);
        m.putAll(SEED_002);
        return java.util.Collections.unmodifiableMap(m);
    }
}
