package dev.weft.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import java.util.function.ToLongFunction;

/**
 * A timer for many items that each come due once, at a {@link System#nanoTime()} fixed when filed: one
 * daemon platform thread wakes every tick while anything is filed (and sleeps untimed while nothing is),
 * and hands every item whose time has come to the action, in the order it finds them. Items are filed in
 * one of {@code slots} concurrent sets by their due tick, so a wake-up visits only the slots whose time
 * has come (an item due more than one turn of the wheel away is passed over until its turn).
 *
 * <p>Why not a {@code ScheduledThreadPoolExecutor} or timed parks: those wake a thread for every item
 * (and take a lock for every schedule and cancel); with thousands of items due per second, one wake-up
 * per tick that takes all the due ones costs far fewer context switches. An item may fire up to about one
 * tick late, never early.
 *
 * @param <T> the items; their {@code equals}/{@code hashCode} must be identity-like, and their due time
 *            must not change while they are filed
 */
public final class TickWheel<T> {
    private final long tickNanos;
    private final long tickMillis;
    private final List<Set<T>> wheel;
    private final ToLongFunction<? super T> due;
    private final Consumer<? super T> action;
    /** Items filed and not yet taken out; the sweeper sleeps untimed at 0. */
    private final AtomicInteger filed = new AtomicInteger();
    private final Thread sweeper;
    private volatile boolean closed;

    /**
     * @param name   the sweeper thread's name
     * @param tick   how often the sweeper looks (at least 1 ms); also how late an item can fire
     * @param slots  how many ticks one turn of the wheel has
     * @param due    an item's due time, in {@link System#nanoTime()} units
     * @param action what to do with an item whose time has come; runs on the sweeper, so it must be quick
     */
    public TickWheel(String name, Duration tick, int slots, ToLongFunction<? super T> due, Consumer<? super T> action) {
        if (tick.toMillis() < 1 || slots < 1) {
            throw new IllegalArgumentException("tick must be at least 1 ms and slots at least 1");
        }
        this.tickMillis = tick.toMillis();
        this.tickNanos = tickMillis * 1_000_000;
        this.due = due;
        this.action = action;
        this.wheel = new ArrayList<>(slots);
        for (int i = 0; i < slots; i++) {
            wheel.add(ConcurrentHashMap.newKeySet());
        }
        this.sweeper = Thread.ofPlatform().daemon().name(name).start(this::sweep);
    }

    /**
     * Files {@code item} until it comes due (then the action gets it) or {@link #remove} takes it out.
     *
     * @return false when the wheel is closed (nothing is filed)
     */
    public boolean add(T item) {
        if (closed) {
            return false;
        }
        slot(due.applyAsLong(item)).add(item);
        if (filed.getAndIncrement() == 0) {
            LockSupport.unpark(sweeper);
        }
        return true;
    }

    /**
     * Stops the sweeper and takes out every item still filed: the caller gets them (their action never
     * runs). An item filed while this runs may be missed by both.
     */
    public List<T> close() {
        closed = true;
        sweeper.interrupt();
        List<T> left = new ArrayList<>();
        for (Set<T> slot : wheel) {
            for (T item : slot) {
                if (slot.remove(item)) {
                    filed.decrementAndGet();
                    left.add(item);
                }
            }
        }
        return left;
    }

    /** Takes {@code item} out; true when it was filed (so the action has not had it and never will). */
    public boolean remove(T item) {
        if (slot(due.applyAsLong(item)).remove(item)) {
            filed.decrementAndGet();
            return true;
        }
        return false;
    }

    private Set<T> slot(long dueNanos) {
        return wheel.get((int) Math.floorMod(Math.floorDiv(dueNanos, tickNanos), (long) wheel.size()));
    }

    private void sweep() {
        long swept = Math.floorDiv(System.nanoTime(), tickNanos) - 1;
        while (!closed) {
            if (filed.get() == 0) {
                LockSupport.park(this); // add() unparks; a spurious return just looks again
                continue;
            }
            try {
                Thread.sleep(tickMillis);
            } catch (InterruptedException e) {
                return;
            }
            long now = System.nanoTime();
            long tick = Math.floorDiv(now, tickNanos);
            // every slot whose time came since the last wake-up, at most one full turn
            for (long t = Math.max(swept + 1, tick - wheel.size() + 1); t <= tick; t++) {
                Set<T> slot = wheel.get((int) Math.floorMod(t, (long) wheel.size()));
                for (T item : slot) {
                    if (now - due.applyAsLong(item) >= 0 && slot.remove(item)) {
                        filed.decrementAndGet();
                        fire(item);
                    }
                }
            }
            // The current tick is not over: items due later in it are looked at again on the next wake-up.
            swept = tick - 1;
        }
    }

    private void fire(T item) {
        try {
            action.accept(item);
        } catch (Throwable e) {
            // one bad item must not stop the timer for every other (an Error too: the deadlines of every call and
            // request after it hang on this thread)
            Thread.UncaughtExceptionHandler h = sweeper.getUncaughtExceptionHandler();
            h.uncaughtException(sweeper, e);
        }
    }
}
