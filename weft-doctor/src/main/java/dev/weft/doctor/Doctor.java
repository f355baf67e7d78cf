package dev.weft.doctor;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntConsumer;

/**
 * Samples a {@link ThreadSource} over a window and analyzes it: a JSON thread dump every {@code interval}
 * (each is a handshake with every thread of the target: the cost grows with its threads, which is why the
 * interval is not shorter), and the JDK's pinning events over the same window.
 */
public final class Doctor {
    /**
     * @param window   how long to sample (default 5 s)
     * @param interval between thread dumps (default 100 ms)
     * @param runaway  a virtual thread running on one carrier at least this long is a runaway (default 200 ms)
     */
    public record Options(Duration window, Duration interval, Duration runaway) {
        public static final Options DEFAULT = new Options(Duration.ofSeconds(5), Duration.ofMillis(100),
                Duration.ofMillis(200));

        public Options {
            if (window.isNegative() || interval.isZero() || interval.isNegative() || runaway.isNegative()) {
                throw new IllegalArgumentException("window, interval and runaway must be positive");
            }
            if (window.dividedBy(interval) > 10_000) {
                throw new IllegalArgumentException("at most 10,000 samples a window: a longer interval, or a shorter window");
            }
        }
    }

    private Doctor() {
    }

    /**
     * Attaches to {@code pid}, samples it over the window and detaches.
     *
     * @throws DoctorException exit code 2 for a target it cannot examine, 1 when the target exits while
     *                         attached or a dump fails
     */
    public static Report examine(long pid, Options o, IntConsumer progress) throws DoctorException, InterruptedException {
        int[] taken = {0};
        try (AttachedJvm jvm = AttachedJvm.attach(pid)) {
            try {
                return examine(jvm, o, n -> {
                    taken[0] = n;
                    if (progress != null) {
                        progress.accept(n);
                    }
                });
            } catch (IOException e) {
                if (!jvm.alive()) {
                    throw new DoctorException(1, "pid " + pid + " exited while weft doctor was attached (after "
                            + taken[0] + " samples)", e);
                }
                throw new DoctorException(1, "examining pid " + pid + " failed: " + e.getMessage(), e);
            }
        }
    }

    /** Only the runaways of a short window, without the pinning recording (for a cheap periodic check). */
    static List<Report.Runaway> sample(ThreadSource source, Options o) throws IOException, InterruptedException {
        List<ThreadDump> samples = take(source, o, null);
        return Analyzer.analyze(source.describe(), samples, List.of(), 0, o.interval(), o.runaway(), List.of())
                .runaways();
    }

    /**
     * @param progress told the number of samples taken so far, after each (may be null)
     * @throws IOException when a dump fails (the target exited, for one)
     */
    public static Report examine(ThreadSource source, Options o, IntConsumer progress)
            throws IOException, InterruptedException {
        List<String> notes = new ArrayList<>();
        boolean recording = true;
        try {
            source.startPinningRecording();
        } catch (IOException e) {
            recording = false;
            notes.add("pinning not recorded: " + e.getMessage());
        }
        List<ThreadDump> samples = take(source, o, progress);
        List<Pinned> pinned = recording ? source.stopPinningRecording() : List.of();
        boolean carriersKnown = samples.stream().flatMap(d -> d.threads().stream()).anyMatch(t -> t.carrier() >= 0);
        if (!carriersKnown) {
            notes.add("no virtual thread was seen mounted on a carrier (idle, or a JDK before 25, whose thread dumps do "
                    + "not name carriers): runaways cannot be told");
        }
        return Analyzer.analyze(source.describe(), samples, pinned, source.parallelism(), o.interval(), o.runaway(),
                notes);
    }

    /** A dump every interval over the window (the first at once, the last at or before its end). */
    private static List<ThreadDump> take(ThreadSource source, Options o, IntConsumer progress)
            throws IOException, InterruptedException {
        List<ThreadDump> samples = new ArrayList<>();
        long next = System.nanoTime();
        long end = next + o.window().toNanos();
        while (true) {
            samples.add(source.dump());
            if (progress != null) {
                progress.accept(samples.size());
            }
            next += o.interval().toNanos();
            if (next - end > 0) {
                return samples;
            }
            long wait = next - System.nanoTime();
            if (wait > 0) {
                Thread.sleep(Duration.ofNanos(wait));
            }
        }
    }
}
