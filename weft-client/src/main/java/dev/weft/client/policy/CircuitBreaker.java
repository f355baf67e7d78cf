package dev.weft.client.policy;

import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;

/**
 * A circuit breaker for one destination: closed, open, half-open (see {@link BreakerPolicy}).
 *
 * <p>Thread-safe; a {@link ReentrantLock} guards the small state (no {@code synchronized}, which
 * would be wrong on virtual threads' hot paths). Callers ask {@link #acquire()} before a call and report each
 * permitted call exactly once with {@link #onSuccess(long)}, {@link #onFailure(long)} or {@link #onIgnored(long)},
 * passing the permit {@code acquire} gave. A result counts only in the state it was permitted in: every change of
 * state starts a new epoch, and a call permitted before it (one admitted while closed that answers after the
 * breaker opened and went half-open, say) neither decides a half-open batch nor frees a probe's place. Without
 * that, one slow call from before the breaker opened could close it before its probe answered, or its
 * {@code onIgnored} let a second probe out.
 */
public final class CircuitBreaker {
    public enum State { CLOSED, OPEN, HALF_OPEN }

    private static final int BUCKETS = 10;

    private final BreakerPolicy policy;
    private final LongSupplier clock;
    private final ReentrantLock lock = new ReentrantLock();
    private final long bucketNanos;
    /** Per bucket: the index of the time slice it holds, its calls and failures. */
    private final long[] bucketSlice = new long[BUCKETS];
    private final int[] bucketCalls = new int[BUCKETS];
    private final int[] bucketFailures = new int[BUCKETS];

    private State state = State.CLOSED;
    private int consecutive;
    private long openUntil;
    private int probesAllowed;
    private int probesInFlight;
    private int probeResults;
    private int probeFailures;
    private long opened;
    /** Counts the changes of state: a permit is the epoch it was given in. */
    private long epoch;

    public CircuitBreaker(BreakerPolicy policy) {
        this(policy, System::nanoTime);
    }

    /** For unit tests of the state machine only; the clock is {@link System#nanoTime()} in production. */
    CircuitBreaker(BreakerPolicy policy, LongSupplier nanoClock) {
        this.policy = policy;
        this.clock = nanoClock;
        this.bucketNanos = Math.max(1, policy.window().toNanos() / BUCKETS);
        java.util.Arrays.fill(bucketSlice, Long.MIN_VALUE);
    }

    /** The permit {@link #acquire()} gives when no call may go out. */
    public static final long REFUSED = -1;

    /**
     * A permit for a call that may go out now, or {@link #REFUSED}; report the call's outcome exactly once with this
     * permit.
     */
    public long acquire() {
        if (!policy.enabled()) {
            return 0;
        }
        lock.lock();
        try {
            switch (state) {
                case CLOSED:
                    return epoch;
                case OPEN:
                    if (clock.getAsLong() - openUntil < 0) {
                        return REFUSED;
                    }
                    state = State.HALF_OPEN;
                    epoch++;
                    probesInFlight = 0;
                    probeResults = 0;
                    probeFailures = 0;
                    // fall through: the first callers after openFor become probes
                case HALF_OPEN:
                    if (probesInFlight + probeResults < probesAllowed) {
                        probesInFlight++;
                        return epoch;
                    }
                    return REFUSED;
                default:
                    throw new AssertionError(state);
            }
        } finally {
            lock.unlock();
        }
    }

    public void onSuccess(long permit) {
        record(permit, false);
    }

    public void onFailure(long permit) {
        record(permit, true);
    }

    /** A call permitted by {@code permit} whose outcome says nothing about the destination (cancelled, for instance). */
    public void onIgnored(long permit) {
        if (!policy.enabled()) {
            return;
        }
        lock.lock();
        try {
            if (state == State.HALF_OPEN && probesInFlight > 0 && permit == epoch) {
                probesInFlight--;
            }
        } finally {
            lock.unlock();
        }
    }

    private void record(long permit, boolean failure) {
        if (!policy.enabled()) {
            return;
        }
        lock.lock();
        try {
            if (permit != epoch) {
                return; // permitted in an earlier state: says nothing about this one
            }
            if (state == State.HALF_OPEN) {
                if (probesInFlight > 0) {
                    probesInFlight--;
                }
                probeResults++;
                if (failure) {
                    probeFailures++;
                }
                // decide once the batch has answered, or early when the failures alone already reach the ratio
                if (probeFailures >= policy.failureRatio() * probesAllowed) {
                    open();
                } else if (probeResults >= probesAllowed) {
                    close();
                }
                return;
            }
            if (state == State.OPEN) {
                return; // a call that started before the breaker opened
            }
            consecutive = failure ? consecutive + 1 : 0;
            long slice = Math.floorDiv(clock.getAsLong(), bucketNanos);
            int i = (int) Math.floorMod(slice, (long) BUCKETS);
            if (bucketSlice[i] != slice) {
                bucketSlice[i] = slice;
                bucketCalls[i] = 0;
                bucketFailures[i] = 0;
            }
            bucketCalls[i]++;
            if (failure) {
                bucketFailures[i]++;
            }
            if (policy.consecutiveFailures() > 0 && consecutive >= policy.consecutiveFailures()) {
                open();
                return;
            }
            if (failure) {
                int calls = 0;
                int failures = 0;
                for (int b = 0; b < BUCKETS; b++) {
                    if (bucketSlice[b] != Long.MIN_VALUE && slice - bucketSlice[b] < BUCKETS) {
                        calls += bucketCalls[b];
                        failures += bucketFailures[b];
                    }
                }
                if (calls >= policy.minCalls() && failures >= policy.failureRatio() * calls) {
                    open();
                }
            }
        } finally {
            lock.unlock();
        }
    }

    /** Calls per second that finished in the window, over the part of the window that saw calls. */
    private double callRate() {
        long slice = Math.floorDiv(clock.getAsLong(), bucketNanos);
        int calls = 0;
        long oldest = slice;
        for (int b = 0; b < BUCKETS; b++) {
            if (bucketSlice[b] != Long.MIN_VALUE && slice - bucketSlice[b] < BUCKETS) {
                calls += bucketCalls[b];
                oldest = Math.min(oldest, bucketSlice[b]);
            }
        }
        return calls / ((slice - oldest + 1) * (double) bucketNanos / 1e9);
    }

    private void open() {
        if (state != State.HALF_OPEN) {
            probesAllowed = (int) Math.min(BreakerPolicy.MAX_PROBES, Math.max(policy.probes(), Math.round(callRate() / 10)));
        }
        state = State.OPEN;
        epoch++;
        openUntil = clock.getAsLong() + policy.openFor().toNanos();
        probesInFlight = 0;
        probeResults = 0;
        probeFailures = 0;
        opened++;
    }

    private void close() {
        state = State.CLOSED;
        epoch++;
        consecutive = 0;
        java.util.Arrays.fill(bucketSlice, Long.MIN_VALUE);
        java.util.Arrays.fill(bucketCalls, 0);
        java.util.Arrays.fill(bucketFailures, 0);
        probesInFlight = 0;
        probeResults = 0;
        probeFailures = 0;
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

    /** How many probe calls the breaker lets through while half-open (after it last opened). */
    public int probesAllowed() {
        lock.lock();
        try {
            return probesAllowed;
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
