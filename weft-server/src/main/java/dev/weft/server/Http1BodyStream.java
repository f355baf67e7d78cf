package dev.weft.server;

import dev.weft.http.Framing;
import dev.weft.http.Headers;
import dev.weft.http.Http1;
import dev.weft.http.HttpCodecException;

import java.io.EOFException;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * An HTTP/1.1 request's body handed to the handler as it comes ({@link ServerRequest#bodyStream()}), read from the
 * connection's own reader by whichever thread asks (a relay's pump). Each run must come within the server's
 * {@code body_timeout} (the connection is closed otherwise, as for a held body that stops half-way); once the body has
 * waited for its client longer than {@code body_timeout} in all it must have come at least {@code min_body_rate}
 * (else {@link #next} throws a 408 {@link HttpCodecException}); it may hold at most {@code max_body_bytes} in all
 * (else a 413; malformed chunked framing a 400). The connection's thread keeps the socket once the handler answered:
 * {@link #settle} (docs/gateway.md, Proxy routes).
 */
final class Http1BodyStream implements BodySource {
    private final Http1.BodyRuns runs;
    private final ConnectionListener.Activity activity;
    private final Duration bodyTimeout;
    private final long max;
    /** Held while a run is read: the connection's thread takes it to read the socket itself ({@link #settle}). */
    private final ReentrantLock reading = new ReentrantLock();
    /**
     * Guards the hand-over of the connection's deadlines and writes: the reader's ({@link #timed}, {@link #interim})
     * against the connection thread's taking them ({@link #cancel}, {@link #untime}).
     */
    private final ReentrantLock handOver = new ReentrantLock();
    /** Counted down when the body ended, failed or was cancelled: nothing more will be read for it. */
    private final CountDownLatch settled = new CountDownLatch(1);
    private volatile boolean ended;
    private volatile boolean cancelled;
    /** Nanoseconds spent waiting for the client's runs, and the floor on its rate once that is over body_timeout. */
    private long waitedNanos;
    private long minRate;
    /** Set once the connection's thread writes a streamed answer: its write deadline is not to be touched. */
    private boolean untimed;
    /** Written before the first read ({@code 100 Continue} to a client that waits for it), or null. */
    private byte[] beforeFirstRead;
    private java.io.OutputStream out;
    /** How long the client may take no more of {@link #beforeFirstRead} (the server's idle timeout). */
    private Duration writeTimeout;
    /** Bytes handed out so far. */
    private long bytes;

    /**
     * @param max the most the body may hold ({@code max_body_bytes}); a declared length over it is refused before
     *            (the caller's 413)
     */
    Http1BodyStream(Http1.BodyRuns runs, ConnectionListener.Activity activity, Duration bodyTimeout, long max) {
        this.runs = runs;
        this.activity = activity;
        this.bodyTimeout = bodyTimeout;
        this.max = max;
    }

    /**
     * A stream over {@code reader}'s next body, framed as {@code framing} says, in runs of at most 16 KiB.
     *
     * @param interim written to {@code out} before the body is first read (a {@code 100 Continue}), or null
     */
    static Http1BodyStream of(Http1Reader reader, Framing framing, ConnectionListener.Activity activity,
                              Duration bodyTimeout, long max, byte[] interim, java.io.OutputStream out,
                              Duration writeTimeout, long minRate) {
        Http1BodyStream s = new Http1BodyStream(reader.bodyRuns(framing, 16 * 1024), activity, bodyTimeout, max);
        s.minRate = minRate;
        s.beforeFirstRead = interim;
        s.out = out;
        s.writeTimeout = writeTimeout;
        return s;
    }

    /**
     * Writes the interim answer the client waits for before it sends its body, once, when the handler first asks for
     * the body; under {@link #handOver}, so never once the connection's thread writes an answer ({@link #cancel},
     * {@link #untime} wait for it).
     */
    private void interim() throws IOException {
        handOver.lock();
        try {
            byte[] b = beforeFirstRead;
            if (b == null || cancelled || untimed) {
                return;
            }
            beforeFirstRead = null;
            activity.writing(writeTimeout); // a client that takes nothing has its connection closed: the write fails
            out.write(b);
            out.flush();
        } finally {
            handOver.unlock();
        }
    }

    @Override
    public byte[] next() throws IOException, InterruptedException {
        reading.lockInterruptibly();
        try {
            if (ended) {
                return null;
            }
            if (cancelled) {
                throw new IOException("the request body is no longer read: its answer was given");
            }
            interim();
            timed(true);
            byte[] run;
            long t0 = System.nanoTime();
            try {
                run = runs.next();
            } catch (HttpCodecException e) {
                settled.countDown();
                throw e;
            } catch (EOFException e) {
                settled.countDown();
                throw new EOFException("the client closed the connection before the request body's end");
            } catch (IOException e) {
                settled.countDown();
                throw e;
            } finally {
                timed(false);
                waitedNanos += System.nanoTime() - t0;
            }
            if (run == null) {
                ended = true;
                settled.countDown();
                return null;
            }
            bytes += run.length;
            if (bytes > max) {
                settled.countDown();
                throw new HttpCodecException.BodyTooLarge("a chunked body over the limit of " + max + " bytes");
            }
            if (minRate > 0 && waitedNanos > bodyTimeout.toNanos()
                    && bytes < minRate * (double) waitedNanos / 1e9) {
                settled.countDown();
                throw new HttpCodecException(408, "the request body came at " + Math.round(bytes / (waitedNanos / 1e9))
                        + " bytes a second over " + waitedNanos / 1_000_000 + " ms of waiting for it, under the"
                        + " server's min_body_rate of " + minRate);
            }
            return run;
        } finally {
            reading.unlock();
        }
    }

    /**
     * While a run is awaited the connection's body deadline runs ({@code body_timeout}); between runs the time is
     * the handler's (its pump waits for the backend to take the last one). Not once the answer is given or streams
     * ({@link #cancel}, {@link #untime}): the connection's thread owns its deadlines then.
     */
    private void timed(boolean waiting) {
        handOver.lock();
        try {
            if (cancelled || untimed) {
                return;
            }
            if (waiting) {
                activity.body(bodyTimeout);
            } else {
                activity.busy();
            }
        } finally {
            handOver.unlock();
        }
    }

    /**
     * The connection's thread writes a streamed answer from now on, with write deadlines of its own that the body's
     * reads must not clear (one deadline a connection): the rest of the body is bounded by the handler's deadline
     * (a route's timeout), no longer by body_timeout.
     */
    void untime() {
        handOver.lock();
        try {
            untimed = true;
        } finally {
            handOver.unlock();
        }
    }

    /** Chunked trailers of a request are read and dropped (a held body's are too). */
    @Override
    public Headers trailers() {
        return Headers.EMPTY;
    }

    @Override
    public void cancel() {
        handOver.lock();
        try {
            cancelled = true;
        } finally {
            handOver.unlock();
        }
        settled.countDown();
    }

    /** Whether the whole body was read: only then may the connection carry another request. */
    boolean ended() {
        return ended;
    }

    /** Waits until the body ended, failed or was cancelled (a streamed answer's watch of the socket waits for it). */
    void awaitSettled() throws InterruptedException {
        settled.await();
    }

    /**
     * Once the handler has answered: the body is read no more ({@link #cancel}), and the caller gets the socket to
     * itself, waiting at most {@code waitMillis} for a run being read (the client sends more or closes, or the body
     * deadline closes the connection). Returns whether it has the socket (call {@link #release} after); false leaves a
     * read in progress that the caller's close of the socket will end.
     */
    boolean settle(long waitMillis) throws InterruptedException {
        cancel();
        return reading.tryLock(waitMillis, TimeUnit.MILLISECONDS);
    }

    /** After {@link #settle} returned true. */
    void release() {
        reading.unlock();
    }
}
