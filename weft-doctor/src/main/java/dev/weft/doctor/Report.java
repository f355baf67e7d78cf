package dev.weft.doctor;

import java.util.List;
import java.util.Map;

/**
 * What the doctor saw over one window. Serialized as is for {@code --json} and {@code /-/threads}.
 *
 * @param target    what was examined
 * @param from      the first sample's time (ISO-8601)
 * @param windowMs  from the first sample to the last
 * @param samples   thread dumps taken
 * @param notes     what the report cannot say for this target, and why
 */
public record Report(String target, String from, long windowMs, int samples, long intervalMs, long runawayMs,
                     VirtualThreads virtualThreads, List<Runaway> runaways, Pinning pinning, Carriers carriers,
                     PlatformThreads platformThreads, List<String> notes) {

    /** The virtual threads of the last sample. */
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
     * A virtual thread seen running on the same carrier in consecutive samples for at least the runaway
     * threshold: it held that carrier (no other virtual thread could use it) for about {@code heldMs}.
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
     * @param runnableWaitingMean virtual threads runnable but not mounted (waiting for a carrier), mean over samples
     */
    public record Carriers(int parallelism, List<Carrier> carriers, double runnableWaitingMean,
                           int runnableWaitingMax) {
    }

    /** @param busyShare the share of samples in which it carried a virtual thread */
    public record Carrier(long tid, String name, double busyShare) {
    }

    /** Platform threads other than the carriers, by name with the digits folded ("pool-#-thread-#"). */
    public record PlatformThreads(int total, List<NameGroup> groups) {
    }

    public record NameGroup(String name, int count, Map<String, Integer> byState) {
    }
}
