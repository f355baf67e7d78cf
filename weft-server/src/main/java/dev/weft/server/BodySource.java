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

    /**
     * A request body streamed over HTTP/2 (a stream of its own): from now on its reader's deadline alone bounds the
     * waits for it, not the server's {@code body_timeout} per run and {@code min_body_rate} (a gRPC client stream
     * may rightly send nothing for minutes). Others ignore it: an HTTP/1.1 body keeps its connection's bounds.
     */
    default void liftTimeBounds() {
    }

    /** What {@link #watched} tells, once, when a body ends. */
    interface End {
        /**
         * @param whole whether {@link #next} came to the end (else it threw, or the body was cancelled first)
         * @param bytes the bytes {@link #next} handed out
         */
        void ended(boolean whole, long bytes);
    }

    /**
     * {@code inner}, telling {@code end} once when it ends (to give back what the body holds, to log it), whichever
     * way it ends, on the thread that ended it; what {@code end} throws is logged. The end is the source's: a run
     * handed out counts, and {@code whole} is told when the source came to its end, before the writer wrote its last
     * frame (a write that fails after it is the connection's).
     */
    static BodySource watched(BodySource inner, End end) {
        return new BodySource() {
            private final java.util.concurrent.atomic.AtomicBoolean over = new java.util.concurrent.atomic.AtomicBoolean();
            private volatile long bytes;

            @Override
            public byte[] next() throws IOException, InterruptedException {
                byte[] run;
                try {
                    run = inner.next();
                } catch (IOException | InterruptedException | RuntimeException e) {
                    ended(false);
                    throw e;
                }
                if (run == null) {
                    ended(true);
                } else {
                    bytes += run.length; // one thread takes the runs
                }
                return run;
            }

            @Override
            public Headers trailers() {
                return inner.trailers();
            }

            @Override
            public void liftTimeBounds() {
                inner.liftTimeBounds();
            }

            @Override
            public void cancel() {
                try {
                    inner.cancel();
                } finally {
                    ended(false);
                }
            }

            private void ended(boolean whole) {
                if (over.compareAndSet(false, true)) {
                    try {
                        end.ended(whole, bytes);
                    } catch (RuntimeException e) { // never the body's failure: its stream or connection goes on
                        System.getLogger("weft.server").log(System.Logger.Level.WARNING,
                                "telling the end of a streamed answer failed", e);
                    }
                }
            }
        };
    }
}
