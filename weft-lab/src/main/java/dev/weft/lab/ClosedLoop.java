package dev.weft.lab;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * A closed-loop load: {@code concurrency} virtual threads, each sending its next request as soon as the
 * previous one is answered, for a warm-up and then a measured duration. A request counts when it
 * completes inside the measured window; its latency is from its own start (which may lie in the warm-up).
 */
public final class ClosedLoop {
    /** One request; returns null on success or a short reason on failure. */
    @FunctionalInterface
    public interface Request {
        String send() throws Exception;
    }

    /** What one run measured. */
    public record Result(long requests, long errors, Map<String, Long> errorsByReason, double seconds,
                         Histogram latency) {
        public double throughput() {
            return requests / seconds;
        }

        public double percentileMillis(double p) {
            return latency.getTotalCount() == 0 ? Double.NaN : latency.getValueAtPercentile(p) / 1000.0;
        }

        public double maxMillis() {
            return latency.getTotalCount() == 0 ? Double.NaN : latency.getMaxValue() / 1000.0;
        }
    }

    private ClosedLoop() {
    }

    public static Result run(int concurrency, Duration warmup, Duration duration, Request request)
            throws InterruptedException {
        long start = System.nanoTime();
        long measureFrom = start + warmup.toNanos();
        long end = measureFrom + duration.toNanos();
        Recorder recorder = new Recorder(3);
        LongAdder ok = new LongAdder();
        LongAdder failed = new LongAdder();
        Map<String, LongAdder> reasons = new ConcurrentHashMap<>();
        List<Thread> threads = new ArrayList<>(concurrency);
        for (int i = 0; i < concurrency; i++) {
            threads.add(Thread.ofVirtual().start(() -> {
                while (true) {
                    long t0 = System.nanoTime();
                    if (t0 - end >= 0) {
                        return;
                    }
                    String reason;
                    try {
                        reason = request.send();
                    } catch (Exception e) {
                        reason = e.getClass().getSimpleName();
                    }
                    long t1 = System.nanoTime();
                    // Counted by completion time: a design whose requests wait in a queue longer than the
                    // window still shows the rate at which it answers.
                    if (t1 - measureFrom >= 0 && t1 - end < 0) {
                        if (reason == null) {
                            ok.increment();
                            recorder.recordValue(Math.max(1, (t1 - t0) / 1000));
                        } else {
                            failed.increment();
                            reasons.computeIfAbsent(reason, r -> new LongAdder()).increment();
                        }
                    }
                }
            }));
        }
        for (Thread t : threads) {
            t.join();
        }
        Map<String, Long> byReason = new TreeMap<>();
        reasons.forEach((k, v) -> byReason.put(k, v.sum()));
        return new Result(ok.sum(), failed.sum(), byReason, duration.toNanos() / 1e9,
                recorder.getIntervalHistogram());
    }
}
