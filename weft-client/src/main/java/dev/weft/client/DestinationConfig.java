package dev.weft.client;

import dev.weft.client.policy.BreakerPolicy;
import dev.weft.client.policy.HedgePolicy;
import dev.weft.client.policy.RetryPolicy;

/**
 * Everything the engine applies to the calls of one destination.
 *
 * @param hedge null for no hedging (the default)
 */
public record DestinationConfig(DestinationLimits limits, RetryPolicy retry, HedgePolicy hedge,
                                BreakerPolicy breaker) {
    public static final DestinationConfig DEFAULT =
            new DestinationConfig(DestinationLimits.DEFAULT, RetryPolicy.DEFAULT, null, BreakerPolicy.DEFAULT);

    public DestinationConfig {
        java.util.Objects.requireNonNull(limits, "limits");
        java.util.Objects.requireNonNull(retry, "retry");
        java.util.Objects.requireNonNull(breaker, "breaker");
    }

    public DestinationConfig withLimits(DestinationLimits l) {
        return new DestinationConfig(l, retry, hedge, breaker);
    }

    public DestinationConfig withRetry(RetryPolicy r) {
        return new DestinationConfig(limits, r, hedge, breaker);
    }

    public DestinationConfig withHedge(HedgePolicy h) {
        return new DestinationConfig(limits, retry, h, breaker);
    }

    public DestinationConfig withBreaker(BreakerPolicy b) {
        return new DestinationConfig(limits, retry, hedge, b);
    }
}
