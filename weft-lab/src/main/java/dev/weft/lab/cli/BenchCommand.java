package dev.weft.lab.cli;

import dev.weft.cli.UserException;
import dev.weft.json.Json;
import dev.weft.http.Headers;
import dev.weft.lab.Bench;
import dev.weft.lab.Machine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

@Command(name = "bench",
        mixinStandardHelpOptions = true,
        description = {
                "Load an HTTP service and report what it did: throughput, latency percentiles (HdrHistogram: p50,",
                "p90, p99, p99.9, max), errors by reason.",
                "",
                "Closed loop (default): --concurrency C requests in flight, each sent when the previous one is",
                "answered. Open loop: --rate R requests per second on a fixed schedule, at most --concurrency in",
                "flight; latency counts from each request's scheduled start, so time spent waiting behind a slow",
                "answer counts against the service (coordinated omission corrected, as in wrk2), and the report",
                "says plainly when the generator itself could not keep up.",
                "",
                "Several URLs are used in turn. Only requests started (closed) or scheduled (open) inside the",
                "measured window count, and each of them is waited for. Retries are off: every failure is counted.",
                ""},
        footer = {"", "Examples:",
                "  weft bench --concurrency 200 --duration 30s http://127.0.0.1:8080/a/1",
                "  weft bench --rate 2000 --duration 1m --json out.json http://127.0.0.1:8080/a/1"})
public final class BenchCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Parameters(arity = "1..*", paramLabel = "URL", description = "Target URLs (http://host:port/path?query).")
    List<String> urls;

    @Option(names = {"-c", "--concurrency"}, paramLabel = "C", defaultValue = "100",
            description = "Closed loop: requests in flight. Open loop: the most in flight at once. Default: ${DEFAULT-VALUE}.")
    int concurrency;

    @Option(names = {"-r", "--rate"}, paramLabel = "R", defaultValue = "0",
            description = "Open loop at R requests per second (0: closed loop). Default: ${DEFAULT-VALUE}.")
    double rate;

    @Option(names = {"-d", "--duration"}, paramLabel = "D", defaultValue = "10s",
            description = "Measured time. Default: ${DEFAULT-VALUE}.")
    Duration duration;

    @Option(names = "--warmup", paramLabel = "D", defaultValue = "2s",
            description = "Unmeasured time before it. Default: ${DEFAULT-VALUE}.")
    Duration warmup;

    @Option(names = {"-m", "--method"}, paramLabel = "METHOD", defaultValue = "GET",
            description = "HTTP method. Default: ${DEFAULT-VALUE}.")
    String method;

    @Option(names = {"-H", "--header"}, paramLabel = "'NAME: VALUE'", description = "A request header; repeatable.")
    List<String> headers = new ArrayList<>();

    @Option(names = "--body", paramLabel = "TEXT", description = "Request body.")
    String body;

    @Option(names = "--body-file", paramLabel = "FILE", description = "Request body from a file.")
    Path bodyFile;

    @Option(names = "--timeout", paramLabel = "D", defaultValue = "30s",
            description = "Longest wait for one answer; longer counts as an error. Default: ${DEFAULT-VALUE}.")
    Duration timeout;

    @Option(names = "--json", paramLabel = "FILE", description = "Also write the result as JSON to FILE.")
    Path json;

    @Override
    public void run() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        if (concurrency < 1 || concurrency > 15_000) {
            throw new UserException("--concurrency must be 1..15000 (each request in flight holds a socket; a process "
                    + "may hold 20,000 file descriptors)", null, 2);
        }
        if (rate < 0 || rate > 1_000_000) {
            throw new UserException("--rate must be 0 (closed loop) .. 1000000", null, 2);
        }
        if (duration.isZero() || duration.isNegative() || warmup.isNegative() || timeout.isZero() || timeout.isNegative()) {
            throw new UserException("--duration and --timeout must be positive, --warmup not negative", null, 2);
        }
        for (String u : urls) {
            URI uri;
            try {
                uri = URI.create(u);
            } catch (IllegalArgumentException e) {
                throw new UserException("not a URL: " + u + " (" + e.getMessage() + ")", null, 2);
            }
            if (!"http".equals(uri.getScheme()) && !"https".equals(uri.getScheme()) || uri.getHost() == null) {
                throw new UserException("not an http(s) URL with a host: " + u, null, 2);
            }
        }
        if (body != null && bodyFile != null) {
            throw new UserException("give --body or --body-file, not both", null, 2);
        }
        byte[] payload;
        try {
            payload = bodyFile != null ? Files.readAllBytes(bodyFile) : body != null ? body.getBytes(StandardCharsets.UTF_8) : null;
        } catch (IOException e) {
            throw new UserException("cannot read --body-file " + bodyFile + ": " + e.getMessage(), e, 2);
        }
        List<Map.Entry<String, String>> hs = new ArrayList<>();
        for (String h : headers) {
            int colon = h.indexOf(':');
            if (colon <= 0) {
                throw new UserException("--header must be 'NAME: VALUE', got '" + h + "'", null, 2);
            }
            hs.add(Map.entry(h.substring(0, colon).strip(), h.substring(colon + 1).strip()));
        }
        Bench.Options o = new Bench.Options(urls, method, Headers.of(hs), payload, rate, concurrency, warmup, duration,
                timeout);
        String command = "weft " + String.join(" ", spec.commandLine().getParseResult().originalArgs());
        out.println("command: " + command);
        out.println("machine: " + Machine.describe());
        out.println("started: " + Instant.now());
        out.flush();
        Bench.Result r;
        try {
            r = Bench.run(o, err, System.console() != null);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new UserException("interrupted", e);
        }
        out.print(Bench.report(r));
        out.flush();
        if (json != null) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("command", command);
            m.put("machine", Machine.describe());
            m.putAll(Bench.json(r));
            try {
                Json.MAPPER.writerWithDefaultPrettyPrinter().writeValue(json.toFile(), m);
            } catch (IOException e) {
                throw new UserException("cannot write --json " + json + ": " + e.getMessage(), e);
            }
            out.println("wrote " + json);
        }
        if (r.ok() == 0 && r.requests() > 0) {
            throw new UserException("every request failed (" + r.errorsByReason() + ")", null, 1);
        }
    }
}
