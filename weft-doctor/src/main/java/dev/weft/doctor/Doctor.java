package dev.weft.doctor;

import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntConsumer;

/**
 * Examines a {@link ThreadSource} over a window: a JFR recording of execution samples (which threads run,
 * virtual ones by their own id and stack: the runaways) and pinning events, and at the window's end one JSON
 * thread dump, the census (every virtual thread with its state and stack, the carriers). Only one dump: on
 * JDK 25.0.3 a thread dump taken while virtual threads mount and unmount can crash the JVM (JDK-8364343; we
 * saw it twice in a loaded gateway), while JFR's sampler is the profiler path the JDK runs in production.
 * Also at the window's end, the figures of the pools weft-agent converted, when the target runs it (at the
 * start its count of pinned workers is started: the agent counts them once started, never on a read).
 */
public final class Doctor {
    /**
     * @param window       how long to record (default 5 s)
     * @param samplePeriod JFR's execution sampling period (default 10 ms, its smallest)
     * @param runaway      a virtual thread running this long without a break is a runaway (default 200 ms)
     * @param census       whether to take the thread dump at the window's end (default true)
     */
    public record Options(Duration window, Duration samplePeriod, Duration runaway, boolean census) {
        public static final Options DEFAULT = new Options(Duration.ofSeconds(5), Duration.ofMillis(10),
                Duration.ofMillis(200), true);

        public Options {
            if (window.isNegative() || window.compareTo(Duration.ofHours(1)) > 0) {
                throw new IllegalArgumentException("the window must be from 0s to 1h");
            }
            if (samplePeriod.toMillis() < 10 || samplePeriod.toMillis() > 1000) {
                throw new IllegalArgumentException("the sample period must be from 10ms to 1s");
            }
            if (runaway.compareTo(samplePeriod.multipliedBy(3)) < 0) {
                throw new IllegalArgumentException("the runaway threshold must be at least three sample periods");
            }
        }

        public Options withWindow(Duration w) {
            return new Options(w, samplePeriod, runaway, census);
        }

        public Options withCensus(boolean c) {
            return new Options(window, samplePeriod, runaway, c);
        }
    }

    private Doctor() {
    }

    /**
     * Attaches to {@code pid}, examines it over the window and detaches.
     *
     * @param progress told the seconds elapsed, once a second (may be null)
     * @throws DoctorException exit code 2 for a target it cannot examine, 1 when the target exits while
     *                         attached or the recording fails
     */
    public static Report examine(long pid, Options o, IntConsumer progress) throws DoctorException, InterruptedException {
        int[] elapsed = {0};
        try (AttachedJvm jvm = AttachedJvm.attach(pid)) {
            try {
                return examine(jvm, o, s -> {
                    elapsed[0] = s;
                    if (progress != null) {
                        progress.accept(s);
                    }
                });
            } catch (IOException e) {
                if (!jvm.alive()) {
                    throw new DoctorException(1, "pid " + pid + " exited while weft doctor was attached (after "
                            + elapsed[0] + " s)", e);
                }
                throw new DoctorException(1, "examining pid " + pid + " failed: " + e.getMessage(), e);
            }
        }
    }

    /** Examines {@code source} over the window; see the class comment. */
    public static Report examine(ThreadSource source, Options o, IntConsumer progress)
            throws IOException, InterruptedException {
        List<String> notes = new ArrayList<>();
        Instant from = Instant.now();
        long start = System.nanoTime();
        source.startRecording(o.samplePeriod().toMillis());
        ThreadDump census = null;
        List<Report.AgentPool> agentPools;
        Jfr.Recorded recorded;
        try {
            // weft-agent counts pinned workers once started (reading never starts it): start it now, so that the
            // figures at the end cover at least this window
            source.startAgentPinnedCount();
            long end = start + o.window().toNanos();
            int second = 0;
            while (true) {
                long left = end - System.nanoTime();
                if (left <= 0) {
                    break;
                }
                Thread.sleep(Duration.ofNanos(Math.min(left, 1_000_000_000L)));
                if (progress != null) {
                    progress.accept(++second);
                }
            }
            if (o.census()) {
                census = source.dump();
            }
            agentPools = source.agentPools();
        } finally {
            recorded = source.stopRecording();
        }
        Duration window = Duration.ofNanos(System.nanoTime() - start);
        if (census == null) {
            notes.add("no census: the virtual threads were not listed (no thread dump was taken)");
        } else if (census.threads().stream().noneMatch(t -> t.carrier() >= 0)) {
            notes.add("the census saw no virtual thread on a carrier (idle, or a JDK before 25, whose thread dumps "
                    + "do not name carriers)");
        }
        return Analyzer.analyze(source.describe(), from, window, recorded, census, source.parallelism(), agentPools, o, notes);
    }
}
