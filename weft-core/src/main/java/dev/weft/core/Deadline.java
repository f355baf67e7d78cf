package dev.weft.core;

import java.time.Duration;

/**
 * A point in time by which work must be done, on the monotonic clock ({@link System#nanoTime()}).
 *
 * <p>An inbound request gets one deadline; every call it makes runs under the remaining budget.
 * Immutable and cheap: pass it down instead of passing timeouts.
 */
public final class Deadline {
    private final long deadlineNanos;

    private Deadline(long deadlineNanos) {
        this.deadlineNanos = deadlineNanos;
    }

    /** A deadline {@code budget} from now. */
    public static Deadline in(Duration budget) {
        return new Deadline(System.nanoTime() + saturatedNanos(budget));
    }

    /** A deadline at {@code nanoTime}, a {@link System#nanoTime()} value. */
    public static Deadline at(long nanoTime) {
        return new Deadline(nanoTime);
    }

    /** The earlier of this deadline and {@code budget} from now. */
    public Deadline atMost(Duration budget) {
        long other = System.nanoTime() + saturatedNanos(budget);
        return other - deadlineNanos < 0 ? new Deadline(other) : this;
    }

    /** The earlier of the two. */
    public Deadline min(Deadline other) {
        return other.deadlineNanos - deadlineNanos < 0 ? other : this;
    }

    /** Nanoseconds left; zero or negative once expired. */
    public long remainingNanos() {
        return deadlineNanos - System.nanoTime();
    }

    /** Time left, never negative. */
    public Duration remaining() {
        return Duration.ofNanos(Math.max(0, remainingNanos()));
    }

    public boolean expired() {
        return remainingNanos() <= 0;
    }

    /** The deadline as a {@link System#nanoTime()} value. */
    public long nanoTime() {
        return deadlineNanos;
    }

    @Override
    public String toString() {
        return "Deadline[" + Durations.format(remaining()) + " left]";
    }

    private static long saturatedNanos(Duration d) {
        if (d.isNegative()) {
            return 0;
        }
        // About 146 years: far enough to mean "no deadline" without overflowing nanoTime arithmetic.
        return d.compareTo(Duration.ofDays(365L * 100)) > 0 ? Duration.ofDays(365L * 100).toNanos() : d.toNanos();
    }
}
