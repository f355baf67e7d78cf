package dev.weft.dispatch.engine;

import dev.weft.dispatch.config.EndpointConfig;

import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/**
 * An endpoint's {@code rate_limit} on this instance: a token bucket holding this instance's share of the
 * group's limit. The share is the fraction of the group's partitions (source and parking topics) this
 * instance owns, set at every rebalance: the instances' shares add up to at most 1, so the group as a whole
 * sends at most {@code perSecond} a second plus the buckets' capacities. A bucket holds
 * {@code burst x share} tokens, at least 1 while the share is not 0, and starts empty (no burst after a
 * start or a rebalance). Workers waiting for a token hold only their own lane.
 */
final class RateLimiter {
    /** The longest one wait sleeps before it looks again (share changes, revoked deliveries, stops). */
    static final long MAX_NAP_NANOS = 50_000_000L;

    private final EndpointConfig.RateLimit limit;
    private final LongSupplier nanos;
    private final ReentrantLock lock = new ReentrantLock();
    private double share;
    private double tokens;
    private long last;

    RateLimiter(EndpointConfig.RateLimit limit, LongSupplier nanos) {
        this.limit = limit;
        this.nanos = nanos;
        this.last = nanos.getAsLong();
    }

    /** This instance's part of the group's limit, 0..1. */
    void share(double share) {
        lock.lock();
        try {
            refill();
            this.share = Math.max(0, Math.min(1, share));
            tokens = Math.min(tokens, capacity());
        } finally {
            lock.unlock();
        }
    }

    double share() {
        lock.lock();
        try {
            return share;
        } finally {
            lock.unlock();
        }
    }

    private double capacity() {
        return share <= 0 ? 0 : Math.max(1, limit.burst() * share);
    }

    private void refill() {
        long now = nanos.getAsLong();
        tokens = Math.min(capacity(), tokens + (now - last) / 1e9 * limit.perSecond() * share);
        last = now;
    }

    /**
     * Takes a token now, or null and how long to wait (nanoseconds) before trying again: {@code [0]} is the
     * wait, valid when false is returned.
     */
    boolean tryTake(long[] wait) {
        lock.lock();
        try {
            refill();
            if (tokens >= 1) {
                tokens -= 1;
                return true;
            }
            double rate = limit.perSecond() * share;
            wait[0] = rate <= 0 ? MAX_NAP_NANOS : Math.min(MAX_NAP_NANOS, (long) Math.ceil((1 - tokens) / rate * 1e9));
            return false;
        } finally {
            lock.unlock();
        }
    }

    /** Waits for a token; false when {@code abandon} holds first (the token is not taken). */
    boolean acquire(BooleanSupplier abandon) throws InterruptedException {
        long[] wait = new long[1];
        while (!tryTake(wait)) {
            if (abandon.getAsBoolean()) {
                return false;
            }
            Thread.sleep(java.time.Duration.ofNanos(Math.max(1_000_000L, wait[0])));
        }
        return true;
    }
}
