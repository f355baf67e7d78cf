package dev.weft.dispatch.engine;

import java.time.Duration;

/**
 * How long one turn of the consumer thread's poll loop may wait for Kafka, shared by every broker step of the turn: a
 * commit (in a revocation's callback too), the committed offsets and positions of the partitions just assigned, the
 * offset look-ups after an out-of-range position, and the waits of the parking sends the thread makes itself. Each
 * step waits for what is left of the turn's budget, and a step that finds too little left is not begun: it waits for
 * a later turn (a commit covers the same offsets then; unpositioned partitions stay paused until then; a send goes to
 * the parking retry thread). So a broker that answers nothing holds a turn the budget at most, not the budget per
 * step: before, a rebalance's turn could wait 10 s for the revocation's commit, 10 s for the new partitions'
 * positions and 10 s for them again after the poll.
 * <p>
 * The budget is started and spent on the consumer thread only; {@link #onTurnThread} tells other threads apart.
 */
final class TurnBudget {
    private final long totalNanos;
    private volatile Thread owner;
    /** The end of the current turn's budget, in {@link System#nanoTime} (the owner's only). */
    private long untilNanos;

    TurnBudget(Duration total) {
        if (total.isNegative() || total.isZero()) {
            throw new IllegalArgumentException("a turn's budget must be positive, not " + total);
        }
        this.totalNanos = total.toNanos();
    }

    /** The calling thread (the consumer thread) starts a turn: its steps share a whole budget from now. */
    void start() {
        owner = Thread.currentThread();
        untilNanos = System.nanoTime() + totalNanos;
    }

    /** Whether the calling thread is the one whose turns this budget bounds. */
    boolean onTurnThread() {
        return Thread.currentThread() == owner;
    }

    /** What is left of the current turn's budget, zero once it is spent. */
    Duration left() {
        return Duration.ofNanos(Math.max(0, untilNanos - System.nanoTime()));
    }

    /** Whether a step that may wait {@code wait} can still finish within the current turn's budget. */
    boolean allows(Duration wait) {
        return untilNanos - System.nanoTime() - wait.toNanos() >= 0;
    }

    /** Whether nothing is left of the current turn's budget. */
    boolean spent() {
        return untilNanos - System.nanoTime() <= 0;
    }
}
