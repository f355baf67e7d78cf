package dev.weft.os;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * How late a virtual thread wakes up: a probe sleeps {@code period} again and again and records by how much
 * each wake-up came late. The lateness is the time a ready virtual thread waits for a carrier thread, so it is
 * what every request of this process waits on top of its own work when the process (or the machine) is short of
 * CPU — the gateway's own contribution to latency, whatever the backends take.
 *
 * <p>Three readers: the admission takes the mean lateness every 100 ms, less the collector's pauses
 * ({@link #takeMillis()}); the client asks,
 * for a call that timed out, how late a wake-up during its time came at worst ({@link #worstSince(long)}, on the
 * process's {@link #shared()} probe), so that a timeout the gateway caused does not count against the backend;
 * and the gateway's metrics see every wake-up ({@link #onWake}) as a histogram.
 * A wake-up counts whole for the 50 ms slot it came in, though part of its lateness may lie before: the record
 * errs towards calling a call starved.
 */
public final class SchedulerLag implements AutoCloseable {
    /** The record of recent lateness: the worst wake-up of each 50 ms slot, for the last 6.4 s. */
    private static final long SLOT_NANOS = 50_000_000L;
    private static final int SLOTS = 128;

    private final long periodNanos;
    /** Per slot: which slot of time it holds ({@code nanoTime / SLOT_NANOS}) and its worst lateness; one writer. */
    private final AtomicLongArray slotTime = new AtomicLongArray(SLOTS);
    private final AtomicLongArray slotWorst = new AtomicLongArray(SLOTS);
    private final AtomicLong lateSum = new AtomicLong();
    /** The collector's stop-the-world pauses so far (ms), or -1 when the JVM cannot tell (see {@link #pauseMillis}). */
    private final java.util.function.LongSupplier pauses;
    private final AtomicLong wakes = new AtomicLong();
    private final AtomicLong lastWake = new AtomicLong(System.nanoTime());
    private final Thread probe;
    private final java.util.List<java.util.function.LongConsumer> listeners = new java.util.concurrent.CopyOnWriteArrayList<>();
    private volatile double lastMillis;
    private volatile boolean closed;

    public SchedulerLag(java.time.Duration period) {
        this(period, SchedulerLag::pauseMillis);
    }

    /** With {@code pauses}: the collector's stop-the-world pauses so far (ms), read before and after each wait. */
    SchedulerLag(java.time.Duration period, java.util.function.LongSupplier pauses) {
        this.periodNanos = period.toNanos();
        this.pauses = pauses;
        for (int i = 0; i < SLOTS; i++) {
            slotTime.set(i, Long.MIN_VALUE);
        }
        this.probe = Thread.ofVirtual().name("weft-lag-probe").start(this::run);
    }

    private void run() {
        while (!closed) {
            long paused0 = pauses.getAsLong();
            long t0 = System.nanoTime();
            try {
                Thread.sleep(java.time.Duration.ofNanos(periodNanos));
            } catch (InterruptedException e) {
                return;
            }
            long now = System.nanoTime();
            long late = Math.max(0, now - t0 - periodNanos);
            long paused = paused0 < 0 ? 0 : Math.max(0, pauses.getAsLong() - paused0) * 1_000_000L;
            lateSum.addAndGet(Math.max(0, late - paused));
            record(now, late);
            for (java.util.function.LongConsumer l : listeners) {
                l.accept(late);
            }
            wakes.incrementAndGet();
            lastWake.set(now);
        }
    }

    /**
     * The mean lateness (ms) of the wake-ups since the last call, each less the collector's stop-the-world pauses
     * during its wait; a probe that did not wake at all counts its wait.
     *
     * <p>Why less the pauses: a pause stops every thread, carriers and front door alike, whatever is admitted; it
     * is not a wait for a carrier. With 4,000 requests in flight at 1 s backends, G1 paused 100-200 ms every 0.5-2
     * s on one CPU, and most cuts of the admission limit that refused a closed loop came in the revision that saw a
     * pause (docs/design/admission.md). The backlog a pause leaves behind still counts: ready threads then wait
     * for a carrier. The other readers ({@link #worstSince}, {@link #onWake}) see the whole lateness: a call that
     * timed out during a pause was starved by this process.
     */
    public double takeMillis() {
        long n = wakes.getAndSet(0);
        long sum = lateSum.getAndSet(0);
        long sinceWake = System.nanoTime() - lastWake.get() - periodNanos;
        double lag = n == 0 ? Math.max(0, sinceWake) / 1e6 : sum / (double) n / 1e6;
        if (n > 0 && sinceWake > 2 * periodNanos) {
            lag = Math.max(lag, sinceWake / 1e6);
        }
        lastMillis = lag;
        return lag;
    }

    private void record(long now, long late) {
        long slot = Math.floorDiv(now, SLOT_NANOS);
        int i = (int) Math.floorMod(slot, SLOTS);
        if (slotTime.get(i) != slot) {
            slotWorst.set(i, late);
            slotTime.set(i, slot);
        } else if (late > slotWorst.get(i)) {
            slotWorst.set(i, late);
        }
    }

    /**
     * The worst lateness (ns) of a wake-up since {@code sinceNanos} ({@code System.nanoTime()}; at most the last
     * 6.4 s), counting a wake-up still due: how long a ready virtual thread of this process waited for a carrier at
     * worst over that time.
     */
    public long worstSince(long sinceNanos) {
        long now = System.nanoTime();
        long worst = Math.max(0, now - lastWake.get() - periodNanos); // a probe that has not woken yet is late too
        long first = Math.max(Math.floorDiv(sinceNanos, SLOT_NANOS), Math.floorDiv(now, SLOT_NANOS) - SLOTS + 1);
        long last = Math.floorDiv(now, SLOT_NANOS);
        for (long slot = first; slot <= last; slot++) {
            int i = (int) Math.floorMod(slot, SLOTS);
            if (slotTime.get(i) == slot) { // the writer sets a new slot's worst before its time
                worst = Math.max(worst, slotWorst.get(i));
            }
        }
        return worst;
    }

    /**
     * The process's probe (10 ms), started on first use and never closed: one virtual thread that wakes a hundred
     * times a second.
     */
    public static SchedulerLag shared() {
        return Shared.PROBE;
    }

    /** Started when {@link #shared()} is first called (the class is initialised then). */
    private static final class Shared {
        static final SchedulerLag PROBE = new SchedulerLag(java.time.Duration.ofMillis(10));
    }

    /**
     * Tells {@code listener} the lateness (ns) of every wake-up from now on, on the probe's thread (it must not
     * block), until the returned handle is closed.
     */
    public AutoCloseable onWake(java.util.function.LongConsumer listener) {
        listeners.add(listener);
        return () -> listeners.remove(listener);
    }

    /**
     * The collector's stop-the-world pauses so far (ms): the sum of the collection times of the JVM's collectors
     * except ZGC's and Shenandoah's "Cycles" beans, which count concurrent work (G1's, Parallel's and Serial's
     * beans, ZGC's and Shenandoah's "Pauses" beans count pauses); -1 when there is none.
     */
    static long pauseMillis() {
        long sum = 0;
        boolean any = false;
        for (java.lang.management.GarbageCollectorMXBean b : Collectors.BEANS) {
            long t = b.getCollectionTime();
            if (t >= 0) {
                sum += t;
                any = true;
            }
        }
        return any ? sum : -1;
    }

    private static final class Collectors {
        static final java.util.List<java.lang.management.GarbageCollectorMXBean> BEANS =
                java.lang.management.ManagementFactory.getGarbageCollectorMXBeans().stream()
                        .filter(b -> !b.getName().endsWith("Cycles")).toList();
    }

    /** The last value {@link #takeMillis()} returned. */
    public double lastMillis() {
        return lastMillis;
    }

    @Override
    public void close() {
        closed = true;
        probe.interrupt();
    }
}
