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
 * @param connectTimeout longest TCP connect plus TLS handshake, default 2s; a connect runs for the pool,
 *                       so a caller's deadline never cuts it short (the caller stops waiting instead)
 * @param idleTimeout    a pooled connection idle this long is not reused, default 30s
 * @param maxBodyBytes   largest response body read, default 10 MiB; larger fails with {@code too-large}
 * @param maxConnecting  connections being opened (TCP connect and TLS handshake) at once; other calls
 *                       wait, within their deadline, for one of them or for a pooled connection to come
 *                       back instead of each starting its own connect. 0 (the default) means by scheme:
 *                       4 for https (a handshake costs both sides CPU), 1024 for http (a connect costs a
 *                       round trip; with 64 a cold start of 2,000 clients waited out their budget
 *                       behind it: docs/design/pool.md); see {@link #maxConnectingFor}
 * @param minIdle        connections opened in the background at start and kept open while idle
 *                       (a warm pool), default 0; at most maxConnections
 * @param maxStreams     exchanges at once on one HTTP/2 connection (an https destination whose server chose
 *                       h2), default 100; the server's SETTINGS_MAX_CONCURRENT_STREAMS may lower it. More
 *                       calls than that wait for a place, or for another connection (max_connecting,
 *                       max_connections)
 */
public record DestinationLimits(int maxInFlight, Duration maxWait, int maxConnections, Duration connectTimeout,
                                Duration idleTimeout, long maxBodyBytes, int maxConnecting, int minIdle,
                                int maxStreams) {

    public static final int DEFAULT_MAX_IN_FLIGHT = 10_000;
    public static final long DEFAULT_MAX_BODY_BYTES = 10L * 1024 * 1024;
    /** max_connecting by scheme: {@link #DEFAULT_MAX_CONNECTING_HTTPS} or {@link #DEFAULT_MAX_CONNECTING_HTTP}. */
    public static final int DEFAULT_MAX_CONNECTING = 0;
    public static final int DEFAULT_MAX_CONNECTING_HTTPS = 4;
    public static final int DEFAULT_MAX_CONNECTING_HTTP = 1024;
    public static final int MAX_MAX_CONNECTING = 10_000;
    public static final int DEFAULT_MAX_STREAMS = Http2Connection.DEFAULT_MAX_STREAMS;
    public static final int MAX_MAX_STREAMS = 10_000;
    public static final DestinationLimits DEFAULT = new DestinationLimits(DEFAULT_MAX_IN_FLIGHT,
            Duration.ofMillis(100), DEFAULT_MAX_IN_FLIGHT, Duration.ofSeconds(2), Duration.ofSeconds(30),
            DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_CONNECTING, 0, DEFAULT_MAX_STREAMS);

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
        if (maxConnecting < 0 || maxConnecting > MAX_MAX_CONNECTING) {
            throw new IllegalArgumentException("max_connecting must be 1.." + MAX_MAX_CONNECTING + ", got "
                    + maxConnecting);
        }
        if (maxStreams < 1 || maxStreams > MAX_MAX_STREAMS) {
            throw new IllegalArgumentException("max_streams must be 1.." + MAX_MAX_STREAMS + ", got " + maxStreams);
        }
        if (minIdle < 0 || minIdle > maxConnections) {
            throw new IllegalArgumentException("min_idle must be 0..max_connections (" + maxConnections + "), got "
                    + minIdle);
        }
    }

    /** The limits before max_connecting and min_idle (their defaults: by scheme, and 0). */
    public DestinationLimits(int maxInFlight, Duration maxWait, int maxConnections, Duration connectTimeout,
                             Duration idleTimeout, long maxBodyBytes) {
        this(maxInFlight, maxWait, maxConnections, connectTimeout, idleTimeout, maxBodyBytes,
                DEFAULT_MAX_CONNECTING, 0, DEFAULT_MAX_STREAMS);
    }

    /** Sets the bulkhead and, with it, the connection pool to {@code n}. */
    public DestinationLimits withMaxInFlight(int n) {
        return new DestinationLimits(n, maxWait, n, connectTimeout, idleTimeout, maxBodyBytes, maxConnecting,
                Math.min(minIdle, n), maxStreams);
    }

    public DestinationLimits withMaxWait(Duration d) {
        return new DestinationLimits(maxInFlight, d, maxConnections, connectTimeout, idleTimeout, maxBodyBytes,
                maxConnecting, minIdle, maxStreams);
    }

    public DestinationLimits withMaxConnections(int n) {
        return new DestinationLimits(maxInFlight, maxWait, n, connectTimeout, idleTimeout, maxBodyBytes,
                maxConnecting, Math.min(minIdle, n), maxStreams);
    }

    public DestinationLimits withConnectTimeout(Duration d) {
        return new DestinationLimits(maxInFlight, maxWait, maxConnections, d, idleTimeout, maxBodyBytes,
                maxConnecting, minIdle, maxStreams);
    }

    public DestinationLimits withMaxBodyBytes(long n) {
        return new DestinationLimits(maxInFlight, maxWait, maxConnections, connectTimeout, idleTimeout, n,
                maxConnecting, minIdle, maxStreams);
    }

    /** The bound on connects in progress for a destination of {@code scheme}: the set one, or the scheme's default. */
    public int maxConnectingFor(String scheme) {
        if (maxConnecting > 0) {
            return maxConnecting;
        }
        return scheme.equals("https") ? DEFAULT_MAX_CONNECTING_HTTPS : DEFAULT_MAX_CONNECTING_HTTP;
    }

    public DestinationLimits withMaxConnecting(int n) {
        return new DestinationLimits(maxInFlight, maxWait, maxConnections, connectTimeout, idleTimeout, maxBodyBytes,
                n, minIdle, maxStreams);
    }

    public DestinationLimits withMaxStreams(int n) {
        return new DestinationLimits(maxInFlight, maxWait, maxConnections, connectTimeout, idleTimeout, maxBodyBytes,
                maxConnecting, minIdle, n);
    }

    public DestinationLimits withIdleTimeout(Duration d) {
        return new DestinationLimits(maxInFlight, maxWait, maxConnections, connectTimeout, d, maxBodyBytes,
                maxConnecting, minIdle, maxStreams);
    }

    public DestinationLimits withMinIdle(int n) {
        return new DestinationLimits(maxInFlight, maxWait, maxConnections, connectTimeout, idleTimeout, maxBodyBytes,
                maxConnecting, n, maxStreams);
    }
}
