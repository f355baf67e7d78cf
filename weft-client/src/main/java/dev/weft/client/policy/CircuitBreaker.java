package dev.weft.client.policy;

import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;

/**
 * A circuit breaker for one destination: closed, open, half-open (see {@link BreakerPolicy}).
 *
 * <p>Thread-safe; a {@link ReentrantLock} guards the small state (no {@code synchronized}, which
 * would be wrong on virtual threads' hot paths). Callers ask {@link #tryAcquire()} before a call
 * and report each permitted call exactly once with {@link #onSuccess()}, {@link #onFailure()} or
 * {@link #onIgnored()}.
 */
public final class CircuitBreaker {
    public enum State { CLOSED, OPEN, HALF_OPEN }

    private final BreakerPolicy policy;
    private final LongSupplier clock;
    private final ReentrantLock lock = new ReentrantLock();
    private final boolean[] ring;

    private State state = State.CLOSED;
    private int ringPos;
    private int ringCount;
    private int ringFailures;
    private int consecutive;
    private long openUntil;
    private int probesInFlight;
    private long opened;

    public CircuitBreaker(BreakerPolicy policy) {
        this(policy, System::nanoTime);
    }

    /** For unit tests of the state machine only; the clock is {@link System#nanoTime()} in production. */
    CircuitBreaker(BreakerPolicy policy, LongSupplier nanoClock) {
        this.policy = policy;
        this.clock = nanoClock;
        this.ring = new boolean[policy.window()];
    }

    /** Whether a call may go out now; if true, report its outcome exactly once. */
    public boolean tryAcquire() {
        if (!policy.enabled()) {
            return true;
        }
        lock.lock();
        try {
            switch (state) {
                case CLOSED:
                    return true;
                case OPEN:
                    if (clock.getAsLong() - openUntil < 0) {
                        return false;
                    }
                    state = State.HALF_OPEN;
                    probesInFlight = 0;
                    // fall through: the first caller after openFor becomes a probe
                case HALF_OPEN:
                    if (probesInFlight < policy.probes()) {
                        probesInFlight++;
                        return true;
                    }
                    return false;
                default:
                    throw new AssertionError(state);
            }
        } finally {
            lock.unlock();
        }
    }

    public void onSuccess() {
        record(false);
    }

    public void onFailure() {
        record(true);
    }

    /** A permitted call whose outcome says nothing about the destination (cancelled, for instance). */
    public void onIgnored() {
        if (!policy.enabled()) {
            return;
        }
        lock.lock();
        try {
            if (state == State.HALF_OPEN && probesInFlight > 0) {
                probesInFlight--;
            }
        } finally {
            lock.unlock();
        }
    }

    private void record(boolean failure) {
        if (!policy.enabled()) {
            return;
        }
        lock.lock();
        try {
            if (state == State.HALF_OPEN) {
                if (failure) {
                    open();
                } else {
                    close();
                }
                return;
            }
            if (state == State.OPEN) {
                return; // a call that started before the breaker opened
            }
            consecutive = failure ? consecutive + 1 : 0;
            if (ringCount == ring.length) {
                if (ring[ringPos]) {
                    ringFailures--;
                }
            } else {
                ringCount++;
            }
            ring[ringPos] = failure;
            if (failure) {
                ringFailures++;
            }
            ringPos = (ringPos + 1) % ring.length;
            if (consecutive >= policy.consecutiveFailures()
                    || (ringCount >= policy.minCalls() && ringFailures >= policy.failureRatio() * ringCount)) {
                open();
            }
        } finally {
            lock.unlock();
        }
    }

    private void open() {
        state = State.OPEN;
        openUntil = clock.getAsLong() + policy.openFor().toNanos();
        probesInFlight = 0;
        opened++;
    }

    private void close() {
        state = State.CLOSED;
        consecutive = 0;
        ringPos = 0;
        ringCount = 0;
        ringFailures = 0;
        java.util.Arrays.fill(ring, false);
        probesInFlight = 0;
    }

    public State state() {
        lock.lock();
        try {
            if (state == State.OPEN && clock.getAsLong() - openUntil >= 0) {
                return State.HALF_OPEN;
            }
            return state;
        } finally {
            lock.unlock();
        }
    }

    /** How many times the breaker has opened. */
    public long timesOpened() {
        lock.lock();
        try {
            return opened;
        } finally {
            lock.unlock();
        }
    }
}
