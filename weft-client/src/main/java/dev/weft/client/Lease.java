package dev.weft.client;

import java.io.IOException;

/**
 * What the pool hands one exchange: an HTTP/1.1 {@link Connection} of its own, or one {@link Http2Stream} on a
 * shared HTTP/2 connection. Blocking, meant for the exchange's virtual thread; {@link #abort()} may be called
 * from any thread (the deadline sweeper, a hedge's winner) and wakes a blocked read or write.
 */
abstract sealed class Lease permits Connection, Http2Stream {
    /** When the current exchange took it (for the pool's estimate of how long an exchange holds one). */
    long leasedAt;
    /**
     * Whether the connection under it served an exchange before this one (a reused keep-alive connection may
     * have gone stale while it sat in the pool).
     */
    boolean reused;

    /**
     * Reads the answer's head, skipping interim (1xx) answers.
     *
     * @param headRequest whether the request was HEAD (its answer has no body whatever it declares)
     */
    abstract Connection.Head readHead(boolean headRequest) throws IOException;

    /**
     * Reads the body as {@code head} frames it, at most {@code max} bytes.
     *
     * @return the body, or null when it is longer than {@code max} (the lease must then not be reused)
     */
    abstract byte[] readBody(Connection.Head head, long max) throws IOException;

    /** The answer's trailer fields, read with its body (empty when none came, and over HTTP/1.1 unless streamed). */
    dev.weft.http.Headers trailers() {
        return dev.weft.http.Headers.EMPTY;
    }

    /** From now on the exchange takes the body that {@code head} frames as it comes ({@link #takeChunk}). */
    abstract void startStreaming(Connection.Head head);

    /** The exchange holds the answer (its sink did not take it): see {@code Http2Stream.hold}. */
    void hold() {
    }

    /**
     * The next run of the body as it came (at most {@link Http2Stream#MAX_CHUNK} bytes), waiting for it: null at its
     * end, after which {@link #trailers} are the answer's. Throws as {@link #readBody} does.
     */
    abstract byte[] takeChunk() throws IOException;

    /** Stops the exchange from any thread: a blocked read or write fails at once. */
    abstract void abort();

    abstract boolean isClosed();
}
