package dev.weft.server.admission;

import java.util.concurrent.atomic.AtomicLong;

/**
 * How late a virtual thread wakes up: a probe sleeps {@code period} again and again and records by how much
 * each wake-up came late. The lateness is the time a ready virtual thread waits for a carrier thread, so it is
 * what every request of this process waits on top of its own work when the process (or the machine) is short of
 * CPU — the gateway's own contribution to latency, whatever the backends take.
 */
public final class SchedulerLag implements AutoCloseable {
    private final long periodNanos;
    private final AtomicLong lateSum = new AtomicLong();
    private final AtomicLong wakes = new AtomicLong();
    private final AtomicLong lastWake = new AtomicLong(System.nanoTime());
    private final Thread probe;
    private volatile double lastMillis;
    private volatile boolean closed;

    public SchedulerLag(java.time.Duration period) {
        this.periodNanos = period.toNanos();
        this.probe = Thread.ofVirtual().name("weft-lag-probe").start(this::run);
    }

    private void run() {
        while (!closed) {
            long t0 = System.nanoTime();
            try {
                Thread.sleep(java.time.Duration.ofNanos(periodNanos));
            } catch (InterruptedException e) {
                return;
            }
            long now = System.nanoTime();
            lateSum.addAndGet(Math.max(0, now - t0 - periodNanos));
            wakes.incrementAndGet();
            lastWake.set(now);
        }
    }

    /** The mean lateness (ms) of the wake-ups since the last call; a probe that did not wake at all counts its wait. */
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
