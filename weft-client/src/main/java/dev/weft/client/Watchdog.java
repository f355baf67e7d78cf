package dev.weft.client;

import dev.weft.core.TickWheel;

import java.time.Duration;

/**
 * Enforces the deadline of every exchange of one {@link Transport} once it has a connection: reads are untimed (a timed read arms a
 * timer per read, and a body that drips one byte at a time would pass every per-read timeout anyway),
 * so a {@link TickWheel} (one daemon platform thread per transport, a wake-up every 5 ms while calls are in flight) aborts
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
final class Watchdog implements AutoCloseable {
    /** Ticks of 5 ms, 2,048 of them: one turn of the wheel is 10.24 s. */
    private final TickWheel<Exchange> wheel;

    /** Starts the sweeper thread, named {@code name}. */
    Watchdog(String name) {
        wheel = new TickWheel<>(name, Duration.ofMillis(5), 2048, Exchange::deadlineNanos, Exchange::deadlineReached);
    }

    /**
     * Watches {@code e} until {@link #unwatch}; its {@link Exchange#deadlineNanos()} must not change meanwhile.
     * Once the watchdog is closed, {@code e} is cancelled instead (nothing would enforce its deadline).
     */
    void watch(Exchange e) {
        if (!wheel.add(e)) {
            e.cancel();
        }
    }

    void unwatch(Exchange e) {
        wheel.remove(e);
    }

    /** Stops the sweeper; every exchange still watched is cancelled. */
    @Override
    public void close() {
        wheel.close().forEach(Exchange::cancel);
    }
}
