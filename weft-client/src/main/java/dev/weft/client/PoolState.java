package dev.weft.client;

/**
 * A snapshot of one destination's connection pool, read without locks (each figure is current when read, the
 * set is not one instant): what an operator's probe or a test waits on instead of sleeping.
 *
 * @param waiting              calls waiting for a connection
 * @param waitingForLease      calls waiting for a lease of {@code max_connections}
 * @param leased               leases of {@code max_connections} held (HTTP/1.1 exchanges, and calls waiting with one)
 * @param http2StreamsStarted  HTTP/2 streams whose HEADERS were sent (or are being sent) and that have not ended
 * @param longestHttp2WriteNanos how long the longest write in progress on an HTTP/2 connection has been blocked;
 *                             0 when none is
 * @param idle                 HTTP/1.1 connections idle in the pool (counted one by one: for probes, not hot paths)
 */
public record PoolState(int waiting, int waitingForLease, int leased, int http2StreamsStarted,
                        long longestHttp2WriteNanos, int idle) {
    /** The state of a destination no call went to yet. */
    public static final PoolState EMPTY = new PoolState(0, 0, 0, 0, 0, 0);
}
