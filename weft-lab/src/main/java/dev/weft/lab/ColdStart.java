package dev.weft.lab;

import dev.weft.client.CallRequest;
import dev.weft.client.Transport;
import dev.weft.core.Durations;
import dev.weft.devtools.ChildProcess;
import dev.weft.devtools.UpstreamProcess;
import dev.weft.http.Headers;
import dev.weft.lab.peers.GoPeers;

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
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * {@code weft lab system-a --cold}: how soon a fresh process serves at full speed. Each model and latency gets a
 * fresh service process, one request to check it answers, then straight away {@code concurrency} closed-loop clients
 * for {@code duration}, nothing unmeasured. The answers are counted in {@value #BUCKET_MS} ms buckets from the
 * first request of the loop; the steady rate is that of the last third of the run, and the time to 90% is when the
 * rate over the trailing second first reaches 90% of it (docs/design/lab.md).
 */
public final class ColdStart {
    static final int BUCKET_MS = 250;
    /** Buckets in the trailing window the time to 90% reads (one second). */
    static final int WINDOW = 1000 / BUCKET_MS;

    /** One fresh process's run: answers below 400 per bucket, and what they say. */
    public record Row(String model, Duration latency, long[] okPerBucket, Bench.Result result) {
        /** Answers below 400 a second over the last third of the run. */
        public double steady() {
            int n = okPerBucket.length;
            int from = n - Math.max(1, n / 3);
            long sum = 0;
            for (int i = from; i < n; i++) {
                sum += okPerBucket[i];
            }
            return sum * 1000.0 / ((n - from) * (double) BUCKET_MS);
        }

        /**
         * Seconds from the loop's first request until the rate over the trailing second first reached 90% of
         * {@link #steady()}; NaN if it never did.
         */
        public double secondsTo90() {
            return secondsTo(okPerBucket, 0.9 * steady());
        }

        /** Answers below 400 in the first second. */
        public long firstSecond() {
            long sum = 0;
            for (int i = 0; i < Math.min(WINDOW, okPerBucket.length); i++) {
                sum += okPerBucket[i];
            }
            return sum;
        }
    }

    /** The end of the first trailing one-second window of {@code buckets} whose rate is at least {@code rate}. */
    static double secondsTo(long[] buckets, double rate) {
        long window = 0;
        for (int i = 0; i < buckets.length; i++) {
            window += buckets[i];
            if (i >= WINDOW) {
                window -= buckets[i - WINDOW];
            }
            double seconds = Math.min(i + 1, WINDOW) * BUCKET_MS / 1000.0;
            if (window / seconds >= rate) {
                return (i + 1) * BUCKET_MS / 1000.0;
            }
        }
        return Double.NaN;
    }

    private ColdStart() {
    }

    /** Every model at every latency, each a fresh process; models that cannot run here are skipped with the reason. */
    public static List<Row> run(SystemALab.Options o, PrintWriter out, PrintWriter progress) throws Exception {
        List<Row> rows = new ArrayList<>();
        Map<String, String> skipped = new LinkedHashMap<>();
        try (UpstreamProcess backends = UpstreamProcess.start(List.of(new InetSocketAddress("127.0.0.2", 0),
                new InetSocketAddress("127.0.0.3", 0), new InetSocketAddress("127.0.0.4", 0)))) {
            List<String> b = backends.urls();
            out.println("backends: B " + b.get(0) + ", C " + b.get(1) + ", D " + b.get(2) + " (weft-upstream, one JVM)");
            out.print(SystemALab.describe(o.models()));
            out.println("cold: each row a fresh process, one request to check it, then " + o.concurrency()
                    + " closed-loop clients for " + Durations.format(o.duration()) + " with nothing left out; answers "
                    + "counted in " + BUCKET_MS + " ms buckets");
            out.println("warm-up: weft-upstream and this load generator first take --warmup (" + Durations.format(o.warmup())
                    + ") of " + o.concurrency() + " closed-loop clients straight at the backends, so that only the "
                    + "service is cold in each row (the first model would otherwise also meet cold backends and a "
                    + "cold generator, and the models after it warm ones)");
            out.println();
            out.flush();
            warmBackends(b, o, progress);
            Path config = Files.createTempFile("weft-lab-cold", ".yaml");
            try {
                Files.writeString(config, SystemALab.config(b, o.concurrency()));
                for (String model : o.models()) {
                    for (Duration latency : o.latencies()) {
                        ChildProcess svc;
                        try {
                            svc = SystemALab.start(model, config, b, o.concurrency());
                        } catch (GoPeers.Unavailable e) {
                            skipped.put(model, e.getMessage());
                            progress.println("lab system-a --cold: SKIPPED " + model + ": " + e.getMessage());
                            progress.flush();
                            break;
                        }
                        try (svc; Transport client = LoadClient.transport(o.concurrency())) {
                            SystemALab.check(client, svc.ready());
                            progress.printf("lab system-a --cold: %s at %s, %d clients at once for %s ...%n", model,
                                    Durations.format(latency), o.concurrency(), Durations.format(o.duration()));
                            progress.flush();
                            Row r = measure(o, model, latency, svc.ready(), client);
                            String died = svc.exited();
                            if (died != null) {
                                skipped.put(model, "stopped at latency " + Durations.format(latency) + ": " + died);
                                continue;
                            }
                            rows.add(r);
                            progress.printf(Locale.ROOT, "lab system-a --cold: %s at %s: steady %.0f req/s, 90%% of "
                                    + "it after %.2f s, %d answers in the first second%n", model,
                                    Durations.format(latency), r.steady(), r.secondsTo90(), r.firstSecond());
                            progress.flush();
                        }
                    }
                }
            } finally {
                Files.deleteIfExists(config);
            }
        }
        out.println(table(rows, skipped));
        out.flush();
        return rows;
    }

    /**
     * Closed-loop load straight at the backends (each model's path with the first latency) for --warmup: weft-upstream
     * and the lab's own sending and counting code are then compiled before the first model's row, as they are
     * before every later one.
     */
    static void warmBackends(List<String> b, SystemALab.Options o, PrintWriter progress) throws InterruptedException {
        if (o.warmup().isZero()) {
            return;
        }
        String latency = Durations.format(o.latencies().get(0));
        List<String> urls = List.of(b.get(0) + "/b/1?latency=" + latency, b.get(1) + "/c/1?latency=" + latency,
                b.get(2) + "/d/1?latency=" + latency);
        progress.printf("lab system-a --cold: warming weft-upstream and the generator for %s (%d clients) ...%n",
                Durations.format(o.warmup()), o.concurrency());
        progress.flush();
        try (Transport client = LoadClient.transport(o.concurrency())) {
            Bench.Result r = Bench.run(new Bench.Options(urls, "GET", Headers.EMPTY, null, 0, o.concurrency(),
                    Duration.ZERO, o.warmup(), Duration.ofSeconds(60)), Bench.sender(client,
                    urls.stream().map(CallRequest::get).toList(), Duration.ofSeconds(60)), null, false);
            progress.printf(Locale.ROOT, "lab system-a --cold: warm-up %.0f calls/s, %d errors%n", r.throughput(),
                    r.errors());
            progress.flush();
        }
    }

    static Row measure(SystemALab.Options o, String model, Duration latency, String base, Transport client)
            throws InterruptedException {
        String url = base + "/a/1?latency=" + Durations.format(latency);
        int buckets = (int) Math.max(1, o.duration().toMillis() / BUCKET_MS);
        AtomicLongArray ok = new AtomicLongArray(buckets);
        Bench.Sender inner = Bench.sender(client, List.of(CallRequest.get(url)), Duration.ofSeconds(60));
        long start = System.nanoTime();
        Bench.Sender counted = (target, measured) -> {
            String why = inner.send(target, measured);
            if (why == null) {
                int i = (int) ((System.nanoTime() - start) / 1_000_000 / BUCKET_MS);
                if (i >= 0 && i < buckets) {
                    ok.incrementAndGet(i);
                }
            }
            return why;
        };
        Bench.Result r = Bench.run(new Bench.Options(List.of(url), "GET", Headers.EMPTY, null, 0, o.concurrency(),
                Duration.ZERO, o.duration(), Duration.ofSeconds(60)), counted, null, false);
        long[] series = new long[buckets];
        for (int i = 0; i < buckets; i++) {
            series[i] = ok.get(i);
        }
        return new Row(model, latency, series, r);
    }

    /** The rows, then each row's answers a second, second by second. */
    static String table(List<Row> rows, Map<String, String> skipped) {
        StringBuilder sb = new StringBuilder();
        sb.append("| backend latency | model | steady req/s (last third) | first second | 90% of steady after s "
                + "| req/s | p99 ms | errors |\n|---|---|---:|---:|---:|---:|---:|---:|\n");
        for (Row r : rows) {
            sb.append(String.format(Locale.ROOT, "| %s | %s | %.0f | %d | %s | %.0f | %.1f | %d |%n",
                    Durations.format(r.latency()), r.model(), r.steady(), r.firstSecond(),
                    Double.isNaN(r.secondsTo90()) ? "never" : String.format(Locale.ROOT, "%.2f", r.secondsTo90()),
                    r.result().throughput(), r.result().percentileMillis(99), r.result().errors()));
        }
        sb.append("\nAnswers below 400 per second, from the loop's first request:\n\n");
        for (Row r : rows) {
            List<String> perSecond = new ArrayList<>();
            long[] s = r.okPerBucket();
            for (int i = 0; i + WINDOW <= s.length; i += WINDOW) {
                long sum = 0;
                for (int j = i; j < i + WINDOW; j++) {
                    sum += s[j];
                }
                perSecond.add(Long.toString(sum));
            }
            sb.append("- ").append(r.model()).append(" at ").append(Durations.format(r.latency())).append(": ")
                    .append(String.join(" ", perSecond)).append('\n');
        }
        skipped.forEach((m, why) -> sb.append("\nSkipped ").append(m).append(": ").append(why).append('\n'));
        return sb.toString();
    }
}
