package dev.weft.client.policy;

import java.time.Duration;

/**
 * When a destination's circuit breaker opens and how it recovers.
 *
 * <p>The breaker counts the outcomes of the calls that finished in the last {@code window} of time (ten
 * buckets of a tenth of it each). It opens when at least {@code minCalls} calls finished in the window and
 * the share of failures among them reaches {@code failureRatio} (Resilience4j's defaults: 100 calls, 50%),
 * or, if {@code consecutiveFailures} is above zero, after that many failures in a row (off by default: a
 * handful of timeouts in a row is what a busy gateway produces, not proof of a sick backend). Open, it fails
 * calls at once with {@code circuit-open} for {@code openFor}; then it is half-open and lets a batch of probe
 * calls through: at least {@code probes}, more when the destination had traffic (a tenth of the calls per
 * second it saw in the window before it opened, at most 1000), so that recovery is judged on a sample that
 * scales with the traffic. When every probe has answered, the breaker closes if the probes' failure share is
 * below {@code failureRatio}, else it opens again.
 *
 * <p>Which outcomes are failures is decided in one place: {@link dev.weft.client.Reason#countsAgainstBackend(int)}.
 *
 * @param enabled             default true
 * @param consecutiveFailures failures in a row that open the breaker; 0 turns the rule off (default 0)
 * @param failureRatio        default 0.5
 * @param window              time window of the failure ratio, default 10s
 * @param minCalls            calls in the window before the ratio is judged, default 100
 * @param openFor             default 5s
 * @param probes              fewest probe calls while half-open, default 1
 */
public record BreakerPolicy(boolean enabled, int consecutiveFailures, double failureRatio, Duration window,
                            int minCalls, Duration openFor, int probes) {
    public static final BreakerPolicy DEFAULT = new BreakerPolicy(true, 0, 0.5, Duration.ofSeconds(10), 100,
            Duration.ofSeconds(5), 1);
    public static final BreakerPolicy DISABLED = new BreakerPolicy(false, 0, 0.5, Duration.ofSeconds(10), 100,
            Duration.ofSeconds(5), 1);
    /** Probe calls while half-open are at most this many. */
    public static final int MAX_PROBES = 1000;

    public BreakerPolicy {
        if (consecutiveFailures < 0) {
            throw new IllegalArgumentException("breaker consecutive_failures must be 0 (off) or more");
        }
        if (!(failureRatio > 0 && failureRatio <= 1)) {
            throw new IllegalArgumentException("breaker failure_ratio must be in (0, 1]");
        }
        if (window.toMillis() < 10 || window.compareTo(Duration.ofHours(1)) > 0) {
            throw new IllegalArgumentException("breaker window must be 10ms..1h");
        }
        if (minCalls < 1 || minCalls > 1_000_000) {
            throw new IllegalArgumentException("breaker min_calls must be 1..1000000");
        }
        if (openFor.isNegative() || openFor.isZero()) {
            throw new IllegalArgumentException("breaker open_for must be positive");
        }
        if (probes < 1 || probes > MAX_PROBES) {
            throw new IllegalArgumentException("breaker probes must be 1.." + MAX_PROBES);
        }
    }

    public BreakerPolicy withConsecutiveFailures(int n) {
        return new BreakerPolicy(enabled, n, failureRatio, window, minCalls, openFor, probes);
    }

    public BreakerPolicy withOpenFor(Duration d) {
        return new BreakerPolicy(enabled, consecutiveFailures, failureRatio, window, minCalls, d, probes);
    }

    public BreakerPolicy withMinCalls(int n) {
        return new BreakerPolicy(enabled, consecutiveFailures, failureRatio, window, n, openFor, probes);
    }

    public BreakerPolicy withWindow(Duration d) {
        return new BreakerPolicy(enabled, consecutiveFailures, failureRatio, d, minCalls, openFor, probes);
    }
}
