package dev.weft.doctor;

import dev.weft.core.Durations;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

import java.io.IOException;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.Semaphore;
import java.util.function.Consumer;

/**
 * The doctor inside Weft's own services: {@code GET /-/threads} on their admin endpoints, and a watch that
 * counts runaway virtual threads into {@code /-/metrics}. Both use JFR only by default: a thread dump of a
 * loaded JDK 25.0.3 can crash it (JDK-8364343), so the census is taken only when asked ({@code census=true}).
 */
public final class InProcess {
    /** Longest window {@code /-/threads?for=} may ask for. */
    public static final Duration MAX_WINDOW = Duration.ofSeconds(10);
    /** {@code /-/threads} without {@code for=}. */
    public static final Duration DEFAULT_WINDOW = Duration.ofSeconds(1);
    /** One examination at a time per process. */
    private static final Semaphore ONE = new Semaphore(1);

    private InProcess() {
    }

    /** Thrown when an examination is already under way. */
    public static final class Busy extends Exception {
        Busy() {
            super("a /-/threads report is being made; try again in a moment", null, false, false);
        }
    }

    /**
     * A report of this JVM over {@code for=D} (default 1 s, at most 10 s); {@code census=true} adds the thread
     * dump at its end.
     *
     * @throws IllegalArgumentException for a bad query
     */
    public static Report threads(String query) throws Busy, IOException, InterruptedException {
        Doctor.Options o = Doctor.Options.DEFAULT.withWindow(DEFAULT_WINDOW).withCensus(false);
        for (String kv : (query == null ? "" : query).split("&")) {
            if (kv.startsWith("for=")) {
                Duration w = Durations.parse(kv.substring(4));
                if (w.isNegative() || w.compareTo(MAX_WINDOW) > 0) {
                    throw new IllegalArgumentException("for= must be from 0s to " + Durations.format(MAX_WINDOW));
                }
                o = o.withWindow(w);
            } else if (kv.equals("census=true")) {
                o = o.withCensus(true);
            } else if (!kv.isEmpty() && !kv.equals("census=false")) {
                throw new IllegalArgumentException("unknown parameter '" + kv + "'; /-/threads takes for=D and census=true");
            }
        }
        if (!ONE.tryAcquire()) {
            throw new Busy();
        }
        try (ThisJvm jvm = new ThisJvm()) {
            return Doctor.examine(jvm, o, null);
        } finally {
            ONE.release();
        }
    }

    /**
     * Every {@code every}, one second of JFR execution samples; each virtual thread found running for 200 ms
     * or more without a break counts once in {@code weft.threads.runaways} (by thread id, so one that keeps
     * running counts once). A runaway outside those seconds goes uncounted; {@code /-/threads} and
     * {@code weft doctor} look closer. No thread dumps. While the process is short of file descriptors
     * ({@link ThisJvm#descriptorShortage()}: JFR would stop the JVM) a period's check is skipped, counted in
     * {@code weft.threads.runaway.checks.skipped} and told to {@code log}.
     */
    public static AutoCloseable watchRunaways(MeterRegistry registry, Duration every, Consumer<String> log) {
        Counter runaways = Counter.builder("weft.threads.runaways")
                .description("virtual threads seen running 200 ms or more without a break (JFR, 1 s in every period)")
                .register(registry);
        Counter skipped = Counter.builder("weft.threads.runaway.checks.skipped")
                .description("runaway checks skipped because the process was short of file descriptors "
                        + "(JFR stops the JVM when it finds none)")
                .register(registry);
        Set<Long> counted = new HashSet<>();
        Doctor.Options o = Doctor.Options.DEFAULT.withWindow(Duration.ofSeconds(1)).withCensus(false);
        // loads what a skip needs while descriptors are free (run from class files, loading a class takes one)
        ThisJvm.descriptorShortage();
        // JFR's first start is slow, and running out of descriptors during it stops the JVM: done now, while free
        ThisJvm.initializeRecorder();
        Thread t = Thread.ofPlatform().daemon().name("weft-runaway-watch").start(() -> {
            while (!Thread.currentThread().isInterrupted()) {
                try {
                    Thread.sleep(every);
                    String shortage = ThisJvm.descriptorShortage();
                    if (shortage != null) {
                        skipped.increment();
                        log.accept("runaway check skipped: " + shortage);
                        continue;
                    }
                    if (!ONE.tryAcquire()) {
                        continue;
                    }
                    try (ThisJvm jvm = new ThisJvm()) {
                        for (Report.Runaway r : Doctor.examine(jvm, o, null).runaways()) {
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
                    // a failed recording: try again next period
                }
            }
        });
        return t::interrupt;
    }
}
