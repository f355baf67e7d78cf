package dev.weft.doctor;

import java.io.IOException;

/** Where the doctor gets its material: another JVM through the attach API ({@link AttachedJvm}), or this one. */
public interface ThreadSource extends AutoCloseable {
    /**
     * A JSON thread dump, now. On JDK 25.0.3 a thread dump taken while virtual threads mount and unmount can
     * crash the JVM (JDK-8364343), so callers take as few as they can.
     */
    ThreadDump dump() throws IOException;

    /**
     * Starts a JFR recording of {@code jdk.ExecutionSample} every {@code periodMillis} (which threads run Java
     * code, virtual ones by their own id and stack) and {@code jdk.VirtualThreadPinned} of 20 ms or longer.
     */
    void startRecording(long periodMillis) throws IOException;

    /** Stops the recording and returns its events. */
    Jfr.Recorded stopRecording() throws IOException;

    /** The virtual-thread scheduler's parallelism (its carriers at most, normally). */
    int parallelism() throws IOException;

    /** The pools weft-agent converted (its {@code dev.weft.agent:type=Pool} MBeans); empty without the agent. */
    java.util.List<Report.AgentPool> agentPools() throws IOException;

    /** Starts weft-agent's count of pinned workers (its pools' {@code startPinnedCount}); nothing without the agent. */
    void startAgentPinnedCount() throws IOException;

    /** What is examined, for the report: "pid 1234 (JDK 25.0.3)". */
    String describe();

    @Override
    void close();
}
