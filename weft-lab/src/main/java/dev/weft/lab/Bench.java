package dev.weft.lab;

import dev.weft.core.Deadline;
import dev.weft.core.Durations;
import dev.weft.client.CallRequest;
import dev.weft.client.CallResult;
import dev.weft.http.Headers;
import dev.weft.client.Transport;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

/**
 * {@code weft bench}: an HTTP load generator on virtual threads.
 *
 * <p><b>Closed loop</b> ({@code rate == 0}): {@code concurrency} workers, each sending its next request
 * when the previous one is answered. Latency is from the request's own start.
 *
 * <p><b>Open loop</b> ({@code rate > 0}): requests are scheduled at a fixed rate, independently of the
 * answers, at most {@code concurrency} in flight. Latency is counted from each request's <em>scheduled</em>
 * start, so time a request spent waiting for the generator (because the service was slow to answer the
 * ones before) counts against the service, as in wrk2: coordinated omission is corrected. When the
 * generator sends late (no room in flight, or not enough CPU) it says so in {@link Result#generatorNote()}.
 *
 * <p>In both modes only requests that <em>start</em> (closed) or are <em>scheduled</em> (open) inside the
 * measured window are counted, and each of them is waited for (up to the timeout), so every counted
 * request has a latency or an error. Targets are used in turn.
 */
public final class Bench {
    /** What to send, how hard and for how long. */
    public record Options(List<String> urls, String method, Headers headers, byte[] body, double rate,
                          int concurrency, Duration warmup, Duration duration, Duration timeout,
                          boolean platformThreads) {
        public Options(List<String> urls, String method, Headers headers, byte[] body, double rate, int concurrency,
                       Duration warmup, Duration duration, Duration timeout) {
            this(urls, method, headers, body, rate, concurrency, warmup, duration, timeout, false);
        }

        public Options {
            if (urls.isEmpty()) {
                throw new IllegalArgumentException("no target URL");
            }
            if (concurrency < 1) {
                throw new IllegalArgumentException("concurrency must be at least 1");
            }
        }

        public boolean openLoop() {
            return rate > 0;
        }

        /** Closed loop on platform threads instead of virtual ones (a thread-pool client's model). */
        public Options withPlatformThreads() {
            return new Options(urls, method, headers, body, rate, concurrency, warmup, duration, timeout, true);
        }
    }

    /**
     * What one bench measured over the window.
     *
     * @param requests     counted requests (started or scheduled in the window)
     * @param ok           of which answered below 400
     * @param errorsByReason the others by outcome ({@code status-503}, {@code timeout-headers}, ...)
     * @param notSent      open loop: scheduled in the window but never sent (the generator fell behind)
     * @param seconds      length of the window
     * @param latency      microseconds, successful requests only
     * @param sendLag      open loop: microseconds between a request's scheduled time and the start of its send (on
     *                     its own virtual thread, so a wait for a carrier counts)
     */
    public record Result(Options options, long requests, long ok, Map<String, Long> errorsByReason, long notSent,
                         double seconds, Histogram latency, Histogram sendLag) {
        public long errors() {
            return requests - ok;
        }

        /** Successful answers (below 400) per second of the window: what the tables call req/s. */
        public double throughput() {
            return ok / seconds;
        }

        /**
         * Requests counted per second of the window, failed ones included. In the open loop this is the
         * achieved sending rate: every request sent in the window is waited for.
         */
        public double sentRate() {
            return requests / seconds;
        }

        public double percentileMillis(double p) {
            return latency.getTotalCount() == 0 ? Double.NaN : latency.getValueAtPercentile(p) / 1000.0;
        }

        public double maxMillis() {
            return latency.getTotalCount() == 0 ? Double.NaN : latency.getMaxValue() / 1000.0;
        }

        /**
         * Open loop: null when the generator sent (nearly) on schedule, otherwise a plain sentence saying
         * that it could not keep up and by how much.
         */
        public String generatorNote() {
            if (!options.openLoop()) {
                return null;
            }
            double requested = options.rate();
            double lagP99 = sendLag.getTotalCount() == 0 ? 0 : sendLag.getValueAtPercentile(99) / 1000.0;
            boolean short_ = notSent > 0 || sentRate() < 0.97 * requested;
            if (!short_ && lagP99 < LATE_MILLIS) {
                return null;
            }
            long scheduled = requests + notSent;
            return String.format(Locale.ROOT, "the generator could not keep up: requested %.0f req/s; of the %d requests "
                    + "scheduled in the window %d were sent (%.0f req/s) and %d never were; p99 send delay %.1f ms; %s",
                    requested, scheduled, requests, sentRate(), notSent, lagP99, notSent > 0 || lagP99 >= LATE_MILLIS
                            ? "the in-flight limit (--concurrency " + options.concurrency() + ") was full or the CPU was "
                            + "busy; latencies include that wait" : "the CPU was busy");
        }
    }

    /**
     * Sends one request to target number {@code target} (of {@link Options#urls()}) and waits for its
     * answer; returns null on success or a short reason ({@code status-503}, {@code timeout-headers}, an
     * exception's name). {@code measured} is false in the warm-up, whose answers the result does not count
     * (a sender that keeps figures of its own leaves them out too). The labs plug other clients in here.
     */
    @FunctionalInterface
    public interface Sender {
        String send(int target, boolean measured) throws Exception;
    }

    /** A request sent later than this after its scheduled time makes the generator report that it fell behind. */
    static final double LATE_MILLIS = 10;

    private final Options o;
    private final Sender sender;
    private final Recorder latency = new Recorder(3);
    private final Recorder lag = new Recorder(3);
    private final LongAdder counted = new LongAdder();
    /** Every answer, warm-up included: what the progress line's req/s counts. */
    private final LongAdder answered = new LongAdder();
    private final LongAdder ok = new LongAdder();
    private final Map<String, LongAdder> reasons = new ConcurrentHashMap<>();
    private final AtomicLong inFlight = new AtomicLong();

    private Bench(Options o, Sender sender) {
        this.o = o;
        this.sender = sender;
    }

    /**
     * Runs one bench with Weft's transport (no retries, no breaker). {@code progress} gets a line per
     * second (rewritten in place when {@code live}) and may be null.
     */
    public static Result run(Options o, PrintWriter progress, boolean live) throws InterruptedException {
        List<CallRequest> requests = new ArrayList<>();
        for (String url : o.urls()) {
            CallRequest.Builder r = CallRequest.builder(o.method(), url).headers(o.headers());
            if (o.body() != null) {
                r.body(o.body(), null);
            }
            requests.add(r.build());
        }
        try (Transport t = LoadClient.transport(o.concurrency())) {
            return run(o, sender(t, requests, o.timeout()), progress, live);
        }
    }

    /** Sends request {@code target} of {@code requests} with Weft's transport; its outcome on failure. */
    public static Sender sender(Transport t, List<CallRequest> requests, Duration timeout) {
        return (target, measured) -> {
            CallResult r = t.call(requests.get(target), Deadline.in(timeout));
            return r.ok() ? null : r.outcome();
        };
    }

    /** Runs one bench with another client. */
    public static Result run(Options o, Sender sender, PrintWriter progress, boolean live) throws InterruptedException {
        return new Bench(o, sender).run(progress, live);
    }

    private Result run(PrintWriter progress, boolean live) throws InterruptedException {
        long start = System.nanoTime();
        long measureFrom = start + o.warmup().toNanos();
        long end = measureFrom + o.duration().toNanos();
        Histogram total = new Histogram(3);
        Histogram totalLag = new Histogram(3);
        Progress p = new Progress(progress, live, start, measureFrom);
        // Stopped by a latch, not by an interrupt: an interrupt that arrived while the reporter was inside
        // getIntervalHistogram() was lost (HdrHistogram's phase flip waits and swallows it), and the bench waited
        // for the reporter for ever (a lab system-a run hung at the end of its measurement).
        CountDownLatch finished = new CountDownLatch(1);
        Thread reporter = Thread.ofPlatform().daemon().name("weft-bench-progress").start(() -> {
            try {
                while (!finished.await(1, TimeUnit.SECONDS)) {
                    p.tick(latency.getIntervalHistogram(), answered.sum(), errorsSoFar(), inFlight.get(), total);
                }
            } catch (InterruptedException e) {
                // done
            }
        });
        long notSent;
        try {
            notSent = o.openLoop() ? openLoop(start, measureFrom, end) : closedLoop(measureFrom, end);
        } finally {
            finished.countDown();
            reporter.join();
        }
        total.add(latency.getIntervalHistogram());
        totalLag.add(lag.getIntervalHistogram());
        p.done();
        Map<String, Long> byReason = new TreeMap<>();
        reasons.forEach((k, v) -> byReason.put(k, v.sum()));
        return new Result(o, counted.sum(), ok.sum(), byReason, notSent, o.duration().toNanos() / 1e9, total, totalLag);
    }

    private long errorsSoFar() {
        long n = 0;
        for (LongAdder a : reasons.values()) {
            n += a.sum();
        }
        return n;
    }

    private long closedLoop(long measureFrom, long end) throws InterruptedException {
        List<Thread> workers = new ArrayList<>(o.concurrency());
        AtomicLong next = new AtomicLong();
        for (int i = 0; i < o.concurrency(); i++) {
            Thread.Builder builder = o.platformThreads() ? Thread.ofPlatform().daemon() : Thread.ofVirtual();
            workers.add(builder.start(() -> {
                while (true) {
                    long t0 = System.nanoTime();
                    if (t0 - end >= 0) {
                        return;
                    }
                    send((int) (next.getAndIncrement() % o.urls().size()), t0, t0 - measureFrom >= 0);
                }
            }));
        }
        for (Thread w : workers) {
            w.join();
        }
        return 0;
    }

    /** Schedules request i at start + i / rate; returns how many requests of the window were never sent. */
    private long openLoop(long start, long measureFrom, long end) throws InterruptedException {
        double intervalNanos = 1e9 / o.rate();
        Semaphore room = new Semaphore(o.concurrency());
        long notSent = 0;
        for (long i = 0; ; i++) {
            long scheduled = start + (long) (i * intervalNanos);
            if (scheduled - end >= 0) {
                break;
            }
            long now = System.nanoTime();
            if (scheduled - now > 0) {
                LockSupport.parkNanos(scheduled - now);
            }
            boolean measured = scheduled - measureFrom >= 0;
            // room now: send it, even if the park above overslept the window's end (its slot is in the window; else
            // the last slot of a window was often counted unsent, and a capacity probe not clean for it)
            long wait = end - System.nanoTime();
            if (!room.tryAcquire() && (wait <= 0 || !room.tryAcquire(wait, TimeUnit.NANOSECONDS))) {
                // the window ended while this request waited for room: it and every later one are unsent
                long scheduledInAll = (long) Math.ceil((end - start) / intervalNanos);
                long firstMeasured = (long) Math.ceil((measureFrom - start) / intervalNanos);
                notSent = Math.max(0, scheduledInAll - Math.max(i, firstMeasured));
                break;
            }
            int target = (int) (i % o.urls().size());
            Thread.ofVirtual().start(() -> {
                // the send delay is taken where the request starts, on its own virtual thread: one that waits for a
                // carrier (the lab's generator shares CPU 0 with three backends) is sent that much later. Until Round
                // 22 it was taken before that thread started, so such a request counted as sent on time
                if (measured) {
                    lag.recordValue(Math.max(0, (System.nanoTime() - scheduled) / 1000));
                }
                try {
                    send(target, scheduled, measured);
                } finally {
                    room.release();
                }
            });
        }
        room.acquire(o.concurrency()); // every request sent has been answered (each is bounded by the timeout)
        return notSent;
    }

    private void send(int target, long startNanos, boolean measured) {
        inFlight.incrementAndGet();
        String reason;
        try {
            reason = sender.send(target, measured);
        } catch (Exception e) {
            reason = e.getClass().getSimpleName();
        } finally {
            inFlight.decrementAndGet();
            answered.increment();
        }
        if (!measured) {
            return;
        }
        counted.increment();
        if (reason == null) {
            ok.increment();
            latency.recordValue(Math.max(1, (System.nanoTime() - startNanos) / 1000));
        } else {
            reasons.computeIfAbsent(reason, k -> new LongAdder()).increment();
        }
    }

    /**
     * The progress line: elapsed, req/s over the last second, p99 so far, errors, in flight. Only the
     * reporter thread calls {@code tick}; {@code done} runs after it has stopped.
     */
    private static final class Progress {
        private final PrintWriter out;
        private final boolean live;
        private final long start;
        private final long measureFrom;
        private long lastCount;
        private int ticks;
        private boolean wrote;

        Progress(PrintWriter out, boolean live, long start, long measureFrom) {
            this.out = out;
            this.live = live;
            this.start = start;
            this.measureFrom = measureFrom;
        }

        void tick(Histogram interval, long count, long errors, long inFlight, Histogram total) {
            total.add(interval);
            if (out == null) {
                return;
            }
            long now = System.nanoTime();
            ticks++;
            String phase = now - measureFrom < 0 ? "warm-up" : "measuring";
            String line = String.format(Locale.ROOT, "%s %s: %d req/s, p99 %s ms, %d errors, %d in flight",
                    Durations.format(Duration.ofSeconds(Math.round((now - start) / 1e9))), phase, count - lastCount,
                    total.getTotalCount() == 0 ? "-" : String.format(Locale.ROOT, "%.1f", total.getValueAtPercentile(99) / 1000.0),
                    errors, inFlight);
            lastCount = count;
            if (live) {
                out.print("\r\033[K" + line);
                wrote = true;
                out.flush();
            } else if (ticks % 5 == 0) {
                out.println("bench: " + line);
                out.flush();
            }
        }

        void done() {
            if (out != null && live && wrote) {
                out.print("\r\033[K");
                out.flush();
            }
        }
    }

    /** The result as the text {@code weft bench} prints. */
    public static String report(Result r) {
        StringBuilder sb = new StringBuilder();
        Options o = r.options();
        sb.append(String.format(Locale.ROOT, "%s: %d requests in %s, %d ok, %d errors%n",
                o.openLoop() ? String.format(Locale.ROOT, "open loop at %.0f req/s", o.rate())
                        : "closed loop, " + o.concurrency() + " concurrent",
                r.requests(), Durations.format(o.duration()), r.ok(), r.errors()));
        sb.append(String.format(Locale.ROOT, "throughput: %.1f req/s answered below 400%n", r.throughput()));
        if (o.openLoop()) {
            sb.append(String.format(Locale.ROOT, "rate: requested %.0f req/s, sent %.1f req/s%n", o.rate(),
                    r.sentRate()));
        }
        sb.append(String.format(Locale.ROOT, "latency ms%s: p50 %.2f  p90 %.2f  p99 %.2f  p99.9 %.2f  max %.2f%n",
                o.openLoop() ? " (from each request's scheduled start)" : "", r.percentileMillis(50),
                r.percentileMillis(90), r.percentileMillis(99), r.percentileMillis(99.9), r.maxMillis()));
        if (!r.errorsByReason().isEmpty()) {
            sb.append("errors:");
            r.errorsByReason().forEach((k, v) -> sb.append(' ').append(k).append('=').append(v));
            sb.append('\n');
        }
        String note = r.generatorNote();
        if (note != null) {
            sb.append("WARNING: ").append(note).append('\n');
        }
        return sb.toString();
    }

    /** The result as one JSON-ready map. */
    public static Map<String, Object> json(Result r) {
        Options o = r.options();
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("urls", o.urls());
        m.put("method", o.method());
        m.put("mode", o.openLoop() ? "open" : "closed");
        m.put("requested_rate", o.openLoop() ? o.rate() : null);
        m.put("concurrency", o.concurrency());
        m.put("warmup_s", o.warmup().toMillis() / 1000.0);
        m.put("duration_s", r.seconds());
        m.put("requests", r.requests());
        m.put("ok", r.ok());
        m.put("errors", r.errors());
        m.put("errors_by_reason", r.errorsByReason());
        m.put("not_sent", r.notSent());
        m.put("throughput", r.throughput());
        m.put("sent_rate", o.openLoop() ? r.sentRate() : null);
        Map<String, Object> lat = new LinkedHashMap<>();
        for (double p : new double[] {50, 90, 99, 99.9}) {
            lat.put("p" + (p == Math.rint(p) ? String.valueOf((int) p) : String.valueOf(p)).replace('.', '_'),
                    r.percentileMillis(p));
        }
        lat.put("max", r.maxMillis());
        m.put("latency_ms", lat);
        m.put("generator_note", r.generatorNote());
        return m;
    }
}
