package dev.weft.client;

import dev.weft.core.TickWheel;

import java.time.Duration;

/**
 * Enforces every exchange's deadline once it has a connection: reads are untimed (a timed read arms a
 * timer per read, and a body that drips one byte at a time would pass every per-read timeout anyway),
 * so a {@link TickWheel} (one daemon platform thread, a wake-up every 5 ms while calls are in flight) aborts
 * the exchanges past their deadline (aborting closes the socket, which wakes the blocked read).
 *
 * <p>Why not a timer per call: a {@code ScheduledThreadPoolExecutor} takes one lock for every schedule
 * and cancel, and at tens of thousands of calls per second the calling virtual threads queued on it
 * (seen in a thread dump under `weft lab clients`).
 *
 * <p>Why a wheel: exchanges are filed in one of 2,048 concurrent sets by their deadline's tick, so each
 * wake-up visits only the slots whose time has come (plus, once per turn of the wheel, the few exchanges
 * whose deadline is more than a turn away). The first version scanned every exchange in flight
 * on every tick: with 13,500 calls in flight that scan was a quarter of the gateway's CPU samples in
 * `weft lab system-a` at 1 s.
 */
final class Watchdog {
    /** Ticks of 5 ms, 2,048 of them: one turn of the wheel is 10.24 s. */
    private static final TickWheel<Exchange> WHEEL = new TickWheel<>("weft-deadline-sweeper", Duration.ofMillis(5),
            2048, Exchange::deadlineNanos, Exchange::deadlineReached);

    private Watchdog() {
    }

    /** Watches {@code e} until {@link #unwatch}; its {@link Exchange#deadlineNanos()} must not change meanwhile. */
    static void watch(Exchange e) {
        WHEEL.add(e);
    }

    static void unwatch(Exchange e) {
        WHEEL.remove(e);
    }
}
