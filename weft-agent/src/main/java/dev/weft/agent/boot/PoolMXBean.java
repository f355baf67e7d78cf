package dev.weft.agent.boot;

/**
 * What the agent shows of one converted pool over JMX, as {@code dev.weft.agent:type=Pool,name="PATTERN"}
 * (PATTERN: the pool's thread names with the trailing number as {@code N}). {@code weft doctor} and jconsole
 * read these; {@code jstack} does not list virtual threads ({@code jcmd PID Thread.dump_to_file} does).
 */
public interface PoolMXBean {
    /** The executor's class. */
    String getExecutorClass();

    /** The pool's thread names, the trailing number as N ({@code pool-1-thread-N}). */
    String getThreadNamePattern();

    /** Tasks running now (the executor's {@code getActiveCount()}). */
    int getActive();

    /** Tasks waiting in the executor's queue. */
    int getQueued();

    /** Tasks the executor refused (its rejection handler was called) since the agent converted it. */
    long getRejected();

    /**
     * Times a worker of this pool blocked while pinned to its carrier (JFR's {@code jdk.VirtualThreadPinned},
     * at least the agent's {@code pinned_threshold} long, 20 ms by default; on JDK 25 inside a class initializer or
     * under a native frame), counted since the count started: the agent's {@code pinned} option (with the JVM) or
     * {@link #startPinnedCount()}. Reading it never starts anything (JMX scrapers read every attribute). -1 until
     * started, with the agent's {@code pinned=off}, when this runtime cannot count (no JFR), and after its recording
     * stopped (say {@code jcmd PID JFR.stop}).
     */
    long getPinned();

    /**
     * Starts the count behind every pool's {@link #getPinned()} (one JFR recording stream in the process, of
     * {@code jdk.VirtualThreadPinned} alone) unless it runs, could not start, or the agent's {@code pinned=off}
     * forbids it; waits up to 10 s for the recording to start. Returns whether it counts. {@code weft doctor} calls it at its window's start.
     */
    boolean startPinnedCount();

    /** Tasks completed (the executor's {@code getCompletedTaskCount()}). */
    long getCompleted();

    /** Worker threads now, each a virtual thread (the executor's {@code getPoolSize()}). */
    int getPoolSize();

    /** The bound: at most this many tasks at once (the executor's {@code getMaximumPoolSize()}). */
    int getMaximumPoolSize();

    /** The maximum pool size the application gave, before {@code concurrency=N}. */
    int getOriginalMaximumPoolSize();
}
