package dev.weft.gateway.plan;

import dev.weft.client.AnswerSink;
import dev.weft.client.CallResult;
import dev.weft.http.Headers;
import dev.weft.server.BodySource;

import java.io.IOException;
import java.util.ArrayDeque;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The pipe of a streamed relay: the backend call's thread puts the answer in as it comes ({@link AnswerSink}), the
 * front door's stream takes it out as the client's windows allow ({@link BodySource}). At most {@link #MAX_HELD}
 * bytes wait in it; past that the call's thread waits, and with it the backend's stream window, so a slow client
 * holds the backend back instead of filling memory. Either side stops the other: the door's cancel fails the next
 * {@link #data} (the backend stream is reset), and a call that fails part way fails the next {@link #next} (the
 * client's stream is reset). See docs/gateway.md, Proxy routes.
 */
public final class RelayStream implements AnswerSink, BodySource {
    /** Bytes that may wait between the backend and the client. */
    static final int MAX_HELD = 256 * 1024;
    /**
     * What each run counts for besides its bytes (an array's header and its place in the queue): a backend that
     * trickles one byte a run fills the pipe with a few thousand runs, not with 256 Ki of them.
     */
    static final int RUN_OVERHEAD = 64;
    /** The most {@link #next} joins of the runs that wait into one (a run the client's write takes at once). */
    static final int MAX_JOINED = 64 * 1024;

    private final dev.weft.core.Deadline deadline;
    private final ReentrantLock lock = new ReentrantLock();
    /**
     * The thread of the backend call: interrupted by a cancel that comes before the answer's head (the client's call
     * handles an interrupt without cutting a write of the shared connection); after the head, {@link #stop} stops it.
     */
    private volatile Thread caller;
    private volatile boolean callDone;
    /** Stops the call once its answer streams (set with the head): no interrupt of a thread that may be writing. */
    private volatile Runnable stop;
    /** The call returned (its result may be null: it threw). */
    private boolean finishedCall;
    private final Condition changed = lock.newCondition();
    private final ArrayDeque<byte[]> runs = new ArrayDeque<>();
    private int held;
    private int status;
    private Headers headers;
    private Headers trailers;
    private boolean ended;
    private boolean cancelled;
    private String failure;
    /** Whether the call failed by its deadline (a gRPC answer then ends with DEADLINE_EXCEEDED). */
    private boolean failedByDeadline;
    /** The call's result when it ended before a head was streamed (then the answer is the usual one). */
    private CallResult unstreamed;

    /**
     * -1: only an answer that says it is a stream goes through; else any answer with a body larger than
     * {@link Relay#HELD_BODY_BYTES} or of no declared length (a download), at most this many bytes of it.
     */
    private final long downloadsUpTo;
    /** Whether the answer streaming is a download (bounded by {@link #downloadsUpTo}); the call's thread only. */
    private boolean download;
    private long downloaded;

    /** @param deadline the route's: the call's thread waits for room in the pipe no longer */
    public RelayStream(dev.weft.core.Deadline deadline) {
        this(deadline, -1);
    }

    /**
     * @param downloadsUpTo -1, or the most a download that streams may hold (a route's {@code max_body} with
     *                      {@code stream_answers: true}): any large answer streams then, not only a stream
     */
    public RelayStream(dev.weft.core.Deadline deadline, long downloadsUpTo) {
        this.deadline = deadline;
        this.downloadsUpTo = downloadsUpTo;
    }

    /** Starts {@code call} on a virtual thread of its own; its result goes to {@link #finished}. */
    public void start(java.util.function.Supplier<CallResult> call) {
        caller = Thread.ofVirtual().name("weft-relay-stream").start(() -> {
            CallResult r = null;
            try {
                r = call.get();
            } catch (RuntimeException | Error e) {
                System.getLogger(RelayStream.class.getName()).log(System.Logger.Level.WARNING,
                        "a streamed relay call failed", e);
            } finally {
                callDone = true;
                finished(r);
            }
        });
    }

    /**
     * Takes the answer as it comes only when the backend says it is a stream (gRPC, server-sent events): a client's
     * {@code Accept} alone does not make a large ordinary answer escape the route's {@code max_body}. On a route with
     * {@code stream_answers: true} a large answer of another type (a download) streams too, within its
     * {@code max_body}.
     */
    @Override
    public boolean head(int status, Headers headers, Runnable stop) {
        if (status == 204 || status == 304) {
            return false; // (a 204 or 304 has no body to stream, RFC 9110 sections 15.3.5 and 15.4.5)
        }
        if (!isStream(headers.first("content-type"))) {
            long declared = Relay.declaredLength(headers);
            if (downloadsUpTo < 0 || declared >= 0 && declared <= Relay.HELD_BODY_BYTES || declared > downloadsUpTo) {
                return false; // held: a small answer keeps its connection, a declared one over the bound is a 502
            }
            download = true;
        }
        lock.lock();
        try {
            if (cancelled) {
                return false;
            }
            this.status = status;
            this.headers = headers;
            this.stop = stop;
            changed.signalAll();
            return true;
        } finally {
            lock.unlock();
        }
    }

    /** {@code application/grpc...} or {@code text/event-stream}: the content types whose answers are streams. */
    public static boolean isStream(String contentType) {
        return Relay.isGrpcType(contentType)
                || contentType != null && contentType.regionMatches(true, 0, "text/event-stream", 0, 17);
    }

    @Override
    public void data(byte[] bytes) throws IOException {
        if (download) {
            downloaded += bytes.length;
            if (downloaded > downloadsUpTo) { // one of no declared length that grew past the route's max_body
                throw new IOException("the answer is over the route's max_body of " + downloadsUpTo + " bytes");
            }
        }
        lock.lock();
        try {
            int cost = bytes.length + RUN_OVERHEAD;
            while (held > 0 && held + cost > MAX_HELD && !cancelled) {
                long left = deadline.remainingNanos();
                if (left <= 0) {
                    throw new IOException("the deadline passed while the client took the answer slowly");
                }
                try {
                    changed.awaitNanos(left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new java.io.InterruptedIOException("interrupted");
                }
            }
            if (cancelled) {
                throw new IOException("the client is gone");
            }
            runs.add(bytes);
            held += cost;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void end(Headers trailers) throws IOException {
        lock.lock();
        try {
            if (cancelled) {
                throw new IOException("the client is gone");
            }
            this.trailers = trailers;
            ended = true;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** The call returned: {@code r} is the answer when no head was streamed, else why the stream stopped, if it did. */
    private void finished(CallResult r) {
        lock.lock();
        try {
            finishedCall = true;
            if (headers == null) {
                unstreamed = r;
            } else if (!ended) {
                failure = r == null ? "the call failed" : r.ok() || r.failure() == null ? "the backend's answer stopped"
                        : r.failure().label() + ": " + r.failure().message();
                failedByDeadline = r != null && r.failure() != null
                        && r.failure().reason() == dev.weft.client.Reason.DEADLINE;
            }
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Waits for the head or the call's end: true when the answer streams ({@link #status}, {@link #headers}), false
     * when {@link #unstreamed} has it (null: the call threw, or gave no result within a second past its deadline).
     */
    public boolean awaitHead() throws InterruptedException {
        lock.lock();
        try {
            while (headers == null && !finishedCall) {
                long left = deadline.remainingNanos() + java.util.concurrent.TimeUnit.SECONDS.toNanos(1);
                if (left <= 0) {
                    break;
                }
                changed.awaitNanos(left);
            }
            if (headers == null && !finishedCall) {
                cancelled = true; // the call's own deadline should have ended it: it is stopped now
            }
            return headers != null;
        } finally {
            lock.unlock();
        }
    }

    public int status() {
        return status;
    }

    public Headers headers() {
        return headers;
    }

    public CallResult unstreamed() {
        return unstreamed;
    }

    @Override
    public byte[] next() throws IOException, InterruptedException {
        lock.lock();
        try {
            while (runs.isEmpty() && !ended && failure == null && !cancelled) {
                changed.await();
            }
            byte[] run = runs.poll();
            if (run != null) {
                held -= run.length + RUN_OVERHEAD;
                run = joined(run);
                changed.signalAll();
                return run;
            }
            if (failure != null && !cancelled && Relay.isGrpc(headers)) {
                // a gRPC client reads its call's end from trailers: a status it can act on, not a reset stream
                trailers = Headers.of("grpc-status", failedByDeadline ? "4" : "14", "grpc-message",
                        grpcMessage((failedByDeadline ? "the gateway's deadline for the route passed while the answer"
                                + " streamed" : "the backend's answer stopped part way") + " (" + failure + ")"));
                ended = true;
                failure = null;
                return null;
            }
            if (failure != null || cancelled) {
                throw new IOException(failure != null ? failure : "cancelled");
            }
            return null;
        } finally {
            lock.unlock();
        }
    }

    /**
     * {@code first} and the runs that wait behind it, joined up to {@link #MAX_JOINED} bytes (the lock held): many small
     * runs from a backend that trickles go to the client in one write, not a write (and an HTTP/1.1 chunk) each.
     */
    private byte[] joined(byte[] first) {
        byte[] next = runs.peek();
        if (next == null || first.length + next.length > MAX_JOINED) {
            return first;
        }
        int n = first.length;
        for (byte[] r : runs) {
            if (n + r.length > MAX_JOINED) {
                break;
            }
            n += r.length;
        }
        byte[] out = java.util.Arrays.copyOf(first, n);
        int at = first.length;
        while (at < n) {
            byte[] r = runs.poll();
            System.arraycopy(r, 0, out, at, r.length);
            at += r.length;
            held -= r.length + RUN_OVERHEAD;
        }
        return out;
    }

    /** {@code grpc-message} as gRPC over HTTP/2 asks: percent-encoded outside printable ASCII and '%'. */
    static String grpcMessage(String text) {
        StringBuilder sb = new StringBuilder(text.length());
        for (byte b : text.getBytes(java.nio.charset.StandardCharsets.UTF_8)) {
            if (b >= 0x20 && b < 0x7f && b != '%') {
                sb.append((char) b);
            } else {
                sb.append('%').append(String.format("%02X", b & 0xff));
            }
        }
        return sb.toString();
    }

    @Override
    public Headers trailers() {
        lock.lock();
        try {
            return trailers == null ? Headers.EMPTY : Relay.endToEnd(trailers);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void cancel() {
        lock.lock();
        try {
            cancelled = true;
            runs.clear();
            held = 0;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
        Runnable s = stop;
        if (s != null) {
            s.run(); // a call waiting for the backend's next bytes ends at once, cancelled; its stream is reset
            return;
        }
        Thread t = caller;
        if (t != null && !callDone) {
            t.interrupt(); // before a head, as for a held answer whose client went away
        }
    }
}
