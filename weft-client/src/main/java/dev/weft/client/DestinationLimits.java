package dev.weft.client;

import java.time.Duration;

/**
 * Limits of one destination.
 *
 * @param maxInFlight    calls in flight at once (the bulkhead), default 10,000: as high as the gateway's
 *                       default max_concurrent, so that a destination answering slowly but correctly is not
 *                       failed with bulkhead-full; overload is shed at the front door (admission) instead
 * @param maxWait        how long a call may wait for a bulkhead permit before it fails with
 *                       {@code bulkhead-full} (never past its deadline), default 100ms
 * @param maxConnections pooled connections, default = maxInFlight (a call never waits for a connection
 *                       when it holds a permit)
 * @param connectTimeout longest TCP connect, default 2s (the deadline may cut it shorter)
 * @param idleTimeout    a pooled connection idle this long is not reused, default 30s
 * @param maxBodyBytes   largest response body read, default 10 MiB; larger fails with {@code too-large}
 */
public record DestinationLimits(int maxInFlight, Duration maxWait, int maxConnections, Duration connectTimeout,
                                Duration idleTimeout, long maxBodyBytes) {

    public static final int DEFAULT_MAX_IN_FLIGHT = 10_000;
    public static final long DEFAULT_MAX_BODY_BYTES = 10L * 1024 * 1024;
    public static final DestinationLimits DEFAULT = new DestinationLimits(DEFAULT_MAX_IN_FLIGHT,
            Duration.ofMillis(100), DEFAULT_MAX_IN_FLIGHT, Duration.ofSeconds(2), Duration.ofSeconds(30),
            DEFAULT_MAX_BODY_BYTES);

    public DestinationLimits {
        if (maxInFlight < 1 || maxInFlight > 100_000) {
            throw new IllegalArgumentException("max_in_flight must be 1..100000, got " + maxInFlight);
        }
        if (maxConnections < 1 || maxConnections > 100_000) {
            throw new IllegalArgumentException("max_connections must be 1..100000, got " + maxConnections);
        }
        if (maxWait.isNegative() || connectTimeout.isNegative() || connectTimeout.isZero()
                || idleTimeout.isNegative()) {
            throw new IllegalArgumentException("timeouts must be positive");
        }
        if (maxBodyBytes < 0 || maxBodyBytes > Integer.MAX_VALUE - 16) {
            throw new IllegalArgumentException("max_body must be 0.." + (Integer.MAX_VALUE - 16) + " bytes");
        }
    }

    /** Sets the bulkhead and, with it, the connection pool to {@code n}. */
    public DestinationLimits withMaxInFlight(int n) {
        return new DestinationLimits(n, maxWait, n, connectTimeout, idleTimeout, maxBodyBytes);
    }

    public DestinationLimits withMaxWait(Duration d) {
        return new DestinationLimits(maxInFlight, d, maxConnections, connectTimeout, idleTimeout, maxBodyBytes);
    }

    public DestinationLimits withMaxConnections(int n) {
        return new DestinationLimits(maxInFlight, maxWait, n, connectTimeout, idleTimeout, maxBodyBytes);
    }

    public DestinationLimits withConnectTimeout(Duration d) {
        return new DestinationLimits(maxInFlight, maxWait, maxConnections, d, idleTimeout, maxBodyBytes);
    }

    public DestinationLimits withMaxBodyBytes(long n) {
        return new DestinationLimits(maxInFlight, maxWait, maxConnections, connectTimeout, idleTimeout, n);
    }
}
