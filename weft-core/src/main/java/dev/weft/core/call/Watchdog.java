package dev.weft.core.call;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Enforces every exchange's deadline once it has a connection: reads are untimed (a timed read arms a
 * timer per read, and a body that drips one byte at a time would pass every per-read timeout anyway),
 * so one daemon platform thread wakes every {@link #TICK_MILLIS} ms and aborts the exchanges past their
 * deadline (aborting closes the socket, which wakes the blocked read).
 *
 * <p>Why not a timer per call: a {@code ScheduledThreadPoolExecutor} takes one lock for every schedule
 * and cancel, and at tens of thousands of calls per second the calling virtual threads queued on it
 * (seen in a thread dump under `weft lab clients`).
 *
 * <p>Why a wheel: exchanges are filed in one of {@link #SLOTS} concurrent sets by their deadline's tick,
 * so each wake-up visits only the slots whose time has come (plus, once per turn of the wheel, the few
 * exchanges whose deadline is more than a turn away). The first version scanned every exchange in flight
 * on every tick: with 13,500 calls in flight that scan was a quarter of the gateway's CPU samples in
 * `weft lab system-a` at 1 s.
 */
final class Watchdog {
    static final long TICK_MILLIS = 5;
    private static final long TICK_NANOS = TICK_MILLIS * 1_000_000;
    /** 2,048 ticks of 5 ms: one turn of the wheel is 10.24 s. */
    static final int SLOTS = 2048;
    private static final List<Set<Exchange>> WHEEL = new ArrayList<>(SLOTS);

    static {
        for (int i = 0; i < SLOTS; i++) {
            WHEEL.add(ConcurrentHashMap.newKeySet());
        }
        Thread.ofPlatform().daemon().name("weft-deadline-sweeper").start(Watchdog::sweep);
    }

    private Watchdog() {
    }

    /** Watches {@code e} until {@link #unwatch}; its {@link Exchange#deadlineNanos()} must not change meanwhile. */
    static void watch(Exchange e) {
        slot(e.deadlineNanos()).add(e);
    }

    static void unwatch(Exchange e) {
        slot(e.deadlineNanos()).remove(e);
    }

    private static Set<Exchange> slot(long deadlineNanos) {
        return WHEEL.get((int) Math.floorMod(Math.floorDiv(deadlineNanos, TICK_NANOS), (long) SLOTS));
    }

    private static void sweep() {
        long swept = Math.floorDiv(System.nanoTime(), TICK_NANOS) - 1;
        while (true) {
            try {
                Thread.sleep(TICK_MILLIS);
            } catch (InterruptedException e) {
                return;
            }
            long now = System.nanoTime();
            long tick = Math.floorDiv(now, TICK_NANOS);
            // every slot whose time came since the last wake-up, at most one full turn
            for (long t = Math.max(swept + 1, tick - SLOTS + 1); t <= tick; t++) {
                Set<Exchange> slot = WHEEL.get((int) Math.floorMod(t, (long) SLOTS));
                for (Exchange e : slot) {
                    if (now - e.deadlineNanos() >= 0 && slot.remove(e)) {
                        e.deadlineReached();
                    }
                }
            }
            // The current tick is not over: exchanges due later in it are looked at again on the next wake-up.
            swept = tick - 1;
        }
    }
}
