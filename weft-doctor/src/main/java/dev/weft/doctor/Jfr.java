package dev.weft.doctor;

import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.RecordingFile;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/** Reads the doctor's JFR events: execution samples and pinning. */
public final class Jfr {
    static final String PINNED = "jdk.VirtualThreadPinned";
    static final String SAMPLE = "jdk.ExecutionSample";

    private Jfr() {
    }

    /** One execution sample: a thread seen running Java code. */
    public record Sample(Instant time, long tid, String name, boolean virtual, List<String> stack) {
    }

    /** What a recording held. */
    public record Recorded(List<Sample> samples, List<Pinned> pinned) {
    }

    static Recorded read(Path file) throws IOException {
        List<Sample> samples = new ArrayList<>();
        List<Pinned> pinned = new ArrayList<>();
        for (RecordedEvent e : RecordingFile.readAllEvents(file)) {
            String type = e.getEventType().getName();
            if (type.equals(SAMPLE)) {
                RecordedThread t = e.getThread("sampledThread");
                if (t != null) {
                    samples.add(new Sample(e.getStartTime(), t.getJavaThreadId(), nameOf(t), t.isVirtual(),
                            frames(e.getStackTrace())));
                }
            } else if (type.equals(PINNED)) {
                RecordedThread t = e.getThread();
                RecordedThread carrier = e.hasField("carrierThread") ? e.getValue("carrierThread") : null;
                pinned.add(new Pinned(t == null ? "?" : label(t), carrier == null ? "" : label(carrier), e.getDuration(),
                        e.hasField("pinnedReason") ? nonNull(e.getString("pinnedReason")) : "",
                        e.hasField("blockingOperation") ? nonNull(e.getString("blockingOperation")) : "",
                        frames(e.getStackTrace())));
            }
        }
        samples.sort(java.util.Comparator.comparing(Sample::time));
        return new Recorded(List.copyOf(samples), List.copyOf(pinned));
    }

    private static String nameOf(RecordedThread t) {
        String n = t.getJavaName();
        return n == null ? "" : n;
    }

    private static String label(RecordedThread t) {
        String n = nameOf(t);
        return (n.isEmpty() ? "#" + t.getJavaThreadId() : n) + " (tid " + t.getJavaThreadId() + ")";
    }

    private static String nonNull(String s) {
        return s == null ? "" : s;
    }

    private static List<String> frames(RecordedStackTrace st) {
        if (st == null) {
            return List.of();
        }
        List<String> out = new ArrayList<>();
        for (RecordedFrame f : st.getFrames()) {
            out.add(f.getMethod().getType().getName() + "." + f.getMethod().getName()
                    + (f.getLineNumber() > 0 ? "(line " + f.getLineNumber() + ")" : ""));
        }
        return List.copyOf(out);
    }
}
