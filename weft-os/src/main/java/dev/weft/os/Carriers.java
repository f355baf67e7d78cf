package dev.weft.os;

/**
 * The carrier threads of the virtual-thread scheduler. On one CPU the JDK gives it one carrier. A ForkJoinPool
 * worker runs its whole local queue (the virtual threads that threads running on it woke) before it looks at the
 * queue that timers and the poller's master thread feed, so on one carrier a timed wait that has expired, or a
 * socket the master poller found ready, waits until the local queue runs dry: the gateway's scheduler probe saw a
 * mean lag over 100 ms in 100 ms intervals while the CPU was 13-38% idle (docs/design/admission.md). Two
 * carriers on one CPU take turns, and the second takes from that queue while the first runs its own.
 */
public final class Carriers {
    /** The JDK's property: the scheduler's parallelism, read when the first virtual thread is created. */
    public static final String PROPERTY = "jdk.virtualThreadScheduler.parallelism";

    private Carriers() {
    }

    /**
     * Call before the process creates its first virtual thread: two carriers when the process has one CPU and the
     * property is not set already (a user's own setting wins).
     *
     * @return the parallelism this set, or null when it set nothing
     */
    public static String atLeastTwo() {
        if (System.getProperty(PROPERTY) == null && Runtime.getRuntime().availableProcessors() < 2) {
            System.setProperty(PROPERTY, "2");
            return "2";
        }
        return null;
    }
}
