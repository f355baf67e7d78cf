package dev.weft.core.call;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Enforces deadlines that socket timeouts alone cannot: a body that drips one byte at a time passes
 * every per-read timeout, so one daemon platform thread sweeps the exchanges in flight every
 * {@link #TICK_MILLIS} ms and aborts those past their deadline (aborting closes the socket, which
 * wakes the blocked read).
 *
 * <p>Why a sweep and not a timer per call: a {@code ScheduledThreadPoolExecutor} takes one lock for
 * every schedule and cancel, and at tens of thousands of calls per second the calling virtual threads
 * queued on it (seen in a thread dump under `weft lab clients`). Adding to and removing from a
 * concurrent set does not serialise the callers; the sweep costs one comparison per call in flight.
 * Connect and header waits are still cut exactly by the socket timeouts set from the deadline.
 */
final class Watchdog {
    static final long TICK_MILLIS = 5;
    private static final Set<Exchange> WATCHED = ConcurrentHashMap.newKeySet();

    static {
        Thread.ofPlatform().daemon().name("weft-deadline-sweeper").start(Watchdog::sweep);
    }

    private Watchdog() {
    }

    static void watch(Exchange e) {
        WATCHED.add(e);
    }

    static void unwatch(Exchange e) {
        WATCHED.remove(e);
    }

    private static void sweep() {
        while (true) {
            try {
                Thread.sleep(TICK_MILLIS);
            } catch (InterruptedException e) {
                return;
            }
            long now = System.nanoTime();
            for (Exchange e : WATCHED) {
                if (now - e.deadlineNanos() >= 0 && WATCHED.remove(e)) {
                    e.deadlineReached();
                }
            }
        }
    }
}
