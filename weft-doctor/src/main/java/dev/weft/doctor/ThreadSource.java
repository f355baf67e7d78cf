package dev.weft.doctor;

import java.io.IOException;
import java.util.List;

/** Where the doctor gets its samples: another JVM through the attach API ({@link AttachedJvm}), or this one. */
public interface ThreadSource extends AutoCloseable {
    /** A JSON thread dump, now. */
    ThreadDump dump() throws IOException;

    /** Starts recording {@code jdk.VirtualThreadPinned} events (threshold 20 ms, as the JDK's default). */
    void startPinningRecording() throws IOException;

    /** Stops the recording and returns its events. */
    List<Pinned> stopPinningRecording() throws IOException;

    /** The virtual-thread scheduler's parallelism (its carriers at most, normally). */
    int parallelism() throws IOException;

    /** What is examined, for the report: "pid 1234 (JDK 25.0.3)". */
    String describe();

    @Override
    void close();
}
