package dev.weft.doctor;

import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.RecordingFile;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Reads the pinning events out of a JFR file. */
final class Jfr {
    static final String PINNED = "jdk.VirtualThreadPinned";

    private Jfr() {
    }

    static List<Pinned> pinned(Path file) throws IOException {
        List<Pinned> out = new ArrayList<>();
        for (RecordedEvent e : RecordingFile.readAllEvents(file)) {
            if (!e.getEventType().getName().equals(PINNED)) {
                continue;
            }
            RecordedThread t = e.getThread();
            RecordedThread carrier = e.hasField("carrierThread") ? e.getValue("carrierThread") : null;
            out.add(new Pinned(t == null ? "?" : name(t), carrier == null ? "" : name(carrier), e.getDuration(),
                    e.hasField("pinnedReason") ? nonNull(e.getString("pinnedReason")) : "",
                    e.hasField("blockingOperation") ? nonNull(e.getString("blockingOperation")) : "",
                    frames(e.getStackTrace())));
        }
        return out;
    }

    private static String name(RecordedThread t) {
        String n = t.getJavaName();
        return (n == null || n.isEmpty() ? "#" + t.getJavaThreadId() : n) + " (tid " + t.getJavaThreadId() + ")";
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
