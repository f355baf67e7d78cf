package dev.weft.lab;

import dev.weft.client.DestinationConfig;
import dev.weft.client.DestinationLimits;
import dev.weft.client.Transport;
import dev.weft.client.policy.BreakerPolicy;
import dev.weft.client.policy.RetryPolicy;

import java.time.Duration;

/** The transport every lab uses to generate load: sized to the load, no retries, no breaker. */
public final class LoadClient {
    private LoadClient() {
    }

    /**
     * A transport with room for {@code concurrency} calls in flight per destination. Retries and the
     * circuit breaker are off: a load generator reports what happened, it does not smooth it over.
     */
    public static Transport transport(int concurrency) {
        return Transport.builder().defaults(DestinationConfig.DEFAULT
                .withLimits(DestinationLimits.DEFAULT.withMaxInFlight(concurrency).withMaxWait(Duration.ofSeconds(5)))
                .withRetry(RetryPolicy.NONE).withBreaker(BreakerPolicy.DISABLED)).build();
    }
}
