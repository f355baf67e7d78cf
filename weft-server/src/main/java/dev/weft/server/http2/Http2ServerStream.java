package dev.weft.server.http2;

import dev.weft.http.HttpCodecException;
import dev.weft.http.h2.Http2Error;
import dev.weft.http.h2.Http2Exception;
import dev.weft.http.h2.Http2FrameWriter;
import dev.weft.server.ServerRequest;
import dev.weft.server.BodySource;
import dev.weft.server.ServerResponse;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpVersion;
import org.eclipse.jetty.http.MetaData;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One request on an HTTP/2 connection, on a virtual thread of its own: takes the body as the connection's thread
 * hands it DATA (at most a window of it waits here; each byte taken is given back to the peer's window), runs the
 * handler (admission included), and writes the answer through the connection's locked writer within the peer's
 * windows. A reset (by the peer, or the connection's end) interrupts the thread, except while it writes to the
 * socket: interrupting a virtual thread in socket I/O would close the whole connection.
 */
final class Http2ServerStream {
    /** Fields HTTP/2 forbids (RFC 9113 section 8.2.2); a handler's are dropped from its answer. */
    private static final Set<String> CONNECTION_SPECIFIC = Set.of("connection", "keep-alive", "proxy-connection",
            "transfer-encoding", "upgrade", "content-length");

    /** A body's first buffer; it doubles as bytes come, as on the HTTP/1.1 path. */
    private static final int INITIAL_BODY_BUFFER = 16 * 1024;
    /** The body of a request that has none (shared: a zero-length array cannot be changed). */
    private static final byte[] NO_BODY = new byte[0];

    final Http2ServerConnection c;
    final int id;
    final Http2Request request;
    private final InetSocketAddress remote;
    private final long startedNanos = System.nanoTime();
    /** Body bytes the peer may still send on this stream (the connection's thread spends, this thread credits). */
    final AtomicInteger receiveWindow;
    /** Credits taken and not yet given back by a WINDOW_UPDATE. */
    final AtomicInteger credit = new AtomicInteger();
    /** Guarded by the connection's write lock. */
    long sendWindow;
    /** END_STREAM (or trailers) came: written by the connection's thread. */
    volatile boolean remoteClosed;
    /** Its HEADERS ended the request: there is no body to stream (set before it runs). */
    boolean noBody;
    /** DATA on it is dropped (its window given back at once): reset, or answered before its body ended. */
    volatile boolean discard;
    /** Whether it still counts under {@code max_concurrent_streams} ({@link Http2ServerConnection#releasePlace}). */
    final java.util.concurrent.atomic.AtomicBoolean placeHeld = new java.util.concurrent.atomic.AtomicBoolean(true);
    /** The peer reset it (the connection's thread writes it). */
    volatile boolean resetByPeer;
    /** The body, read before the stream began (the request that upgraded an HTTP/1.1 connection), or null. */
    byte[] preloaded;
    /** Body bytes received so far (the connection's thread only). */
    long received;

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition arrived = lock.newCondition();
    private byte[] buffer = new byte[0];
    private int buffered;
    private boolean ended;

    private Thread thread;
    private volatile boolean cancelled;
    /** The thread is in its last steps: never interrupted again (under {@link #lock}). */
    private boolean done;
    /** Body bytes taken from the buffer but not given back to the connection's window (a reset came between). */
    private int untaken;
    /** While true the thread is in socket I/O and is not interrupted ({@link #cancel}); under {@link #lock}. */
    private boolean writing;

    Http2ServerStream(Http2ServerConnection c, int id, Http2Request request, InetSocketAddress remote, int window) {
        this.c = c;
        this.id = id;
        this.request = request;
        this.remote = remote;
        this.receiveWindow = new AtomicInteger(window);
    }

    void start() {
        Thread t = Thread.ofVirtual().name("weft-h2-stream-" + id).unstarted(this::run);
        lock.lock();
        try {
            thread = t;
        } finally {
            lock.unlock();
        }
        c.metrics().onStreamThread(1);
        try {
            t.start();
        } catch (RuntimeException | Error e) {
            c.metrics().onStreamThread(-1);
            throw e;
        }
    }

    /** The streamed answer being written, if any: a reset cancels it even while this stream's thread writes. */
    private volatile BodySource streamingSource;

    /** Reset or connection gone: the handler is interrupted (unless in socket I/O), its answer dropped. */
    void cancel() {
        cancelled = true;
        BodySource source = streamingSource;
        if (source != null) {
            source.cancel(); // its next() ends at once: the thread does not wait for the backend's next bytes
        }
        lock.lock();
        try {
            arrived.signalAll();
            if (thread != null && !writing && !done) {
                thread.interrupt();
            }
        } finally {
            lock.unlock();
        }
        c.writeLock.lock();
        try {
            c.windowOpened.signalAll();
        } finally {
            c.writeLock.unlock();
        }
    }

    /** From the connection's thread: body bytes (a copy is kept), and whether the request ended. */
    void offer(byte[] data, int off, int n, boolean end) {
        lock.lock();
        try {
            if (done) { // the thread has given back what it held already: nobody takes these bytes
                lock.unlock();
                try {
                    c.credit(null, n);
                } finally {
                    lock.lock();
                }
                return;
            }
            if (n > 0) {
                if (buffered + n > buffer.length) {
                    buffer = java.util.Arrays.copyOf(buffer, Math.max(buffered + n, Math.min(2 * buffer.length + n,
                            c.limits().initialWindowSize())));
                }
                System.arraycopy(data, off, buffer, buffered, n);
                buffered += n;
            }
            if (end) {
                ended = true;
            }
            arrived.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** At the request's end: the body has the length its content-length announced. */
    void checkLengthAtEnd() throws Http2Exception {
        if (request.contentLength() >= 0 && received != request.contentLength()) {
            throw Http2Exception.stream(id, Http2Error.PROTOCOL_ERROR, "DATA of " + received
                    + " bytes against content-length " + request.contentLength());
        }
    }

    private void run() {
        try {
            boolean streamed = preloaded == null && !noBody && c.requests().streamsBody(request.head());
            if (!streamed && request.contentLength() > c.maxBodyBytes()) {
                answerEarly(413, "request body over " + c.maxBodyBytes() + " bytes");
                return;
            }
            byte[] body = streamed ? NO_BODY : readBody();
            if (body == null) {
                return;
            }
            ServerResponse response = c.requests().handle(new ServerRequest(request.head(), body, remote, startedNanos,
                    true, streamed ? new BodyStream() : null));
            if (cancelled) {
                if (response != null && response.stream() != null) {
                    response.stream().cancel();
                }
                return;
            }
            answer(response);
            if (streamed) {
                endStreamedRequest();
            }
        } catch (InterruptedException e) {
            // reset, or the connection ended
        } catch (IOException | RuntimeException e) {
            if (!cancelled && !c.closed()) {
                Http2ServerConnection.log("HTTP/2 stream " + id + " failed", e);
                c.closeQuietly();
            }
        } finally {
            int leftover;
            lock.lock();
            try {
                done = true;
                leftover = buffered + untaken;
                buffered = 0;
                untaken = 0;
            } finally {
                lock.unlock();
            }
            Thread.interrupted(); // a reset's interrupt must not close the socket under the writes below
            try {
                c.credit(null, leftover); // body bytes nobody will take: the connection's window gets them back
                c.streamEnded(this);
            } finally {
                c.metrics().onStreamThread(-1);
            }
        }
    }

    /**
     * After a streamed request's answer ended: a client still sending a body nobody will read is told to stop
     * (RST_STREAM NO_ERROR, RFC 9113 section 8.1), and its bytes are dropped.
     */
    private void endStreamedRequest() {
        if (!remoteClosed && !cancelled) {
            discard = true;
            c.endedEarly(id);
            io(() -> c.resetFromStream(id, Http2Error.NO_ERROR));
        }
    }

    /**
     * A streamed request's body as it comes ({@link ServerRequest#bodyStream()}): each run taken from the stream's
     * buffer and given back to the client's windows. As on HTTP/1.1 ({@code Http1BodyStream}): each run must come
     * within the server's {@code body_timeout}, and once the reader has waited for the client longer than that in all,
     * the body must have averaged {@code min_body_rate}; else {@link #next} throws a 408 {@link HttpCodecException}
     * (the handler's answer, and the stream, end; the connection's other streams go on). Time when the connection's
     * window holds the client back (other streams' bodies not taken yet) is not counted against it, up to one
     * body_timeout in all. The reader's deadline (a relay's route timeout) bounds the whole, and its cancel ends it.
     * Read by a thread that is not this stream's (a relay's pump): it writes nothing but WINDOW_UPDATEs, through the
     * connection, and never resets the stream.
     */
    private final class BodyStream implements BodySource {
        /** The reader gave up (cancel): the next read fails, never reads as the body's end. */
        private volatile boolean dropped;
        /** The body's end was handed out: every later read is the end too. */
        private volatile boolean endDelivered;
        /** Nanoseconds its reader waited for the client's bytes (an empty buffer), and the bytes handed out. */
        private long waitedNanos;
        private long bytes;
        /** Waits not counted: the connection's window held the client back (at most one body_timeout in all). */
        private long excusedNanos;
        /** {@link #liftTimeBounds}: only the reader's deadline (its interrupt or cancel) ends a wait. */
        private volatile boolean timeless;

        @Override
        public byte[] next() throws IOException, InterruptedException {
            if (endDelivered) {
                return null;
            }
            byte[] run;
            boolean end;
            long timeout = c.bodyTimeout().toNanos();
            long t0 = System.nanoTime();
            long blocked0 = c.blockedNanos();
            // time the connection's window held the client back is not its own, up to one body_timeout per body: a
            // client cannot hold its own connection's window down to buy more than that
            long excusable = Math.max(0, timeout - excusedNanos);
            lock.lock();
            try {
                while (buffered == 0 && !ended && !cancelled && !discard && !dropped) {
                    if (timeless) {
                        arrived.await();
                        continue;
                    }
                    long excused = Math.min(c.blockedNanos() - blocked0, excusable);
                    long left = t0 + timeout + excused - System.nanoTime();
                    if (left <= 0) {
                        break;
                    }
                    arrived.awaitNanos(left);
                }
                if (cancelled || discard || dropped) {
                    throw new IOException(dropped ? "the body was dropped" : "the client reset the stream");
                }
                if (buffered == 0 && !ended) { // no byte for body_timeout
                    run = null;
                    end = false;
                } else {
                    run = java.util.Arrays.copyOf(buffer, buffered);
                    buffered = 0;
                    end = ended;
                }
            } finally {
                lock.unlock();
                long elapsed = System.nanoTime() - t0;
                long excused = timeless ? 0 : Math.min(Math.min(c.blockedNanos() - blocked0, excusable), elapsed);
                excusedNanos += excused;
                waitedNanos += elapsed - excused;
            }
            if (run == null) {
                throw slow("no byte of the request body came for " + c.bodyTimeout().toMillis()
                        + " ms (the server's body_timeout)");
            }
            if (run.length > 0) {
                // the connection's window always comes back; the stream's only while it lives (no WINDOW_UPDATE
                // for a stream reset meanwhile)
                c.credit(cancelled || discard ? null : Http2ServerStream.this, run.length);
            }
            if (end) {
                endDelivered = true;
                return run.length > 0 ? run : null;
            }
            bytes += run.length;
            long minRate = timeless ? 0 : c.minBodyRate();
            if (minRate > 0 && waitedNanos > timeout && bytes < minRate * (double) waitedNanos / 1e9) {
                throw slow("the request body came at " + Math.round(bytes / (waitedNanos / 1e9))
                        + " bytes a second over " + waitedNanos / 1_000_000 + " ms of waiting for it, under the"
                        + " server's min_body_rate of " + minRate);
            }
            return run;
        }

        /** A client too slow for the server's bounds: this body is read no more, and its reader answers 408. */
        private HttpCodecException slow(String why) {
            dropped = true;
            c.metrics().onBodyTimeout();
            return new HttpCodecException(408, why);
        }

        @Override
        public dev.weft.http.Headers trailers() {
            return dev.weft.http.Headers.EMPTY; // a request's trailers are read, checked and dropped
        }

        @Override
        public void liftTimeBounds() {
            timeless = true;
        }

        @Override
        public void cancel() {
            dropped = true;
            lock.lock();
            try {
                arrived.signalAll(); // a reader waiting for the next run returns at once
            } finally {
                lock.unlock();
            }
        }
    }

    /** A write of this stream's thread outside {@link #answer}, not interrupted by a reset; false: reset already. */
    private boolean io(Runnable write) {
        if (!startWriting()) {
            return false;
        }
        try {
            write.run();
        } finally {
            stopWriting();
        }
        return true;
    }

    /** The whole body, bounded by the server's max body and body timeout; null when the stream is over without one. */
    private byte[] readBody() throws InterruptedException, IOException {
        if (preloaded != null) {
            return preloaded;
        }
        // made at the first byte and grown as bytes arrive (16 KiB, doubling), never sized from content-length:
        // HEADERS alone cost no heap, and a request without a body (a GET's END_STREAM on its HEADERS) none either
        ByteArrayOutputStream body = null;
        long deadline = System.nanoTime() + c.bodyTimeout().toNanos();
        while (true) {
            byte[] chunk;
            boolean end;
            lock.lock();
            try {
                while (buffered == 0 && !ended && !cancelled) {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        break;
                    }
                    arrived.awaitNanos(left);
                }
                if (cancelled) {
                    return null;
                }
                if (buffered == 0 && !ended) {
                    chunk = null;
                    end = false;
                } else {
                    chunk = buffered == 0 ? NO_BODY : java.util.Arrays.copyOf(buffer, buffered);
                    buffered = 0;
                    end = ended;
                }
            } finally {
                lock.unlock();
            }
            if (chunk == null) { // no byte for body_timeout
                c.metrics().onBodyTimeout();
                discard = true;
                c.endedEarly(id);
                io(() -> c.resetFromStream(id, Http2Error.CANCEL));
                return null;
            }
            if (chunk.length > 0) {
                if (!io(() -> c.credit(this, chunk.length))) {
                    lock.lock();
                    try {
                        untaken += chunk.length; // given back as the thread ends
                    } finally {
                        lock.unlock();
                    }
                    return null;
                }
                if ((body == null ? 0 : body.size()) + (long) chunk.length > c.maxBodyBytes()) {
                    answerEarly(413, "request body over " + c.maxBodyBytes() + " bytes");
                    return null;
                }
                if (body == null) {
                    body = new ByteArrayOutputStream((int) Math.min(INITIAL_BODY_BUFFER,
                            request.contentLength() >= 0 ? request.contentLength() : INITIAL_BODY_BUFFER));
                }
                body.write(chunk);
            }
            if (end) {
                return body == null ? NO_BODY : body.toByteArray();
            }
        }
    }

    /** Answers before the request's body ended: its DATA is dropped from now on, and the stream reset (NO_ERROR). */
    private void answerEarly(int status, String message) throws IOException, InterruptedException {
        discard = true;
        c.endedEarly(id);
        answer(ServerResponse.json(status, "{\"error\":" + dev.weft.server.JsonText.quote(message) + "}"));
        if (!remoteClosed) {
            io(() -> c.resetFromStream(id, Http2Error.NO_ERROR));
        }
    }

    /** Writes the answer: its header block, then its body in DATA frames within the windows. */
    private void answer(ServerResponse r) throws IOException, InterruptedException {
        ServerResponse given = r;
        String bad = badField(r);
        if (bad != null) {
            // refused before the shared HPACK encoder sees it: a field it cannot encode would end the connection
            Http2ServerConnection.log("HTTP/2 stream " + id + ": the handler's answer has an invalid field (" + bad
                    + "); answered 500", null);
            r = ServerResponse.json(500, "{\"error\":\"the answer has an invalid header field\"}");
        } else {
            // a block over the client's limit would fail in the encoder, maybe after the head and body went out (the
            // trailers): checked whole before the first frame, while another answer can still be given
            long limit = c.answerHeaderLimit();
            long headSize = listSize(r.headers()) + 64; // :status and content-length
            long trailerSize = listSize(r.trailers());
            if (headSize > limit || trailerSize > limit) {
                Http2ServerConnection.log("HTTP/2 stream " + id + ": the handler's answer has a header block of "
                        + Math.max(headSize, trailerSize) + " bytes (" + (headSize > limit ? "head" : "trailers")
                        + "), over the " + limit + " the client takes; answered 500", null);
                r = ServerResponse.json(500, "{\"error\":\"the answer's header fields are larger than this"
                        + " connection takes (" + limit + " bytes)\"}");
            }
        }
        if (r != given && given.stream() != null) {
            given.stream().cancel(); // answered 500 instead: nothing of its stream is sent
        }
        boolean head = "HEAD".equals(request.head().method());
        byte[] body = r.body() == null ? new byte[0] : r.body();
        boolean bodiless = r.status() == 204 || r.status() == 304;
        BodySource source = r.stream();
        if (source != null && (head || bodiless)) {
            source.cancel(); // an answer without content: nothing of the stream is sent
            source = null;
        }
        boolean noData = source == null && (head || bodiless || body.length == 0);
        // trailers (gRPC's grpc-status) end the stream in a HEADERS frame of their own after the body; none for HEAD
        MetaData trailers = head || r.trailers().isEmpty() ? null : trailers(r.trailers());
        HttpFields.Mutable fields = HttpFields.build(r.headers().size() + 1);
        for (Map.Entry<String, String> h : r.headers()) {
            String name = h.getKey().toLowerCase(Locale.ROOT);
            if (!CONNECTION_SPECIFIC.contains(name)) {
                fields.add(name, h.getValue());
            }
        }
        if (!bodiless && source == null) {
            fields.add("content-length", Long.toString(body.length));
        }
        MetaData.Response meta = new MetaData.Response(r.status(), null, HttpVersion.HTTP_2, fields);
        if (source != null) {
            answerStreamed(meta, source);
            return;
        }
        boolean written = writeLocked(() -> {
            if (noData && remoteClosed) {
                c.releasePlace(this); // the last frame: the client may open the next stream once it has read it
            }
            c.writeHeadersLocked(id, meta, noData && trailers == null);
            if (noData && trailers != null) {
                c.writeHeadersLocked(id, trailers, true);
            }
        });
        if (noData || !written) {
            return;
        }
        // one deadline for the whole body from its first byte: a peer that opens its window a byte at a time, just
        // before each wait would end, cannot hold the stream's thread for ever
        writeData(body, trailers, true, System.nanoTime() + c.limits().writeTimeout().toNanos(), false);
    }

    /**
     * A streamed answer: its head without content-length, each run of the source in DATA frames as it comes (each
     * run within write_timeout of its first byte), then its trailers, or an empty DATA that ends the stream. A source
     * that fails resets the stream (INTERNAL_ERROR); a stream that stops here (a reset, a slow reader) cancels it.
     */
    private void answerStreamed(MetaData.Response meta, BodySource source) throws IOException, InterruptedException {
        boolean finished = false;
        streamingSource = source;
        try {
            if (cancelled) {
                return; // reset before the field was set: its cancel() did not see the source
            }
            if (!writeLocked(() -> c.writeHeadersLocked(id, meta, false))) {
                return;
            }
            while (true) {
                byte[] run;
                if (cancelled) {
                    return;
                }
                try {
                    run = source.next();
                } catch (IOException e) {
                    Http2ServerConnection.log("HTTP/2 stream " + id + ": its streamed answer failed (" + e.getMessage()
                            + "); reset", null);
                    io(() -> c.resetFromStream(id, Http2Error.INTERNAL_ERROR));
                    return;
                }
                if (run == null) {
                    break;
                }
                if (run.length > 0 && !writeData(run, null, false,
                        System.nanoTime() + c.limits().writeTimeout().toNanos(), true)) {
                    return;
                }
            }
            dev.weft.http.Headers t = source.trailers();
            String bad = badField(t);
            long limit = c.answerHeaderLimit();
            if (bad != null || listSize(t) > limit) {
                Http2ServerConnection.log("HTTP/2 stream " + id + ": its streamed answer's trailers "
                        + (bad != null ? "have an invalid field (" + bad + ")" : "are over the " + limit
                        + " bytes the client takes") + "; reset", null);
                io(() -> c.resetFromStream(id, Http2Error.INTERNAL_ERROR));
                return;
            }
            finished = writeData(new byte[0], t.isEmpty() ? null : trailers(t), true,
                    System.nanoTime() + c.limits().writeTimeout().toNanos(), true);
        } finally {
            if (!finished) {
                source.cancel();
            }
        }
    }

    /**
     * Writes {@code body} in DATA frames within the windows by {@code deadline}; when {@code end}, the last frame ends
     * the stream, or {@code trailers} after it do (an empty body then sends only them, or an empty DATA). False when
     * it stopped: the stream was reset, the connection closed, or the client took nothing until the deadline. A
     * client that takes nothing of a whole answer until then loses the connection (a slow reader); of a streamed run,
     * only this stream (RST_STREAM CANCEL): a paused stream is flow control at work, not an attack on the others.
     */
    private boolean writeData(byte[] body, MetaData trailers, boolean end, long deadline, boolean streamed)
            throws IOException, InterruptedException {
        if (body.length == 0) {
            if (!end) {
                return true;
            }
            return writeLocked(() -> {
                if (remoteClosed) {
                    c.releasePlace(this);
                }
                if (trailers != null) {
                    c.writeHeadersLocked(id, trailers, true);
                } else {
                    Http2FrameWriter.data(c.out(), id, true, body, 0, 0);
                }
            });
        }
        int off = 0;
        while (off < body.length) {
            c.writeLock.lock();
            try {
                while (!cancelled && !c.closed() && Math.min(sendWindow, c.connectionSendWindow) <= 0) {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        if (streamed) {
                            discard = true;
                            c.endedEarly(id);
                            c.resetFromStream(id, Http2Error.CANCEL); // under the write lock, which is reentrant
                            return false;
                        }
                        c.slowReader();
                        return false;
                    }
                    c.windowOpened.awaitNanos(left);
                }
                if (!startWriting()) {
                    return false;
                }
                try {
                    while (off < body.length && Math.min(sendWindow, c.connectionSendWindow) > 0) {
                        int n = (int) Math.min(Math.min(sendWindow, c.connectionSendWindow),
                                Math.min(c.peerMaxFrameSize, body.length - off));
                        boolean last = end && off + n == body.length;
                        if (last && remoteClosed) {
                            c.releasePlace(this);
                        }
                        Http2FrameWriter.data(c.out(), id, last && trailers == null, body, off, n);
                        off += n;
                        sendWindow -= n;
                        c.connectionSendWindow -= n;
                        if (last && trailers != null) { // HEADERS are not flow-controlled
                            c.writeHeadersLocked(id, trailers, true);
                        }
                    }
                    c.flushLocked();
                } finally {
                    stopWriting();
                }
            } finally {
                c.writeLock.unlock();
            }
        }
        return true;
    }

    /** Frames written under the connection's write lock. */
    private interface LockedWrite {
        void write() throws IOException;
    }

    /**
     * {@code w} under the connection's write lock as this stream's writer (a reset meanwhile does not interrupt it),
     * then a flush; false, writing nothing, when the stream was reset or the connection closed already.
     */
    private boolean writeLocked(LockedWrite w) throws IOException {
        c.writeLock.lock();
        try {
            if (!startWriting()) {
                return false;
            }
            try {
                w.write();
                c.flushLocked();
            } finally {
                stopWriting();
            }
            return true;
        } finally {
            c.writeLock.unlock();
        }
    }

    /** A header list's size as RFC 9113 section 6.5.2 counts it: each name and value, plus 32 bytes a field. */
    static long listSize(dev.weft.http.Headers fields) {
        long n = 0;
        for (Map.Entry<String, String> h : fields) {
            n += h.getKey().length() + (h.getValue() == null ? 0 : h.getValue().length()) + 32;
        }
        return n;
    }

    /** A trailer section as HTTP/2 fields: lower-case names, without connection-specific ones. */
    private static MetaData trailers(dev.weft.http.Headers t) {
        HttpFields.Mutable fields = HttpFields.build(t.size());
        for (Map.Entry<String, String> h : t) {
            String name = h.getKey().toLowerCase(Locale.ROOT);
            if (!CONNECTION_SPECIFIC.contains(name)) {
                fields.add(name, h.getValue());
            }
        }
        return new MetaData(HttpVersion.HTTP_2, fields);
    }

    /** The first field of the answer that is not a token name with a valid value (what Http1 would read), or null. */
    private static String badField(ServerResponse r) {
        String bad = badField(r.headers());
        return bad != null ? bad : badField(r.trailers());
    }

    private static String badField(dev.weft.http.Headers fields) {
        for (Map.Entry<String, String> h : fields) {
            if (h.getKey() == null || !dev.weft.http.Http1.isToken(h.getKey())) {
                return "name '" + (h.getKey() == null ? "null" : dev.weft.http.Http1.printable(h.getKey())) + "'";
            }
            if (h.getValue() == null || !dev.weft.http.Http1.isFieldValue(h.getValue())) {
                return "the value of '" + h.getKey() + "'";
            }
        }
        return null;
    }

    /** About to write to the socket: from now on a reset does not interrupt (false: reset already, write nothing). */
    private boolean startWriting() {
        lock.lock();
        try {
            if (cancelled || c.closed()) {
                return false;
            }
            writing = true;
            return true;
        } finally {
            lock.unlock();
        }
    }

    private void stopWriting() {
        lock.lock();
        try {
            writing = false;
        } finally {
            lock.unlock();
        }
    }
}
