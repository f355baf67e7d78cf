package dev.weft.client.policy;

import dev.weft.http.Method;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * When and how a failed call is tried again.
 *
 * <p>Only idempotent methods (GET, HEAD, OPTIONS, PUT, DELETE, TRACE) are retried unless
 * {@link #nonIdempotent()} is set. A retry waits an exponential backoff with jitter: attempt n waits
 * a random time in [d/2, d] where d = min(maxBackoff, backoff * 2^(n-1)). On 429 and 503 a
 * {@code Retry-After} header makes the wait at least that long. No attempt starts when its wait would
 * pass the call's deadline: the call returns its last failure instead.
 *
 * @param attempts      total attempts including the first; 1 disables retries (default 2, at most 10)
 * @param backoff       base backoff (default 50ms)
 * @param maxBackoff    cap of one backoff (default 2s)
 * @param retryStatuses statuses worth another attempt (default 429, 502, 503, 504)
 * @param nonIdempotent also retry POST and PATCH (default false)
 */
public record RetryPolicy(int attempts, Duration backoff, Duration maxBackoff, Set<Integer> retryStatuses,
                          boolean nonIdempotent) {

    public static final int MAX_ATTEMPTS = 10;
    public static final RetryPolicy DEFAULT = new RetryPolicy(2, Duration.ofMillis(50), Duration.ofSeconds(2),
            Set.of(429, 502, 503, 504), false);
    public static final RetryPolicy NONE = DEFAULT.withAttempts(1);

    public RetryPolicy {
        if (attempts < 1 || attempts > MAX_ATTEMPTS) {
            throw new IllegalArgumentException("retry attempts must be 1.." + MAX_ATTEMPTS + ", got " + attempts);
        }
        if (backoff.isNegative() || maxBackoff.isNegative()) {
            throw new IllegalArgumentException("retry backoff must not be negative");
        }
        retryStatuses = Set.copyOf(retryStatuses);
    }

    public RetryPolicy withAttempts(int n) {
        return new RetryPolicy(n, backoff, maxBackoff, retryStatuses, nonIdempotent);
    }

    public RetryPolicy withBackoff(Duration base, Duration max) {
        return new RetryPolicy(attempts, base, max, retryStatuses, nonIdempotent);
    }

    public RetryPolicy withNonIdempotent(boolean allowed) {
        return new RetryPolicy(attempts, backoff, maxBackoff, retryStatuses, allowed);
    }

    /** Whether a request with this method may be sent more than once. */
    public boolean allows(String method) {
        return nonIdempotent || isIdempotent(method);
    }

    /** Whether the method may be sent more than once by its definition ({@link Method#isIdempotent(String)}). */
    public static boolean isIdempotent(String method) {
        return Method.isIdempotent(method);
    }

    /** The jittered wait before attempt {@code attempt} (2 for the first retry). */
    public Duration backoffBefore(int attempt) {
        long base = backoff.toNanos();
        long cap = maxBackoff.toNanos();
        int shift = Math.min(30, Math.max(0, attempt - 2));
        long d = base > (cap >> shift) ? cap : Math.min(cap, base << shift);
        if (d <= 1) {
            return Duration.ofNanos(Math.max(0, d));
        }
        long half = d / 2;
        return Duration.ofNanos(half + ThreadLocalRandom.current().nextLong(d - half + 1));
    }
}
