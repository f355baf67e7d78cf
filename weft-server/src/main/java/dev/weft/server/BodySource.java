package dev.weft.server;

import dev.weft.http.Headers;

import java.io.IOException;

/**
 * An answer's body that is written as it comes ({@link ServerResponse#stream()}): over HTTP/2 each run goes out in
 * DATA frames as soon as the client's windows allow, and the trailers after the last; over HTTP/1.1 each run is a
 * chunk, flushed as it comes, the trailers in the last chunk when the client's {@code TE} lists them, and the
 * connection closes after it. To an HTTP/1.0 client or a HEAD the server reads it whole first (bounded) and writes it
 * with Content-Length, without the trailers.
 */
public interface BodySource {
    /**
     * The next run of the body, waiting for it: null at the end. Throwing means the answer failed part way: over
     * HTTP/2 the stream is reset (INTERNAL_ERROR), over HTTP/1.1 the connection is closed without the last chunk.
     */
    byte[] next() throws IOException, InterruptedException;

    /** After {@link #next} returned null: the trailers (empty when none). */
    Headers trailers();

    /** Nobody will read the rest (the client reset its stream or went away, a write failed): stop making it. */
    void cancel();
}
