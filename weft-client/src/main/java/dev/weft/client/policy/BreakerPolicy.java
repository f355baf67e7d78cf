package dev.weft.client.policy;

import java.time.Duration;

/**
 * When a destination's circuit breaker opens and how it recovers.
 *
 * <p>The breaker opens after {@code consecutiveFailures} failures in a row, or when at least
 * {@code minCalls} of the last {@code window} calls are known and the share of failures among them
 * reaches {@code failureRatio}. Open, it fails calls at once with {@code circuit-open} for
 * {@code openFor}; then it lets {@code probes} calls through (half-open). A successful probe closes
 * it; a failed one opens it again.
 *
 * <p>A failure is a transport failure (timeout, refused, reset, protocol error) or a 5xx status.
 * 4xx answers, cancelled hedges and local rejections do not count.
 *
 * @param enabled             default true
 * @param consecutiveFailures default 5
 * @param failureRatio        default 0.5
 * @param window              default 20 calls (at most 1000)
 * @param minCalls            default 10
 * @param openFor             default 5s
 * @param probes              calls let through while half-open, default 1
 */
public record BreakerPolicy(boolean enabled, int consecutiveFailures, double failureRatio, int window, int minCalls,
                            Duration openFor, int probes) {
    public static final BreakerPolicy DEFAULT = new BreakerPolicy(true, 5, 0.5, 20, 10, Duration.ofSeconds(5), 1);
    public static final BreakerPolicy DISABLED = new BreakerPolicy(false, 5, 0.5, 20, 10, Duration.ofSeconds(5), 1);

    public BreakerPolicy {
        if (consecutiveFailures < 1) {
            throw new IllegalArgumentException("breaker consecutive_failures must be at least 1");
        }
        if (!(failureRatio > 0 && failureRatio <= 1)) {
            throw new IllegalArgumentException("breaker failure_ratio must be in (0, 1]");
        }
        if (window < 1 || window > 1000) {
            throw new IllegalArgumentException("breaker window must be 1..1000");
        }
        if (minCalls < 1 || minCalls > window) {
            throw new IllegalArgumentException("breaker min_calls must be 1..window");
        }
        if (openFor.isNegative() || openFor.isZero()) {
            throw new IllegalArgumentException("breaker open_for must be positive");
        }
        if (probes < 1) {
            throw new IllegalArgumentException("breaker probes must be at least 1");
        }
    }

    public BreakerPolicy withConsecutiveFailures(int n) {
        return new BreakerPolicy(enabled, n, failureRatio, window, minCalls, openFor, probes);
    }

    public BreakerPolicy withOpenFor(Duration d) {
        return new BreakerPolicy(enabled, consecutiveFailures, failureRatio, window, minCalls, d, probes);
    }
}
