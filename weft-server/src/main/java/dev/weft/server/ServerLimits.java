package dev.weft.server;

import java.time.Duration;

/**
 * Limits of an inbound server, built by name: {@code ServerLimits.builder().maxConnections(300).build()} (what is not
 * set keeps its default below, those of {@link #DEFAULT}), {@link #toBuilder()} or a {@code withX} of one limit.
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
 *                       than this; the body's buffer grows only as its bytes arrive; a body handed over as it comes:
 *                       each run, and over HTTP/2 a 408 for its stream, not a closed connection). An answer the peer
 *                       takes no more of for {@code idleTimeout} closes the connection too.
 * @param minBodyRate    bytes a second: a body handed over as it comes (a streamed upload, whose each run must come
 *                       within {@code bodyTimeout}) that has waited for its client longer than {@code bodyTimeout} in
 *                       all must have come at least this fast over that time, else it fails (408; over HTTP/1.1 the
 *                       connection closes, over HTTP/2 the stream ends): a client that trickles a byte within each
 *                       body_timeout holds its place about twice that at most (default 1,024; 0: no such bound; an
 *                       HTTP/2 body whose reader lifts it, {@link BodySource#liftTimeBounds}, has neither bound)
 */
public record ServerLimits(int maxConcurrent, Duration maxWait, int maxHeadBytes, long maxBodyBytes,
                           Duration idleTimeout, int maxConnections, Duration drainTimeout, Duration headerTimeout,
                           Duration bodyTimeout, long minBodyRate) {
    public static final Duration DEFAULT_HEADER_TIMEOUT = Duration.ofSeconds(10);
    public static final Duration DEFAULT_BODY_TIMEOUT = Duration.ofSeconds(30);
    public static final long DEFAULT_MIN_BODY_RATE = 1024;
    public static final ServerLimits DEFAULT = new ServerLimits(10_000, Duration.ofMillis(100), 16 * 1024,
            1024 * 1024, Duration.ofSeconds(60), 16_000, Duration.ofSeconds(10), DEFAULT_HEADER_TIMEOUT,
            DEFAULT_BODY_TIMEOUT, DEFAULT_MIN_BODY_RATE);

    public ServerLimits {
        java.util.Objects.requireNonNull(maxWait, "maxWait");
        java.util.Objects.requireNonNull(idleTimeout, "idleTimeout");
        java.util.Objects.requireNonNull(drainTimeout, "drainTimeout");
        java.util.Objects.requireNonNull(headerTimeout, "headerTimeout");
        java.util.Objects.requireNonNull(bodyTimeout, "bodyTimeout");
        if (maxConcurrent < 1 || maxHeadBytes < 256 || maxBodyBytes < 0 || maxConnections < 1) {
            throw new IllegalArgumentException("server limits must be positive (max_head_bytes at least 256)");
        }
        if (headerTimeout.isZero() || headerTimeout.isNegative()) {
            throw new IllegalArgumentException("header_timeout must be above zero");
        }
        if (bodyTimeout.isZero() || bodyTimeout.isNegative()) {
            throw new IllegalArgumentException("body_timeout must be above zero");
        }
        if (minBodyRate < 0) {
            throw new IllegalArgumentException("min_body_rate must be 0 or more bytes a second");
        }
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
        b.minBodyRate = minBodyRate;
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
        private long minBodyRate;

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

        public Builder minBodyRate(long bytesPerSecond) {
            this.minBodyRate = bytesPerSecond;
            return this;
        }

        /** @throws IllegalArgumentException naming the limit that is out of its range */
        public ServerLimits build() {
            return new ServerLimits(maxConcurrent, maxWait, maxHeadBytes, maxBodyBytes, idleTimeout, maxConnections,
                    drainTimeout, headerTimeout, bodyTimeout, minBodyRate);
        }
    }

    /** These limits with {@code maxConcurrent} = {@code n}. */
    public ServerLimits withMaxConcurrent(int n) {
        return toBuilder().maxConcurrent(n).build();
    }

    /** These limits with {@code maxWait} = {@code d}. */
    public ServerLimits withMaxWait(Duration d) {
        return toBuilder().maxWait(d).build();
    }

    /** These limits with {@code maxConnections} = {@code n}. */
    public ServerLimits withMaxConnections(int n) {
        return toBuilder().maxConnections(n).build();
    }

    /** These limits with {@code maxBodyBytes} = {@code n}. */
    public ServerLimits withMaxBodyBytes(long n) {
        return toBuilder().maxBodyBytes(n).build();
    }

    /** These limits with {@code headerTimeout} = {@code d}. */
    public ServerLimits withHeaderTimeout(Duration d) {
        return toBuilder().headerTimeout(d).build();
    }

    /** These limits with {@code bodyTimeout} = {@code d}. */
    public ServerLimits withBodyTimeout(Duration d) {
        return toBuilder().bodyTimeout(d).build();
    }
}
