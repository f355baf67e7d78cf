package dev.weft.core.call;

import dev.weft.core.policy.BreakerPolicy;
import dev.weft.core.policy.HedgePolicy;
import dev.weft.core.policy.RetryPolicy;

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
