package dev.weft.lab;

import dev.weft.devtools.ChildProcess;

import dev.weft.client.CallRequest;
import dev.weft.client.CallResult;
import dev.weft.client.Transport;

import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * {@code weft lab servers}: inbound HTTP/1.1 servers on virtual threads side by side, one trivial route,
 * each server in a JVM of its own, the same closed-loop client for all.
 */
public final class ServersLab {
    public static final List<String> SERVERS = List.of("weft", "jetty", "helidon");
    /** Also accepted by {@code --servers}: weft's server with inbound TLS (TLS 1.3, a self-signed RSA-2048 certificate). */
    public static final String WEFT_TLS = "weft-tls";

    public record Options(List<String> servers, List<Integer> concurrency, Duration warmup, Duration duration) {
    }

    public record Row(String server, int concurrency, Bench.Result result, double cpuSeconds, long peakRssMb,
                      long threads) {
    }

    private ServersLab() {
    }

    private static Bench.Options options(ChildProcess svc, int concurrency, Duration warmup, Duration duration) {
        return new Bench.Options(List.of(svc.ready() + "/lab"), "GET", dev.weft.http.Headers.EMPTY, null, 0,
                concurrency, warmup, duration, Duration.ofSeconds(30));
    }

    public static List<Row> run(Options o, PrintWriter out, PrintWriter progress) throws Exception {
        List<Row> rows = new ArrayList<>();
        int max = o.concurrency().stream().mapToInt(Integer::intValue).max().orElse(1);
        java.nio.file.Path certDir = null;
        if (o.servers().contains(WEFT_TLS)) {
            // the same client, trusting the lab's certificate: it takes the JVM's default TLS context
            certDir = java.nio.file.Files.createTempDirectory("weft-lab-tls");
            dev.weft.devtools.TestCerts certs = dev.weft.devtools.TestCerts.selfSigned(certDir);
            javax.net.ssl.SSLContext.setDefault(dev.weft.core.tls.Pem.clientContext(certs.cert()));
        }
        try (Transport client = LoadClient.transport(max)) {
            for (String server : o.servers()) {
                List<String> args = server.equals(WEFT_TLS)
                        ? List.of(server, certDir.resolve("cert.pem").toString(), certDir.resolve("key.pem").toString())
                        : List.of(server);
                try (ChildProcess svc = ChildProcess.startJvm(List.of("-Xmx1g", "-XX:+UseG1GC"), ServerProcess.class,
                        args)) {
                    CallRequest req = CallRequest.get(svc.ready() + "/lab");
                    Bench.Sender send = Bench.sender(client, List.of(req), Duration.ofSeconds(30));
                    CallResult first = client.call(req, Duration.ofSeconds(10));
                    if (!first.ok() || !first.bodyText().equals(new String(ServerProcess.BODY,
                            java.nio.charset.StandardCharsets.UTF_8))) {
                        throw new IllegalStateException(server + " did not answer the route as expected: " + first);
                    }
                    progress.println("lab servers: " + server + " answers; warming its JIT for 10s ...");
                    progress.flush();
                    Bench.run(options(svc, Math.min(100, max), Duration.ZERO, Duration.ofSeconds(10)), send, null, false);
                    for (int c : o.concurrency()) {
                        Duration cpu0 = svc.cpu();
                        Bench.Result r = Bench.run(options(svc, c, o.warmup(), o.duration()), send, null, false);
                        rows.add(new Row(server, c, r, svc.cpu().minus(cpu0).toMillis() / 1000.0, svc.procStatus("VmHWM"),
                                svc.procStatus("Threads")));
                        progress.printf(Locale.ROOT, "lab servers: %s at %d connections: %.0f req/s, p99 %.1f ms, %d errors%n",
                                server, c, r.throughput(), r.percentileMillis(99), r.errors());
                        progress.flush();
                    }
                }
            }
        }
        StringBuilder sb = new StringBuilder();
        sb.append("| server | connections | req/s | p50 ms | p99 ms | errors | server CPU s | server peak RSS MB | server OS threads |\n");
        sb.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (Row r : rows) {
            Bench.Result x = r.result();
            sb.append(String.format(Locale.ROOT, "| %s | %d | %.0f | %.2f | %.2f | %d%s | %.1f | %d | %d |%n", r.server(),
                    r.concurrency(), x.throughput(), x.percentileMillis(50), x.percentileMillis(99), x.errors(),
                    x.errors() > 0 ? " " + x.errorsByReason() : "", r.cpuSeconds(), r.peakRssMb(), r.threads()));
        }
        sb.append("\nServer CPU seconds cover warm-up and measurement of each run; client and server share the machine's ")
                .append(Runtime.getRuntime().availableProcessors()).append(" cores.\n");
        out.println(sb);
        return rows;
    }
}
