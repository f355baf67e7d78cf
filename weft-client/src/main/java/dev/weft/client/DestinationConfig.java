package dev.weft.client;

import dev.weft.client.policy.BreakerPolicy;
import dev.weft.client.policy.HedgePolicy;
import dev.weft.client.policy.RetryPolicy;

/**
 * Everything the engine applies to the calls of one destination.
 *
 * @param hedge null for no hedging (the default)
 * @param tls   how an https destination's certificate is checked ({@link TlsOptions#DEFAULT}: the JDK's roots)
 */
public record DestinationConfig(DestinationLimits limits, RetryPolicy retry, HedgePolicy hedge,
                                BreakerPolicy breaker, TlsOptions tls) {
    public static final DestinationConfig DEFAULT = new DestinationConfig(DestinationLimits.DEFAULT,
            RetryPolicy.DEFAULT, null, BreakerPolicy.DEFAULT, TlsOptions.DEFAULT);

    public DestinationConfig {
        java.util.Objects.requireNonNull(limits, "limits");
        java.util.Objects.requireNonNull(retry, "retry");
        java.util.Objects.requireNonNull(breaker, "breaker");
        java.util.Objects.requireNonNull(tls, "tls");
    }

    /** A config with the default TLS checks. */
    public DestinationConfig(DestinationLimits limits, RetryPolicy retry, HedgePolicy hedge, BreakerPolicy breaker) {
        this(limits, retry, hedge, breaker, TlsOptions.DEFAULT);
    }

    public DestinationConfig withLimits(DestinationLimits l) {
        return new DestinationConfig(l, retry, hedge, breaker, tls);
    }

    public DestinationConfig withRetry(RetryPolicy r) {
        return new DestinationConfig(limits, r, hedge, breaker, tls);
    }

    public DestinationConfig withHedge(HedgePolicy h) {
        return new DestinationConfig(limits, retry, h, breaker, tls);
    }

    public DestinationConfig withBreaker(BreakerPolicy b) {
        return new DestinationConfig(limits, retry, hedge, b, tls);
    }

    public DestinationConfig withTls(TlsOptions t) {
        return new DestinationConfig(limits, retry, hedge, breaker, t);
    }
}
