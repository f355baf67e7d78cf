package dev.weft.doctor;

import java.util.List;
import java.util.Map;

/**
 * What the doctor saw over one window. Serialized as is for {@code --json} and {@code /-/threads}.
 *
 * @param target          what was examined
 * @param from            when the window began (ISO-8601)
 * @param windowMs        its length
 * @param samplePeriodMs  JFR's execution sampling period
 * @param executionSamples the samples JFR took in the window
 * @param virtualThreads  the census of the thread dump at the window's end, or null when none was taken
 * @param platformThreads from the same dump, or null
 * @param agentPools      the pools weft-agent converted in the target (its MBeans, read at the window's end);
 *                        empty when the target runs without the agent
 * @param notes           what the report cannot say for this target, and why
 */
public record Report(String target, String from, long windowMs, long samplePeriodMs, int executionSamples,
                     long runawayMs, VirtualThreads virtualThreads, List<Runaway> runaways, Pinning pinning,
                     Carriers carriers, PlatformThreads platformThreads, List<AgentPool> agentPools,
                     List<String> notes) {

    /** The virtual threads of the census (one thread dump at the window's end). */
    public record VirtualThreads(int total, Map<String, Integer> byState, List<StackGroup> stacks) {
    }

    /**
     * Virtual threads in one state at one place.
     *
     * @param where the first frame outside the JDK (the application's code), or the innermost frame
     * @param via   the JDK frame the application called into (Thread.sleep, LockSupport.park, ...), or empty
     */
    public record StackGroup(int count, String state, String where, String via) {
    }

    /**
     * A virtual thread that JFR's execution sampler found running in sample after sample (no gap longer
     * than three periods) for at least the runaway threshold: it held its carrier all that time.
     *
     * @param carrier the carrier it was mounted on in the census, or empty when the census did not see it mounted
     */
    public record Runaway(long tid, String name, String carrier, long heldMs, int samples, List<String> stack) {
    }

    /** The {@code jdk.VirtualThreadPinned} events of the window, grouped by place and reason. */
    public record Pinning(int events, List<PinnedGroup> groups) {
    }

    public record PinnedGroup(int count, long totalMs, long maxMs, String reason, String blockingOperation,
                              String where, List<String> stack) {
    }

    /**
     * The virtual-thread scheduler's carriers.
     *
     * @param busyMean        virtual threads JFR saw running Java code per sampling period, on average over the
     *                        window (at most the parallelism; time in native code is not seen)
     * @param carriers        from the census: each carrier and the virtual thread it carried then, or null
     * @param runnableWaiting from the census: virtual threads runnable but not mounted (waiting for a carrier),
     *                        or -1 without a census
     */
    public record Carriers(int parallelism, double busyMean, List<Carrier> carriers, int runnableWaiting) {
    }

    /** @param carrying the name of the virtual thread mounted on it in the census, or empty */
    public record Carrier(long tid, String name, String carrying) {
    }

    /** Platform threads other than the carriers, by name with the digits folded ("pool-#-thread-#"). */
    public record PlatformThreads(int total, List<NameGroup> groups) {
    }

    public record NameGroup(String name, int count, Map<String, Integer> byState) {
    }

    /**
     * One pool weft-agent converted (its MBean {@code dev.weft.agent:type=Pool,name="PATTERN"}).
     *
     * @param name                    the pool's thread names with the trailing number as N ({@code http-worker-N}),
     *                                {@code " #K"} added for the K-th pool of the same pattern
     * @param active                  tasks running now
     * @param queued                  tasks waiting in the executor's queue
     * @param rejected                tasks the executor refused since the agent converted it
     * @param pinned                  times a worker blocked pinned to its carrier (JFR's jdk.VirtualThreadPinned,
     *                                20 ms or longer), counted by the agent since started (the doctor starts it at
     *                                its window's start); -1 when the agent does not count or does not say
     * @param completed               tasks completed
     * @param poolSize                worker threads now (virtual threads)
     * @param maximumPoolSize         the bound: at most this many tasks at once
     * @param originalMaximumPoolSize the maximum the application gave, before {@code concurrency=N}
     */
    public record AgentPool(String name, String executorClass, int active, int queued, long rejected, long pinned,
                            long completed, int poolSize, int maximumPoolSize, int originalMaximumPoolSize) {
    }
}
