package dev.weft.core;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Lets a report through at most once per period, from any number of threads (the first at once): for a
 * condition that can repeat thousands of times a second, such as running out of file descriptors, where one
 * line a second with the counts says more than a line each time.
 */
public final class OncePer {
    private final long periodNanos;
    private final AtomicLong last;

    public OncePer(Duration period) {
        this.periodNanos = period.toNanos();
        this.last = new AtomicLong(System.nanoTime() - periodNanos);
    }

    /** True for one caller when a period has passed since the last true. */
    public boolean due() {
        long now = System.nanoTime();
        long l = last.get();
        return now - l >= periodNanos && last.compareAndSet(l, now);
    }
}
