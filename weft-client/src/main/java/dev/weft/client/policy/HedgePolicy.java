package dev.weft.client.policy;

import java.time.Duration;

/**
 * Hedged requests: when the first copy has not answered after {@code delay}, send another; the first
 * answer wins, the others are cancelled and their connections closed (never reused). Only idempotent
 * methods are hedged unless {@code nonIdempotent}.
 *
 * @param delay         how long the first copy runs alone
 * @param copies        total copies, 2 or 3 (default 2)
 * @param nonIdempotent also hedge POST and PATCH (default false)
 */
public record HedgePolicy(Duration delay, int copies, boolean nonIdempotent) {
    public static final int MAX_COPIES = 3;

    public HedgePolicy {
        if (delay.isNegative()) {
            throw new IllegalArgumentException("hedge delay must not be negative");
        }
        if (copies < 2 || copies > MAX_COPIES) {
            throw new IllegalArgumentException("hedge copies must be 2.." + MAX_COPIES + ", got " + copies);
        }
    }

    public static HedgePolicy after(Duration delay) {
        return new HedgePolicy(delay, 2, false);
    }

    public boolean allows(String method) {
        return nonIdempotent || RetryPolicy.isIdempotent(method);
    }
}
