package dev.weft.client;

import dev.weft.http.Headers;
import dev.weft.core.Deadline;
import dev.weft.http.Http1Writer;
import dev.weft.client.policy.RetryPolicy;

import java.io.IOException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.UnknownHostException;
import java.util.List;
import java.util.Map;

/**
 * One attempt on the calling (virtual) thread, under a deadline: an HTTP/1.1 exchange on a connection of its own,
 * or one HTTP/2 stream on a shared connection ({@link Http2Stream}).
 *
 * <p>The deadline is enforced by the {@link Watchdog}, which aborts the exchange once it has passed (within a
 * few milliseconds); reads themselves are untimed. Aborting closes the socket, which wakes a read blocked
 * anywhere (waiting for headers, or between the bytes of a body that drips), so no virtual thread outlives its
 * deadline. An aborted connection is never reused.
 *
 * <p>Waiting for a connection (every one leased, or one being opened) is the caller's own queueing, not the
 * destination's time: while the attempt waits, only the request's deadline ({@link Interceptor.Call#outer})
 * bounds it, and once it has a connection its own deadline is moved by the wait ({@link #waitStarts}). So a
 * {@code call_timeout} of 1 s gives the destination 1 s even after the call waited 600 ms in a cold pool.
 */
final class Exchange {
    private static final int PHASE_CONNECTING = 0;
    private static final int PHASE_SENT = 1;
    private static final int PHASE_BODY = 2;

    private final CallRequest call;
    private volatile int phase = PHASE_CONNECTING;
    private volatile boolean timedOut;
    private volatile boolean cancelled;
    private volatile ConnectionPool.Waiter waiter;
    private volatile Lease connection;
    private long startNanos;
    private volatile long deadlineNanos;
    private long connectedNanos = -1;
    private long headersNanos = -1;
    private Destination destination;
    private Interceptor.Call owner;
    private Watchdog watchdog;
    /** The attempt's own budget left when its current wait for a connection began; -1 while not waiting. */
    private long ownLeftNanos = -1;
    /** When that wait began. */
    private long waitStartNanos;

    Exchange(CallRequest call) {
        this.call = call;
    }

    /** The pool tells the exchange that it waits for a connection (null: no longer), so that an abort wakes it. */
    void waiting(ConnectionPool.Waiter w) {
        waiter = w;
        if (w != null && stopped()) {
            w.cancel();
        }
    }

    /** Whether the deadline or a cancel has stopped this attempt. */
    boolean stopped() {
        return timedOut || cancelled;
    }

    /** Cancels this attempt from any thread (the loser of a hedge). */
    void cancel() {
        cancelled = true;
        abort();
    }

    /** The deadline of the running attempt, as a {@link System#nanoTime()} value. */
    long deadlineNanos() {
        return deadlineNanos;
    }

    /**
     * Whether this call may not go once more on a new connection when the pooled one it took turns out to be closed
     * by the backend (not idempotent, or its body is streamed): the pool then makes sure of a connection idle for long
     * before it hands it over ({@link Connection#hasUnaskedBytes}).
     */
    boolean cannotResendOnStale() {
        return !RetryPolicy.isIdempotent(call.method()) || call.tag(RequestStream.class) != null;
    }

    /** Called by the {@link Watchdog} once the deadline has passed. */
    void deadlineReached() {
        timedOut = true;
        abort();
    }

    private void abort() {
        Lease c = connection;
        if (c != null) {
            c.abort();
        }
        ConnectionPool.Waiter w = waiter;
        if (w != null) {
            w.cancel();
        }
    }

    /** The attempt's result: its timings are from its own start ({@code totalNanos} is how long it ran). */
    CallResult run(Interceptor.Call owner) {
        this.owner = owner;
        DestinationRuntime dest = owner.destination;
        Deadline deadline = owner.deadline;
        destination = dest.destination();
        startNanos = System.nanoTime();
        long remaining = deadline.remainingNanos();
        if (remaining <= 0) {
            return failure(Reason.DEADLINE, "the deadline passed before the call started");
        }
        if (cancelled) {
            return failure(Reason.CANCELLED, "cancelled before it started");
        }
        byte[] head;
        try {
            head = requestHead(dest);
        } catch (IllegalArgumentException e) {
            return failure(Reason.PROTOCOL, "request not sent: " + e.getMessage());
        }
        DestinationLimits limits = dest.config().limits();
        deadlineNanos = deadline.nanoTime();
        watchdog = dest.watchdog();
        watchdog.watch(this);
        ConnectionPool pool = dest.pool();
        Lease c = null;
        boolean reusable = false;
        try {
            boolean headRequest = call.method().equals("HEAD");
            RequestStream requestStream = call.tag(RequestStream.class);
            AnswerSink sink = call.tag(AnswerSink.class);
            Connection.Head answer;
            boolean fresh = false;
            boolean again = false;
            while (true) {
                c = lease(pool, fresh);
                try {
                    if (c instanceof Http2Stream s && sink != null && !headRequest) {
                        s.mayStream(); // what comes before the sink decides is not held against max_body
                    }
                    if (c instanceof Http2Stream s && requestStream != null) {
                        s.sendHead(http2Request(dest), headRequest, limits.maxBodyBytes());
                        pump = pump(s, requestStream);
                    } else if (c instanceof Http2Stream s) {
                        s.send(http2Request(dest), call.body(), headRequest, limits.maxBodyBytes());
                    } else if (requestStream != null) {
                        Connection conn = (Connection) c;
                        long length = requestStream.length();
                        conn.send(Http1Writer.requestHead(call.method(), target(), dest.hostHeader(), call.headers(),
                                dest.userAgent(), length >= 0 ? length : Http1Writer.CHUNKED_BODY), null);
                        pump = pump(conn, requestStream, length);
                    } else {
                        ((Connection) c).send(head, call.body());
                    }
                    answer = c.readHead(headRequest);
                    break;
                } catch (Http2Stream.NotProcessedException e) {
                    // Refused by the server (REFUSED_STREAM, GOAWAY) before it processed it: any request may go
                    // once more, on another connection (RFC 9113 section 8.7); not one whose body was streamed
                    if (again || timedOut || cancelled || requestStream != null) {
                        throw e;
                    }
                    pool.release(c, false);
                    c = null;
                    connection = null;
                    again = true;
                } catch (Connection.ClosedException e) {
                    // A keep-alive connection the peer closed while it sat in the pool: nothing reached the
                    // application, so an idempotent request goes once more, on a new connection.
                    if (!c.reused || !e.nothingReceived || fresh || timedOut || cancelled || requestStream != null
                            || !RetryPolicy.isIdempotent(call.method())) {
                        throw e;
                    }
                    pool.release(c, false);
                    c = null;
                    connection = null;
                    fresh = true;
                }
            }
            headersNanos = System.nanoTime() - startNanos;
            phase = PHASE_BODY;
            int status = answer.status();
            Headers headers = answer.headers();
            if (sink != null && !headRequest && (c instanceof Http2Stream st ? !st.ended() : answer.contentLength() != 0)
                    && sink.head(status, headers, this::cancel)) {
                // a streamed answer is not held: max_body, which bounds what is held, is the sink's to apply. An
                // HTTP/1.1 connection is not reused after it: a stream's length would skew the pool's estimate of how
                // long an exchange holds a connection (docs/gateway.md, Proxy routes)
                return stream(c, answer, sink, status, headers);
            }
            c.hold(); // held after all: max_body bounds it, counting what came while the sink decided
            if (answer.contentLength() > limits.maxBodyBytes()) {
                return answer(status, headers, CallResult.NO_BODY, new CallFailure(Reason.TOO_LARGE, status, "body of "
                        + answer.contentLength() + " bytes is over the limit of " + limits.maxBodyBytes()));
            }
            byte[] body = answer.contentLength() == 0 ? CallResult.NO_BODY : c.readBody(answer, limits.maxBodyBytes());
            if (body == null) {
                return answer(status, headers, CallResult.NO_BODY, new CallFailure(Reason.TOO_LARGE, status,
                        "body is over the limit of " + limits.maxBodyBytes() + " bytes"));
            }
            answerRead = true;
            // a streamed body not wholly sent yet (the server answered first) leaves the connection mid-request
            reusable = answer.keepAlive() && (requestStream == null || requestSent);
            return answer(status, headers, body, status >= 400 ? CallFailure.status(status) : null, c.trailers());
        } catch (IOException | RuntimeException e) {
            return classify(e);
        } finally {
            if (pump != null) {
                if (c instanceof Http2Stream st && !st.requestEnded) {
                    // stopped before its body's end: the pump must send nothing more, END_STREAM least of all (a
                    // partial upload would read as whole), and leave any wait for window at once
                    st.abort();
                }
                call.tag(RequestStream.class).cancel(); // the pump's wait for the next run ends; its sends fail
            }
            watchdog.unwatch(this);
            // Forgotten before it is given back: a cancel that comes later (a hedge's winner is cancelled with the
            // losers) must not abort the connection under the call that takes it next. One that came before has
            // closed it, and the pool does not reuse it.
            connection = null;
            if (c != null) {
                pool.release(c, reusable && !timedOut && !cancelled);
            }
        }
    }

    /** The thread that sends a streamed request body, or null. */
    private Thread pump;

    /**
     * Sends {@code body}'s runs on {@code s} from a virtual thread of its own while this one reads the answer; a run
     * that cannot be read or sent stops the call.
     */
    private Thread pump(Http2Stream s, RequestStream body) {
        return Thread.ofVirtual().name("weft-request-pump").start(() -> {
            try {
                byte[] run;
                while ((run = body.next()) != null) {
                    s.sendRun(run, false);
                }
                s.sendRun(CallResult.NO_BODY, true);
            } catch (IOException | InterruptedException | RuntimeException e) {
                // an answer that ended first stands: the server did not need the rest; a deadline that stopped the
                // upload is the call's end, not a cancel (which would answer the client 499, as if it had left)
                if (!s.ended() && !timedOut) {
                    cancel();
                }
                body.cancel();
            }
        });
    }

    /** Whether an HTTP/1.1 pump sent the whole body (its last byte or last chunk written). */
    private volatile boolean requestSent;
    /** Whether the answer was read whole (HTTP/1.1): a pump that fails after it does not stop the call. */
    private volatile boolean answerRead;

    /**
     * Sends {@code body}'s runs on {@code conn} from a virtual thread of its own while this one reads the answer:
     * {@code length} bytes exactly when it is known (a body that gives more or fewer stops the call, and nothing past
     * the length is written: the next bytes on the connection would be read as another request), else chunked, the
     * last chunk only after the body's end. A run that cannot be read, or a length that does not match, stops the
     * call unless its answer was read already; a run the backend does not take stops the pump only ({@link #written}).
     * Either way the connection is not reused ({@link #requestSent} stays false).
     */
    private Thread pump(Connection conn, RequestStream body, long length) {
        return Thread.ofVirtual().name("weft-request-pump").start(() -> {
            try {
                long sent = 0;
                byte[] run;
                while ((run = body.next()) != null) {
                    if (run.length == 0) {
                        continue;
                    }
                    if (length >= 0 && sent + run.length > length) {
                        throw new IOException("the request body is longer than its length of " + length + " bytes");
                    }
                    if (!written(conn, length >= 0 ? run : Http1Writer.chunk(run), body)) {
                        return;
                    }
                    sent += run.length;
                }
                if (length >= 0 && sent != length) {
                    throw new IOException("the request body ended after " + sent + " of its " + length + " bytes");
                }
                if (length < 0 && !written(conn, Http1Writer.lastChunk(Headers.EMPTY), body)) {
                    return;
                }
                requestSent = true;
            } catch (IOException | InterruptedException | RuntimeException e) {
                // an answer read whole stands: the server did not need the rest; a deadline is the call's end
                if (!answerRead && !timedOut) {
                    cancel(); // closes the connection: a part of the body never reads as the whole
                }
                body.cancel();
            }
        });
    }

    /**
     * Writes to the backend; false when it cannot take it (it answered and closed, or reset): the pump stops and gives
     * up the body, but the call goes on, for the answer may be in already (a 401 or 413 before the body's end) and the
     * reading thread gets it, or the connection's end. The connection is not reused ({@link #requestSent} stays false).
     */
    private static boolean written(Connection conn, byte[] bytes, RequestStream body) {
        try {
            conn.write(bytes);
            return true;
        } catch (IOException e) {
            body.cancel();
            return false;
        }
    }

    /**
     * The body to {@code sink} as it comes, then the trailers; the sink's refusal stops the call ({@code cancelled}),
     * and the stream is reset as it is released.
     */
    private CallResult stream(Lease st, Connection.Head head, AnswerSink sink, int status, Headers headers) {
        st.startStreaming(head);
        byte[] chunk;
        while (true) {
            try {
                chunk = st.takeChunk();
            } catch (IOException e) {
                CallResult stopped = stopped(true);
                return stopped != null ? stopped : classify(e); // the server reset the stream, the connection was lost
            }
            // Bytes read after the deadline or a stop are not passed on: the JDK's close of a socket a virtual thread
            // reads lets a read that races it return what came meanwhile (a server that answers the close at once)
            CallResult stopped = stopped(false);
            if (stopped != null) {
                return stopped;
            }
            if (chunk == null) {
                break;
            }
            try {
                sink.data(chunk);
            } catch (IOException e) {
                return failure(Reason.CANCELLED, "the answer's taker stopped it: " + e.getMessage());
            }
        }
        Headers trailers = st.trailers();
        try {
            sink.end(trailers);
        } catch (IOException e) {
            return failure(Reason.CANCELLED, "the answer's taker stopped it: " + e.getMessage());
        }
        return answer(status, headers, CallResult.NO_BODY, status >= 400 ? CallFailure.status(status) : null,
                trailers);
    }

    /**
     * Why a streamed answer stopped, when its deadline or a stop did, else null. Once the answer streams, either is the
     * caller's doing, not the backend's failure: neither counts against the breaker (a watch stream outliving its
     * deadline must not open it).
     *
     * @param interrupted whether an interrupt of this thread counts as a stop (after a read that failed)
     */
    private CallResult stopped(boolean interrupted) {
        if (cancelled || interrupted && Thread.currentThread().isInterrupted()) {
            return failure(Reason.CANCELLED, "the streamed answer was stopped");
        }
        if (timedOut) {
            return failure(Reason.DEADLINE, "the deadline passed while the answer streamed");
        }
        return null;
    }

    private Lease lease(ConnectionPool pool, boolean fresh) throws IOException {
        phase = PHASE_CONNECTING;
        Lease c = pool.lease(this, fresh);
        if (ownLeftNanos >= 0) { // it waited: its own budget runs again from now, within the request's deadline
            long outer = owner.outer.nanoTime();
            long until = System.nanoTime() + ownLeftNanos;
            long d = until - outer < 0 ? until : outer;
            if (d != deadlineNanos) { // filed under the request's deadline while it waited
                rewatch(d);
            }
            owner.waitedUntil(d);
            ownLeftNanos = -1;
        }
        connection = c;
        if (timedOut || cancelled) {
            c.abort(); // aborted while it connected; the caller's read fails at once
        }
        if (connectedNanos < 0) {
            connectedNanos = System.nanoTime() - startNanos;
        }
        phase = PHASE_SENT;
        return c;
    }

    /**
     * The pool is about to wait for a connection for this attempt (for a lease or a connect): its own deadline
     * stops running, and the wait may take until the request's deadline. Returns the nanoseconds the wait may
     * take (0 when the attempt's own budget is already spent).
     */
    long waitStarts() {
        long now = System.nanoTime();
        if (ownLeftNanos < 0) {
            waitStartNanos = now;
            ownLeftNanos = Math.max(0, deadlineNanos - now);
            long outer = owner.outer.nanoTime();
            if (ownLeftNanos > 0 && outer - deadlineNanos > 0) {
                rewatch(outer);
            }
        }
        return ownLeftNanos == 0 ? 0 : Math.max(0, deadlineNanos - now);
    }

    /**
     * Where the attempt's own budget would have ended had the wait not stopped it (a {@link System#nanoTime()}
     * value; call after {@link #waitStarts}).
     */
    long ownBudgetEndsNanos() {
        return waitStartNanos + ownLeftNanos;
    }

    /** Files this attempt with the watchdog under a new deadline (the wheel needs a fixed one while filed). */
    private void rewatch(long nanoTime) {
        watchdog.unwatch(this);
        deadlineNanos = nanoTime;
        watchdog.watch(this);
    }

    /** The request line and headers, in one array; every field checked by the codec. */
    private byte[] requestHead(DestinationRuntime dest) {
        byte[] body = call.body();
        return Http1Writer.requestHead(call.method(), target(), dest.hostHeader(), call.headers(),
                dest.userAgent(), body == null ? -1 : body.length);
    }

    /** The request-target in origin-form: the URI's raw path ({@code /} when empty) and query. */
    private String target() {
        URI uri = call.uri();
        String path = uri.getRawPath();
        String query = uri.getRawQuery();
        return (path == null || path.isEmpty() ? "/" : path) + (query == null ? "" : "?" + query);
    }

    /**
     * The request as HTTP/2 fields: the pseudo-headers from the URI and the destination, the caller's headers in
     * lower case without those HTTP/2 forbids (connection-specific ones, but {@code te: trailers}; host is
     * :authority). {@link #requestHead}
     * has checked every name and value already.
     */
    private org.eclipse.jetty.http.MetaData.Request http2Request(DestinationRuntime dest) {
        String target = target();
        org.eclipse.jetty.http.HttpFields.Mutable fields = org.eclipse.jetty.http.HttpFields.build(
                call.headers().fields().size() + 2);
        boolean userAgent = false;
        for (Map.Entry<String, String> h : call.headers().fields()) {
            if (Http1Writer.isConnectionField(h.getKey())) {
                // TE: trailers is the one value HTTP/2 allows (RFC 9113 section 8.2.2); gRPC servers look for it
                if (h.getKey().length() == 2 && "trailers".equalsIgnoreCase(h.getValue().strip())) {
                    fields.add("te", "trailers");
                }
                continue;
            }
            String lower = h.getKey().toLowerCase(java.util.Locale.ROOT);
            userAgent |= lower.equals("user-agent");
            fields.add(lower, h.getValue());
        }
        if (!userAgent) {
            fields.add("user-agent", dest.userAgent());
        }
        byte[] body = call.body();
        if (body != null && body.length > 0) {
            fields.add("content-length", Integer.toString(body.length));
        }
        org.eclipse.jetty.http.HttpURI u = org.eclipse.jetty.http.HttpURI.build().scheme(destination.scheme())
                .authority(dest.hostHeader()).pathQuery(target).asImmutable();
        return new org.eclipse.jetty.http.MetaData.Request(call.method(), u, org.eclipse.jetty.http.HttpVersion.HTTP_2,
                fields);
    }

    private CallResult answer(int status, Headers headers, byte[] body, CallFailure failure) {
        return answer(status, headers, body, failure, Headers.EMPTY);
    }

    private CallResult answer(int status, Headers headers, byte[] body, CallFailure failure, Headers trailers) {
        return new CallResult(destination, status, headers, body, failure,
                new CallResult.Timings(System.nanoTime() - startNanos, 0, connectedNanos, headersNanos), List.of(),
                trailers);
    }

    private CallResult failure(Reason reason, String message) {
        return answer(0, Headers.EMPTY, CallResult.NO_BODY, CallFailure.of(reason, message));
    }

    private CallResult classify(Exception e) {
        if (cancelled) {
            return failure(Reason.CANCELLED, "cancelled");
        }
        if (timedOut) {
            if (phase == PHASE_CONNECTING) { // waiting for the pool: the gateway's own wait, not the backend's
                return failure(Reason.CONNECT_WAIT, "deadline reached while waiting for a connection to "
                        + destination.key() + " (" + e.getMessage() + ")");
            }
            return failure(timeoutForPhase(), "deadline reached " + phaseName());
        }
        if (Thread.currentThread().isInterrupted()) {
            // the caller stopped the call (a dispatch lane that stops, say): an interrupt closes a virtual thread's
            // socket, which would read as a reset, or fails the wait for a lease as an I/O error; neither is the
            // backend's doing, so neither counts against its breaker
            return failure(Reason.CANCELLED, "interrupted " + phaseName());
        }
        Reason reason;
        String message = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        if (e instanceof ConnectionPool.ConnectWaitException) {
            reason = Reason.CONNECT_WAIT;
        } else if (e instanceof Http2Stream.HeadersTooLargeException) {
            reason = Reason.TOO_LARGE;
        } else if (e instanceof DescriptorShortage.NoDescriptorsException) {
            reason = Reason.NO_DESCRIPTORS;
        } else if (e instanceof javax.net.ssl.SSLHandshakeException) {
            reason = Reason.TLS;
        } else if (e instanceof SocketTimeoutException) {
            reason = timeoutForPhase();
        } else if (e instanceof ConnectException || e instanceof NoRouteToHostException) {
            reason = Reason.REFUSED;
        } else if (e instanceof UnknownHostException) {
            reason = Reason.UNKNOWN_HOST;
        } else if (e instanceof Connection.ClosedException || e instanceof SocketException) {
            reason = Reason.RESET;
        } else if (e instanceof Connection.ProtocolException || e instanceof javax.net.ssl.SSLException) {
            reason = Reason.PROTOCOL;
        } else if (e instanceof IOException) {
            reason = Reason.IO;
        } else {
            reason = Reason.IO;
            message = e.toString();
        }
        return failure(reason, message);
    }

    private Reason timeoutForPhase() {
        return switch (phase) {
            case PHASE_CONNECTING -> Reason.TIMEOUT_CONNECT;
            case PHASE_SENT -> Reason.TIMEOUT_HEADERS;
            default -> Reason.TIMEOUT_BODY;
        };
    }

    private String phaseName() {
        return switch (phase) {
            case PHASE_CONNECTING -> "while connecting";
            case PHASE_SENT -> "while waiting for headers";
            default -> "while reading the body";
        };
    }
}
