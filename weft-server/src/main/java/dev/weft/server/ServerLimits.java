package dev.weft.server;

import java.time.Duration;

/**
 * Limits of an inbound server.
 *
 * @param maxConcurrent  requests handled at once; past it a request waits up to {@code maxWait}, then
 *                       gets 503 with Retry-After (default 10,000)
 * @param maxWait        default 100ms
 * @param maxHeadBytes   request line plus headers, else 431 (default 16 KiB)
 * @param maxBodyBytes   request body, else 413 (default 1 MiB)
 * @param idleTimeout    an idle keep-alive connection is closed after this (default 60s)
 * @param maxConnections connections held at once; more are closed at accept (default 16,000)
 * @param drainTimeout   on shutdown, how long in-flight requests may finish (default 10s)
 * @param headerTimeout  a request head must be complete this long after its first byte arrived, else the
 *                       connection is closed (default 10s; a head trickled byte by byte holds a connection and
 *                       a virtual thread no longer than this)
 * @param bodyTimeout    a request body must be complete this long after its head, else the connection is closed
 *                       (default 30s: a body that stops half-way holds a connection and a virtual thread no longer
 *                       than this; the body's buffer grows only as its bytes arrive). An answer the peer takes no
 *                       more of for {@code idleTimeout} closes the connection too.
 */
public record ServerLimits(int maxConcurrent, Duration maxWait, int maxHeadBytes, long maxBodyBytes,
                           Duration idleTimeout, int maxConnections, Duration drainTimeout, Duration headerTimeout,
                           Duration bodyTimeout) {
    public static final Duration DEFAULT_HEADER_TIMEOUT = Duration.ofSeconds(10);
    public static final Duration DEFAULT_BODY_TIMEOUT = Duration.ofSeconds(30);
    public static final ServerLimits DEFAULT = new ServerLimits(10_000, Duration.ofMillis(100), 16 * 1024,
            1024 * 1024, Duration.ofSeconds(60), 16_000, Duration.ofSeconds(10), DEFAULT_HEADER_TIMEOUT,
            DEFAULT_BODY_TIMEOUT);

    public ServerLimits {
        if (maxConcurrent < 1 || maxHeadBytes < 256 || maxBodyBytes < 0 || maxConnections < 1) {
            throw new IllegalArgumentException("server limits must be positive (max_head_bytes at least 256)");
        }
        if (headerTimeout.isZero() || headerTimeout.isNegative()) {
            throw new IllegalArgumentException("header_timeout must be above zero");
        }
        if (bodyTimeout.isZero() || bodyTimeout.isNegative()) {
            throw new IllegalArgumentException("body_timeout must be above zero");
        }
    }

    /**
     * The limits with the default body timeout.
     *
     * @deprecated positional: use {@link #builder()}; kept so that code written against it still compiles
     */
    @Deprecated(forRemoval = true)
    public ServerLimits(int maxConcurrent, Duration maxWait, int maxHeadBytes, long maxBodyBytes, Duration idleTimeout,
                        int maxConnections, Duration drainTimeout, Duration headerTimeout) {
        this(maxConcurrent, maxWait, maxHeadBytes, maxBodyBytes, idleTimeout, maxConnections, drainTimeout,
                headerTimeout, DEFAULT_BODY_TIMEOUT);
    }

    /**
     * The limits with the default header timeout.
     *
     * @deprecated positional: use {@link #builder()}; kept so that code written against it still compiles
     */
    @Deprecated(forRemoval = true)
    public ServerLimits(int maxConcurrent, Duration maxWait, int maxHeadBytes, long maxBodyBytes, Duration idleTimeout,
                        int maxConnections, Duration drainTimeout) {
        this(maxConcurrent, maxWait, maxHeadBytes, maxBodyBytes, idleTimeout, maxConnections, drainTimeout,
                DEFAULT_HEADER_TIMEOUT, DEFAULT_BODY_TIMEOUT);
    }

    /** A builder that starts from {@link #DEFAULT}: set the limits that differ, by name. */
    public static Builder builder() {
        return DEFAULT.toBuilder();
    }

    /** A builder that starts from these limits. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.maxConcurrent = maxConcurrent;
        b.maxWait = maxWait;
        b.maxHeadBytes = maxHeadBytes;
        b.maxBodyBytes = maxBodyBytes;
        b.idleTimeout = idleTimeout;
        b.maxConnections = maxConnections;
        b.drainTimeout = drainTimeout;
        b.headerTimeout = headerTimeout;
        b.bodyTimeout = bodyTimeout;
        return b;
    }

    /** Server limits by name; {@link #build()} checks them as the record does. */
    public static final class Builder {
        private int maxConcurrent;
        private Duration maxWait;
        private int maxHeadBytes;
        private long maxBodyBytes;
        private Duration idleTimeout;
        private int maxConnections;
        private Duration drainTimeout;
        private Duration headerTimeout;
        private Duration bodyTimeout;

        private Builder() {
        }

        public Builder maxConcurrent(int n) {
            this.maxConcurrent = n;
            return this;
        }

        public Builder maxWait(Duration d) {
            this.maxWait = d;
            return this;
        }

        public Builder maxHeadBytes(int n) {
            this.maxHeadBytes = n;
            return this;
        }

        public Builder maxBodyBytes(long n) {
            this.maxBodyBytes = n;
            return this;
        }

        public Builder idleTimeout(Duration d) {
            this.idleTimeout = d;
            return this;
        }

        public Builder maxConnections(int n) {
            this.maxConnections = n;
            return this;
        }

        public Builder drainTimeout(Duration d) {
            this.drainTimeout = d;
            return this;
        }

        public Builder headerTimeout(Duration d) {
            this.headerTimeout = d;
            return this;
        }

        public Builder bodyTimeout(Duration d) {
            this.bodyTimeout = d;
            return this;
        }

        /** @throws IllegalArgumentException naming the limit that is out of its range */
        public ServerLimits build() {
            return new ServerLimits(maxConcurrent, maxWait, maxHeadBytes, maxBodyBytes, idleTimeout, maxConnections,
                    drainTimeout, headerTimeout, bodyTimeout);
        }
    }

    public ServerLimits withMaxConcurrent(int n) {
        return new ServerLimits(n, maxWait, maxHeadBytes, maxBodyBytes, idleTimeout, maxConnections, drainTimeout,
                headerTimeout, bodyTimeout);
    }

    public ServerLimits withMaxWait(Duration d) {
        return new ServerLimits(maxConcurrent, d, maxHeadBytes, maxBodyBytes, idleTimeout, maxConnections,
                drainTimeout, headerTimeout, bodyTimeout);
    }

    public ServerLimits withMaxConnections(int n) {
        return new ServerLimits(maxConcurrent, maxWait, maxHeadBytes, maxBodyBytes, idleTimeout, n, drainTimeout,
                headerTimeout, bodyTimeout);
    }

    public ServerLimits withMaxBodyBytes(long n) {
        return new ServerLimits(maxConcurrent, maxWait, maxHeadBytes, n, idleTimeout, maxConnections, drainTimeout,
                headerTimeout, bodyTimeout);
    }

    public ServerLimits withHeaderTimeout(Duration d) {
        return new ServerLimits(maxConcurrent, maxWait, maxHeadBytes, maxBodyBytes, idleTimeout, maxConnections,
                drainTimeout, d, bodyTimeout);
    }

    public ServerLimits withBodyTimeout(Duration d) {
        return new ServerLimits(maxConcurrent, maxWait, maxHeadBytes, maxBodyBytes, idleTimeout, maxConnections,
                drainTimeout, headerTimeout, d);
    }
}
