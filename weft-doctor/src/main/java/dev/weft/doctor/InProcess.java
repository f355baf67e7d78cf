package dev.weft.doctor;

import dev.weft.core.Durations;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

import java.io.IOException;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Semaphore;

/**
 * The doctor inside Weft's own services: {@code GET /-/threads} on their admin endpoints, and a watch that
 * counts runaway virtual threads into {@code /-/metrics}.
 */
public final class InProcess {
    /** Longest window {@code /-/threads?for=} may ask for. */
    public static final Duration MAX_WINDOW = Duration.ofSeconds(10);
    /** {@code /-/threads} without {@code for=}. */
    public static final Duration DEFAULT_WINDOW = Duration.ofSeconds(1);
    /** One report at a time per process (each is a run of thread dumps). */
    private static final Semaphore ONE = new Semaphore(1);

    private InProcess() {
    }

    /** Thrown when a report is already being made. */
    public static final class Busy extends Exception {
        Busy() {
            super("a /-/threads report is being made; try again in a moment", null, false, false);
        }
    }

    /**
     * A report of this JVM over a window (the query's {@code for=D}, default 1 s, at most 10 s), sampled every
     * 100 ms.
     *
     * @throws IllegalArgumentException for a bad {@code for=}
     */
    public static Report threads(String query) throws Busy, IOException, InterruptedException {
        Duration window = DEFAULT_WINDOW;
        for (String kv : (query == null ? "" : query).split("&")) {
            if (kv.startsWith("for=")) {
                window = Durations.parse(kv.substring(4));
                if (window.isNegative() || window.compareTo(MAX_WINDOW) > 0) {
                    throw new IllegalArgumentException("for= must be from 0s to " + Durations.format(MAX_WINDOW));
                }
            }
        }
        if (!ONE.tryAcquire()) {
            throw new Busy();
        }
        try (ThisJvm jvm = new ThisJvm()) {
            return Doctor.examine(jvm, new Doctor.Options(window, Duration.ofMillis(100), Duration.ofMillis(200)), null);
        } finally {
            ONE.release();
        }
    }

    /**
     * Every {@code every}, three thread dumps 100 ms apart; a virtual thread seen running on the same carrier in
     * all three (200 ms or more) counts once in {@code weft.threads.runaways} (by thread id, so one that keeps
     * running counts once). Cheap on purpose: three dumps per period, so a runaway shorter than 200 ms or
     * between two checks goes uncounted; {@code /-/threads} and {@code weft doctor} look closer.
     */
    public static AutoCloseable watchRunaways(MeterRegistry registry, Duration every) {
        Counter runaways = Counter.builder("weft.threads.runaways")
                .description("virtual threads seen holding a carrier for 200 ms or more without a break (sampled)")
                .register(registry);
        Set<Long> counted = new HashSet<>();
        Thread t = Thread.ofPlatform().daemon().name("weft-runaway-watch").start(() -> {
            Doctor.Options o = new Doctor.Options(Duration.ofMillis(200), Duration.ofMillis(100), Duration.ofMillis(200));
            while (!Thread.currentThread().isInterrupted()) {
                try {
                    Thread.sleep(every);
                    if (!ONE.tryAcquire()) {
                        continue;
                    }
                    try (ThisJvm jvm = new ThisJvm()) {
                        List<Report.Runaway> found = Doctor.sample(jvm, o);
                        for (Report.Runaway r : found) {
                            if (counted.add(r.tid())) {
                                runaways.increment();
                            }
                        }
                        if (counted.size() > 10_000) {
                            counted.clear();
                        }
                    } finally {
                        ONE.release();
                    }
                } catch (InterruptedException e) {
                    return;
                } catch (IOException | RuntimeException e) {
                    // a failed dump: try again next period
                }
            }
        });
        return t::interrupt;
    }
}
