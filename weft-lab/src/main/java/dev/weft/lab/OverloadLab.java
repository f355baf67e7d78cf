package dev.weft.lab;

import dev.weft.client.CallRequest;
import dev.weft.client.CallResult;
import dev.weft.http.Headers;
import dev.weft.client.Transport;
import dev.weft.json.Json;
import dev.weft.core.Durations;
import dev.weft.devtools.ChildProcess;
import dev.weft.devtools.UpstreamProcess;
import dev.weft.lab.peers.GoPeers;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.style.markers.SeriesMarkers;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code weft lab overload}: offered load past capacity. System A's route (B, C and D called in parallel, weft-upstream
 * at latency L on 127.0.0.2-4), the gateway with its default config but for the route's timeouts. The capacity is
 * measured first on the first model (by default weft-static, the default config): the highest rate it serves
 * cleanly ({@link #capacity}); then each model, in a fresh process, settles for {@link #SETTLE} at 1x, then (unless
 * {@code cold}) for {@link #SETTLE_OVERLOAD} at the highest factor if it is above 1x, and gets an open-loop load (a
 * fixed schedule, {@link Bench}) at each multiple of it, lowest first. Per step: goodput (answers below 400 per
 * second), the share of 503s, p50/p99 of the answered requests (from their scheduled start), p99 of
 * the 503s (from their send), other failures, the breaker openings in the gateway over the step, and the
 * generator's p99 send delay (how late it sent against the schedule).
 */
public final class OverloadLab {
    public static final Map<String, String> MODELS = models();

    private static Map<String, String> models() {
        Map<String, String> m = new LinkedHashMap<>();
        // weft-static first: the capacity is measured on the first model in a closed loop past the CPU, which the
        // adaptive limit answers with 503s by design (a closed loop sends each again at once)
        m.put("weft-static", "weft gateway, admission.enabled: false (only limits.max_concurrent)");
        m.put("weft", "weft gateway, default config (the adaptive admission limit)");
        m.put("go", "Go net/http with a goroutine per call (lab/peers/go)");
        return java.util.Collections.unmodifiableMap(m);
    }

    /**
     * @param pin       the service on CPUs of its own, or null: everything shares the machine
     * @param admission more keys of the {@code weft} model's {@code admission:} block, YAML flow style (such as
     *                  {@code queue: 0, lag_target: 10ms}), or empty for the defaults
     * @param cold      no overload in the settle: the first step past 1x is the process's first overload, whose
     *                  refusal path runs cold (docs/design/lab.md)
     */
    public record Options(List<String> models, Duration latency, List<Double> factors, double capacity,
                          Duration warmup, Duration duration, int maxInFlight, CpuPin pin, String admission,
                          boolean cold) {
    }

    /**
     * @param gatewayShedP99Millis the gateway's own p99 of its 503s, from the request read to the answer
     *                             ({@code weft_admission_shed_duration_seconds}), as a bucket bound; NaN: none or not
     *                             a Weft gateway
     * @param lagP99Millis         the gateway's p99 scheduler lag ({@code weft_scheduler_lag_seconds}), a bucket bound
     * @param lagMaxMillis         its worst wake-up in the step, a bucket bound: one stall of 600 ms is one late
     *                             wake-up of ~600, below the p99, yet it holds up every request that arrives in it
     * @param gcPauseMillis        the gateway's stop-the-world collector pauses in the step, in all
     *                             ({@code jvm_gc_pause_seconds_sum}); NaN: none known
     * @param gcPauseMaxMillis     its longest pause in the step, a bucket bound ({@code jvm_gc_pause_seconds}): a
     *                             pause stops the front door too, so a 503 whose request came during it waits for its
     *                             end (docs/design/memory.md)
     */
    public record Step(String model, double factor, double offered, Bench.Result result, double shedP99Millis,
                       long breakerOpenings, double gatewayShedP99Millis, double lagP99Millis, double lagMaxMillis,
                       double gcPauseMillis, double gcPauseMaxMillis) {
        long count(String outcome) {
            return result.errorsByReason().getOrDefault(outcome, 0L);
        }

        double share503() {
            return result.requests() == 0 ? 0 : count("status-503") / (double) result.requests();
        }

        long otherFailures() {
            return result.errors() - count("status-503") + result.notSent();
        }

        /**
         * The generator's p99 delay between a request's scheduled and actual send: where it is large the step was
         * not offered on schedule (the generator's CPU or in-flight limit), and arrivals came in bursts.
         */
        double sendDelayP99Millis() {
            return result.sendLag().getTotalCount() == 0 ? 0 : result.sendLag().getValueAtPercentile(99) / 1000.0;
        }

        Map<String, Object> json() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("model", model);
            m.put("factor", factor);
            m.put("offered", Math.round(offered));
            m.put("goodput", Math.round(result.throughput()));
            m.put("share_503", Math.round(share503() * 1000) / 1000.0);
            m.put("p50_ms", result.percentileMillis(50));
            m.put("p99_ms", result.percentileMillis(99));
            m.put("p99_503_ms", Double.isNaN(shedP99Millis) ? null : shedP99Millis);
            m.put("other_failures", otherFailures());
            m.put("errors_by_reason", result.errorsByReason());
            m.put("not_sent", result.notSent());
            m.put("breaker_openings", breakerOpenings < 0 ? null : breakerOpenings);
            m.put("send_delay_p99_ms", sendDelayP99Millis());
            m.put("gateway_503_p99_ms", Double.isNaN(gatewayShedP99Millis) ? null : gatewayShedP99Millis);
            m.put("gateway_lag_p99_ms", Double.isNaN(lagP99Millis) ? null : lagP99Millis);
            m.put("gateway_lag_max_ms", Double.isNaN(lagMaxMillis) ? null : lagMaxMillis);
            m.put("gateway_gc_pause_ms", Double.isNaN(gcPauseMillis) ? null : Math.round(gcPauseMillis * 10) / 10.0);
            m.put("gateway_gc_pause_max_ms", Double.isNaN(gcPauseMaxMillis) ? null : gcPauseMaxMillis);
            return m;
        }
    }

    public record Report(double capacity, List<Step> steps, Map<String, String> skipped, Path dir) {
    }

    private OverloadLab() {
    }

    /** @param admission null: off (weft-static); else keys of the admission block (empty: the default config) */
    static String config(List<String> b, String admission) {
        StringBuilder sb = new StringBuilder("listen: 127.0.0.1:0\n");
        if (admission == null) {
            sb.append("admission: { enabled: false }\n");
        } else if (!admission.isBlank()) {
            sb.append("admission: { ").append(admission.strip()).append(" }\n");
        }
        sb.append("routes:\n  - get: /a/{id}\n    timeout: 10s\n    calls:\n");
        String[] names = {"b", "c", "d"};
        for (int i = 0; i < 3; i++) {
            sb.append("      ").append(names[i]).append(": { url: \"").append(b.get(i)).append('/').append(names[i])
                    .append("/{path.id}?latency={query.latency}\", timeout: 5s }\n");
        }
        return sb.toString();
    }

    public static Report run(Options o, Path resultsRoot, String command, PrintWriter out, PrintWriter progress)
            throws Exception {
        String stamp = DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss").withZone(ZoneOffset.UTC).format(Instant.now());
        Path dir = resultsRoot.resolve("overload-" + stamp);
        Files.createDirectories(dir);
        List<Step> steps = new ArrayList<>();
        Map<String, String> skipped = new LinkedHashMap<>();
        double capacity = o.capacity();
        boolean headerPrinted = false;
        List<String> prefix = List.of();
        if (o.pin() != null) {
            o.pin().pinThisProcess(); // before the backends start: they inherit it
            prefix = o.pin().prefix();
            out.println("cpus: " + o.pin().describe());
        }
        try (UpstreamProcess backends = UpstreamProcess.start(List.of(new InetSocketAddress("127.0.0.2", 0),
                new InetSocketAddress("127.0.0.3", 0), new InetSocketAddress("127.0.0.4", 0)))) {
            List<String> b = backends.urls();
            Path withAdmission = Files.createTempFile("weft-lab-overload", ".yaml");
            Path without = Files.createTempFile("weft-lab-overload-static", ".yaml");
            Files.writeString(withAdmission, config(b, o.admission() == null ? "" : o.admission()));
            Files.writeString(without, config(b, null));
            try {
                for (String model : o.models()) {
                    ChildProcess svc;
                    try {
                        svc = switch (model) {
                            case "weft" -> ChildProcess.startJvm(prefix, SystemALab.serviceJvmFlags(), GatewayProcess.class,
                                    List.of(withAdmission.toString(), "virtual"));
                            case "weft-static" -> ChildProcess.startJvm(prefix, SystemALab.serviceJvmFlags(), GatewayProcess.class,
                                    List.of(without.toString(), "virtual"));
                            case "go" -> ChildProcess.start(concat(prefix, List.of(GoPeers.build("go").toString(),
                                    b.get(0), b.get(1), b.get(2), String.valueOf(o.maxInFlight() + 100))), "the Go peer");
                            default -> throw new IllegalArgumentException("unknown model " + model);
                        };
                    } catch (GoPeers.Unavailable e) {
                        skipped.put(model, e.getMessage());
                        progress.println("lab overload: SKIPPED " + model + ": " + e.getMessage());
                        progress.flush();
                        continue;
                    }
                    try (svc; Transport client = LoadClient.transport(o.maxInFlight())) {
                        String base = svc.ready();
                        String warm = base + "/a/1?latency=0ms";
                        CallResult first = client.call(CallRequest.get(warm), Duration.ofSeconds(30));
                        if (!first.ok()) {
                            throw new IOException(model + " failed its first request: " + first);
                        }
                        get(client, warm, 0, 200, Duration.ZERO, SystemALab.JIT_WARMUP, Duration.ofSeconds(60));
                        String url = base + "/a/1?latency=" + Durations.format(o.latency());
                        if (capacity <= 0) {
                            capacity = capacity(o, model, url, client, out, progress);
                        }
                        // the first step after a start was measured cold (a first 1x with p50 3.5 s and 5,024
                        // requests not sent, then 251 ms at the same rate a minute later): settle at 1x first
                        progress.printf(Locale.ROOT, "lab overload: %s settling at 1x = %.0f req/s for %s (not measured) ...%n",
                                model, capacity, Durations.format(SETTLE));
                        progress.flush();
                        get(client, url, capacity, o.maxInFlight(), Duration.ZERO, SETTLE, Duration.ofSeconds(30));
                        Thread.sleep(o.latency().toMillis() + 2000);
                        double most = o.factors().stream().mapToDouble(Double::doubleValue).max().orElse(1);
                        if (!o.cold() && most > 1) {
                            // A process's first overload is slower than any later one: the refusal path has never
                            // run at volume (JIT) and the heap grows to the load (docs/design/lab.md: the first 2x
                            // step after
                            // 1x missed the 503 target in half the runs, a 2x step after a second 1x never did)
                            progress.printf(Locale.ROOT, "lab overload: %s settling at %sx = %.0f req/s for %s (not "
                                    + "measured; --cold leaves it out) ...%n", model, most, capacity * most,
                                    Durations.format(SETTLE_OVERLOAD));
                            progress.flush();
                            get(client, url, capacity * most, o.maxInFlight(), Duration.ZERO, SETTLE_OVERLOAD,
                                    Duration.ofSeconds(30));
                            Thread.sleep(o.latency().toMillis() + 2000);
                        }
                        if (!headerPrinted) {
                            out.print(header());
                            headerPrinted = true;
                        }
                        for (double f : o.factors()) {
                            Step s = step(o, model, f, capacity, url, base, client, progress);
                            steps.add(s);
                            out.print(line(s));
                            out.flush();
                            Thread.sleep(o.latency().toMillis() + 2000); // let the step's requests drain
                        }
                    }
                }
            } finally {
                Files.deleteIfExists(withAdmission);
                Files.deleteIfExists(without);
            }
        }
        Report r = new Report(capacity, steps, skipped, dir);
        write(r, o, command);
        return r;
    }

    /** GETs of {@code url} with the lab's transport: open loop at {@code rate}, closed loop when it is 0. */
    private static Bench.Result get(Transport client, String url, double rate, int inFlight, Duration warmup,
                                    Duration duration, Duration timeout) throws InterruptedException {
        return Bench.run(new Bench.Options(List.of(url), "GET", Headers.EMPTY, null, rate, inFlight, warmup, duration,
                timeout), Bench.sender(client, List.of(CallRequest.get(url)), timeout), null, false);
    }

    private static List<String> concat(List<String> a, List<String> b) {
        List<String> l = new ArrayList<>(a);
        l.addAll(b);
        return l;
    }

    /** Open load at 1x before each model's first step, not measured. */
    static final Duration SETTLE = Duration.ofSeconds(10);
    /** The settle's overload, at the highest factor: the process meets overload once before it is measured. */
    static final Duration SETTLE_OVERLOAD = Duration.ofSeconds(5);
    /** Capacity probes: each this long at its rate (the first second not counted). */
    static final Duration PROBE_WARMUP = Duration.ofSeconds(1);
    static final Duration PROBE = Duration.ofSeconds(4);

    /**
     * Served cleanly (the 1x): every request sent on schedule and answered below 400, and the p99 (from
     * the scheduled start) within 1.5 times the backends' latency plus 100 ms.
     */
    static boolean clean(Bench.Result r, Duration latency) {
        return r.requests() > 0 && r.errors() == 0 && r.notSent() == 0
                && r.percentileMillis(99) <= 1.5 * latency.toMillis() + 100;
    }

    /**
     * The capacity: the highest rate the model serves {@link #clean cleanly}. A closed loop at
     * {@code maxInFlight} gives the saturated rate S (what the first overload lab called the capacity: a rate
     * already queueing,
     * its p99 1.2-2.3 s with backends at 250 ms); then open-loop probes at 0.5 S, 0.6 S, ... up to 2 S, lowest
     * first, until two in a row are not clean (one can be a hiccup of a shared machine). When neither of the first
     * two is clean, the rate halves from 0.5 S until a probe is (at most four times).
     */
    private static double capacity(Options o, String model, String url, Transport client, PrintWriter out,
                                   PrintWriter progress) throws InterruptedException {
        Bench.Result c = get(client, url, 0, o.maxInFlight(), o.warmup(), o.duration(), Duration.ofSeconds(60));
        double saturated = c.throughput();
        out.printf(Locale.ROOT, "saturated: %.0f req/s (closed loop, %d in flight, %s, model %s; p99 %.0f ms; errors %s)%n",
                saturated, o.maxInFlight(), Durations.format(o.duration()), model, c.percentileMillis(99),
                c.errorsByReason());
        out.flush();
        Thread.sleep(o.latency().toMillis() + 2000);
        double best = 0;
        int unclean = 0;
        List<Double> rates = new ArrayList<>();
        for (int i = 5; i <= 20; i++) {
            rates.add(saturated * i / 10.0);
        }
        for (int i = 0; i < rates.size() && unclean < 2; i++) {
            Bench.Result r = probe(o, model, url, client, rates.get(i), out, progress);
            if (clean(r, o.latency())) {
                best = rates.get(i);
                unclean = 0;
            } else {
                unclean++;
            }
        }
        double rate = rates.get(0);
        for (int k = 0; k < 4 && best == 0; k++) { // not even 0.5 S: lower
            rate /= 2;
            if (clean(probe(o, model, url, client, rate, out, progress), o.latency())) {
                best = rate;
            }
        }
        if (best == 0) {
            throw new IllegalStateException(model + " served no probe cleanly (down to " + Math.round(saturated / 32)
                    + " req/s): see the probes above");
        }
        out.printf(Locale.ROOT, "capacity: %.0f req/s (the highest probe served cleanly: no error, all sent, p99 <= "
                + "1.5 x %s + 100 ms)%n", best, Durations.format(o.latency()));
        out.flush();
        return best;
    }

    private static Bench.Result probe(Options o, String model, String url, Transport client, double rate, PrintWriter out,
                                      PrintWriter progress) throws InterruptedException {
        progress.printf(Locale.ROOT, "lab overload: %s capacity probe at %.0f req/s ...%n", model, rate);
        progress.flush();
        Bench.Result r = get(client, url, rate, o.maxInFlight(), PROBE_WARMUP, PROBE, Duration.ofSeconds(30));
        out.printf(Locale.ROOT, "capacity probe: %.0f req/s offered, %.0f served, p99 %.0f ms, %d errors %s, %d not sent: %s%n",
                rate, r.throughput(), r.percentileMillis(99), r.errors(), r.errorsByReason(), r.notSent(),
                clean(r, o.latency()) ? "clean" : "not clean");
        out.flush();
        Thread.sleep(o.latency().toMillis() + 1000);
        return r;
    }

    private static Step step(Options o, String model, double factor, double capacity, String url, String base,
                             Transport client, PrintWriter progress) throws InterruptedException {
        double rate = factor * capacity;
        progress.printf(Locale.ROOT, "lab overload: %s at %.1fx = %.0f req/s offered, %s + %s ...%n", model, factor, rate,
                Durations.format(o.warmup()), Durations.format(o.duration()));
        progress.flush();
        long opened0 = breakerOpenings(metrics(client, base));
        // the gateway's histograms at the end of the warm-up (when the generator starts to count) and of the step
        java.util.concurrent.atomic.AtomicReference<String> atWarm = new java.util.concurrent.atomic.AtomicReference<>();
        Thread scrape = Thread.ofVirtual().start(() -> {
            try {
                Thread.sleep(o.warmup());
                atWarm.set(metrics(client, base));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        Recorder shed = new Recorder(3);
        CallRequest req = CallRequest.get(url);
        Bench.Sender sender = (target, measured) -> {
            long t0 = System.nanoTime();
            CallResult r = client.call(req, dev.weft.core.Deadline.in(Duration.ofSeconds(30)));
            if (r.ok()) {
                return null;
            }
            if (r.status() == 503 && measured) { // like every other column, the warm-up's 503s are not counted
                shed.recordValue(Math.max(1, (System.nanoTime() - t0) / 1000));
            }
            return r.outcome();
        };
        Bench.Result res = Bench.run(new Bench.Options(List.of(url), "GET", Headers.EMPTY, null, rate, o.maxInFlight(),
                o.warmup(), o.duration(), Duration.ofSeconds(30)), sender, null, false);
        String after = metrics(client, base);
        long opened1 = breakerOpenings(after);
        scrape.join();
        String before = atWarm.get();
        Histogram h = shed.getIntervalHistogram();
        double shedP99 = h.getTotalCount() == 0 ? Double.NaN : h.getValueAtPercentile(99) / 1000.0;
        return new Step(model, factor, rate, res, shedP99, opened0 < 0 || opened1 < 0 ? -1 : opened1 - opened0,
                percentileMillis(before, after, "weft_admission_shed_duration_seconds", 0.99),
                percentileMillis(before, after, "weft_scheduler_lag_seconds", 0.99),
                percentileMillis(before, after, "weft_scheduler_lag_seconds", 1.0),
                sumMillis(before, after, "jvm_gc_pause_seconds"),
                percentileMillis(before, after, "jvm_gc_pause_seconds", 1.0));
    }

    /**
     * What a Prometheus histogram or summary of seconds ({@code name_sum}, summed over its labels) grew by between two
     * scrapes, in ms; NaN when either scrape lacks it.
     */
    static double sumMillis(String before, String after, String name) {
        if (before == null || after == null) {
            return Double.NaN;
        }
        Pattern series = Pattern.compile("^" + Pattern.quote(name) + "_sum(?:\\{[^}]*})? ([0-9.eE+-]+)$",
                Pattern.MULTILINE);
        Double b = total(before, series);
        Double a = total(after, series);
        return a == null ? Double.NaN : (a - (b == null ? 0 : b)) * 1000;
    }

    /** The sum of every sample {@code series} matches (its value is group 1), or null when it matches none. */
    private static Double total(String metrics, Pattern series) {
        Matcher m = series.matcher(metrics);
        Double n = null;
        while (m.find()) {
            n = (n == null ? 0 : n) + Double.parseDouble(m.group(1));
        }
        return n;
    }

    /** The gateway's /-/metrics, or null (not a Weft gateway, or no answer). */
    private static String metrics(Transport client, String base) {
        CallResult r = client.call(CallRequest.get(base + "/-/metrics"), Duration.ofSeconds(10));
        return r.status() == 200 ? r.bodyText() : null;
    }

    /**
     * A percentile (ms; {@code share} 0.99 for the p99, 1 for the worst) of the observations a Prometheus histogram
     * got between two scrapes: the bound of the first bucket that holds that share of them (so a step of the buckets,
     * 1 ms to 5 s); Infinity past the last bound; NaN with no observation or no histogram.
     */
    static double percentileMillis(String before, String after, String name, double share) {
        if (before == null || after == null) {
            return Double.NaN;
        }
        Map<Double, Double> b = buckets(before, name);
        Map<Double, Double> a = buckets(after, name);
        Double total = a.get(Double.POSITIVE_INFINITY);
        if (total == null) {
            return Double.NaN;
        }
        double n = total - b.getOrDefault(Double.POSITIVE_INFINITY, 0.0);
        if (n <= 0) {
            return Double.NaN;
        }
        for (Map.Entry<Double, Double> e : a.entrySet()) { // ascending bounds
            if (e.getValue() - b.getOrDefault(e.getKey(), 0.0) >= share * n) {
                return e.getKey() * 1000;
            }
        }
        return Double.POSITIVE_INFINITY;
    }

    /** The cumulative counts of histogram {@code name} by upper bound (seconds), summed over its other labels. */
    static Map<Double, Double> buckets(String metrics, String name) {
        Pattern p = Pattern.compile("^" + Pattern.quote(name) + "_bucket\\{(?:[^}]*,)?le=\"([^\"]+)\"[^}]*} ([0-9.eE+]+)$",
                Pattern.MULTILINE);
        Map<Double, Double> m = new java.util.TreeMap<>();
        Matcher x = p.matcher(metrics);
        while (x.find()) {
            double le = x.group(1).equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(x.group(1));
            m.merge(le, Double.parseDouble(x.group(2)), Double::sum);
        }
        return m;
    }

    private static final Pattern OPENINGS = Pattern.compile("^weft_destination_breaker_openings_total\\{[^}]*} ([0-9.eE+]+)$",
            Pattern.MULTILINE);

    /**
     * The gateway's breaker openings so far (all destinations) in its {@link #metrics}, or -1 when the model has
     * none (the Go peer).
     */
    static long breakerOpenings(String metrics) {
        if (metrics == null) {
            return -1;
        }
        Double n = total(metrics, OPENINGS);
        return n == null ? 0 : Math.round(n);
    }

    public static String header() {
        return "| model | offered | offered req/s | goodput req/s | 503 share | p50 ms | p99 ms | 503 p99 ms | other failures | breaker openings | send delay p99 ms | gateway 503 p99 ms | gateway lag p99 ms | gateway lag max ms | gateway gc pauses ms | gateway gc pause max ms |\n"
                + "|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|\n";
    }

    public static String line(Step s) {
        Bench.Result x = s.result();
        Map<String, Long> other = new LinkedHashMap<>(x.errorsByReason());
        other.remove("status-503");
        if (x.notSent() > 0) {
            other.put("not-sent", x.notSent());
        }
        return String.format(Locale.ROOT, "| %s | %.1fx | %.0f | %.0f | %.1f%% | %.0f | %.0f | %s | %d%s | %s | %.1f | %s | %s | %s | %s | %s |%n", s.model(),
                s.factor(), s.offered(), x.throughput(), 100 * s.share503(), x.percentileMillis(50), x.percentileMillis(99),
                Double.isNaN(s.shedP99Millis()) ? "-" : String.format(Locale.ROOT, "%.1f", s.shedP99Millis()),
                s.otherFailures(), other.isEmpty() ? "" : " " + other, s.breakerOpenings() < 0 ? "n/a" : Long.toString(s.breakerOpenings()),
                s.sendDelayP99Millis(), bound(s.gatewayShedP99Millis()), bound(s.lagP99Millis()), bound(s.lagMaxMillis()),
                Double.isNaN(s.gcPauseMillis()) ? "-" : String.format(Locale.ROOT, "%.0f", s.gcPauseMillis()),
                bound(s.gcPauseMaxMillis()));
    }

    /** A percentile from {@link #percentileMillis}: "<= bound", "> 5000" or "-". */
    private static String bound(double ms) {
        if (Double.isNaN(ms)) {
            return "-";
        }
        return Double.isInfinite(ms) ? "> 5000" : "<= " + Math.round(ms);
    }

    private static void write(Report r, Options o, String command) throws IOException {
        StringBuilder md = new StringBuilder("# weft lab overload\n\n- command: `" + command + "`\n- machine: "
                + Machine.describe() + (o.pin() == null ? "" : "\n- cpus: " + o.pin().describe())
                + "\n- capacity: " + Math.round(r.capacity()) + " req/s\n\n");
        md.append(header());
        r.steps().forEach(s -> md.append(line(s)));
        r.skipped().forEach((m, why) -> md.append("\nSkipped ").append(m).append(": ").append(why).append('\n'));
        md.append("\n![goodput against offered load](goodput.png)\n");
        Files.writeString(r.dir().resolve("report.md"), md.toString());
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("command", command);
        json.put("machine", Machine.describe());
        json.put("capacity", Math.round(r.capacity()));
        json.put("latency_ms", o.latency().toMillis());
        json.put("cpus", o.pin() == null ? null : o.pin().describe());
        json.put("skipped", r.skipped());
        json.put("steps", r.steps().stream().map(Step::json).toList());
        Json.MAPPER.writerWithDefaultPrettyPrinter().writeValue(r.dir().resolve("results.json").toFile(), json);
        System.setProperty("java.awt.headless", "true");
        XYChart chart = new XYChartBuilder().width(900).height(540).title("Overload: goodput against offered load")
                .xAxisTitle("offered load (req/s)").yAxisTitle("goodput (answers below 400 per second)").build();
        chart.getStyler().setLegendPosition(org.knowm.xchart.style.Styler.LegendPosition.OutsideE);
        Map<String, List<double[]>> by = new LinkedHashMap<>();
        for (Step s : r.steps()) {
            by.computeIfAbsent(s.model(), k -> new ArrayList<>()).add(new double[] {s.offered(), s.result().throughput()});
        }
        for (Map.Entry<String, List<double[]>> e : by.entrySet()) {
            chart.addSeries(e.getKey(), e.getValue().stream().mapToDouble(p -> p[0]).toArray(),
                    e.getValue().stream().mapToDouble(p -> p[1]).toArray()).setMarker(SeriesMarkers.CIRCLE);
        }
        if (!by.isEmpty()) {
            BitmapEncoder.saveBitmap(chart, r.dir().resolve("goodput.png").toString(), BitmapEncoder.BitmapFormat.PNG);
        }
    }
}
