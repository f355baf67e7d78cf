package dev.weft.core.call;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * One daemon platform thread that fires deadline actions. An action only closes a socket, so one
 * thread serves any number of calls; cancelled entries leave the queue at once.
 */
final class Watchdog {
    private static final ScheduledThreadPoolExecutor TIMER;

    static {
        TIMER = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "weft-deadline-watchdog");
            t.setDaemon(true);
            return t;
        });
        TIMER.setRemoveOnCancelPolicy(true);
    }

    private Watchdog() {
    }

    static ScheduledFuture<?> schedule(Runnable action, long delayNanos) {
        return TIMER.schedule(action, delayNanos, TimeUnit.NANOSECONDS);
    }
}
