package dev.weft.client;

import dev.weft.http.Headers;
import dev.weft.http.Framing;
import dev.weft.http.Http1;
import dev.weft.http.Http1Input;
import dev.weft.http.HttpCodecException;
import dev.weft.http.Http1Response;

import java.io.EOFException;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.util.Arrays;

/**
 * One HTTP/1.1 client connection: writes a request, reads the answer's head and body from a single
 * buffer. Blocking, meant for a virtual thread; it is used by one exchange at a time (the pool hands it
 * out), and {@link #abort()} may be called from any thread to wake a blocked read or write.
 *
 * <p>Why our own and not Apache HttpClient: in `weft lab system-a` at 1 s the gateway holds 14,400
 * pooled connections and 14,400 calls parked in reads. Apache kept ~16 KiB of buffers and a few dozen
 * objects per connection and per exchange, and its ~25-frame call chain is copied to the heap each time
 * a virtual thread parks; the gateway spent a third of its CPU in GC. This class keeps one small read
 * buffer per connection and parks a few frames deep.
 */
final class Connection extends Lease {
    /** Initial read buffer; grows for a long head (up to {@link #MAX_HEAD_BYTES}). */
    static final int BUFFER_BYTES = 2048;
    /** Longest response head (status line and headers) accepted. */
    static final int MAX_HEAD_BYTES = 64 * 1024;
    /** Most header fields accepted in one response head. */
    static final int MAX_HEADERS = 256;
    /** How long one read of {@link #probe} waits for application data behind the bytes in the kernel, at most. */
    static final int PROBE_MILLIS = 1;
    /** How long a connection sits idle before a call that cannot be sent again reads it first ({@link #endedWhileIdle}). */
    static final long STALE_CHECK_AFTER_NANOS = java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(250);
    /**
     * How long a {@link #probe} takes in all, at most: a few of its reads, with room for a busy machine's scheduling.
     * The probe ends sooner when the call's deadline comes first.
     */
    static final long PROBE_BOUND_NANOS = java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(5);

    /** The answer's head and how its body is framed. */
    record Head(int status, Headers headers, long contentLength, boolean chunked, boolean keepAlive) {
        static final long UNTIL_CLOSE = -2;
        static final long NONE = -1;
    }

    /** The peer broke HTTP/1.1. */
    static final class ProtocolException extends IOException {
        ProtocolException(String message) {
            super(message);
        }
    }

    /** The peer closed the connection (or reset it) before the whole answer arrived. */
    static class ClosedException extends IOException {
        final boolean nothingReceived;

        ClosedException(String message, boolean nothingReceived) {
            super(message);
            this.nothingReceived = nothingReceived;
        }
    }

    private final Socket socket;
    private final Socket raw;
    /** The TCP socket's own stream: what it says {@link InputStream#available()} is what the kernel holds. */
    private final InputStream rawIn;
    private final Http1Input input;
    private final OutputStream out;
    /** {@link Http1Input#totalRead()} when the current request was sent. */
    private long sentAt;
    private volatile boolean closed;
    /** When it went back to the pool, {@link System#nanoTime()}. */
    long idleSince;
    /**
     * How many times {@link #hasUnaskedBytes} asked the socket (a {@code FIONREAD} each, the costly part): the pool
     * asks once per reuse, and its tests count that. Written by the one thread that holds the connection.
     */
    int socketChecks;
    /** How many times {@link #endedWhileIdle} read the socket: the tests count it. Same thread as above. */
    int staleChecks;

    /**
     * @param socket the socket to talk on (a TLS socket for https)
     * @param raw    the TCP socket underneath; closing it is what {@link #abort()} does
     */
    Connection(Socket socket, Socket raw) throws IOException {
        this.socket = socket;
        this.raw = raw;
        this.input = new Http1Input(new SocketInput(socket.getInputStream()), BUFFER_BYTES);
        this.out = socket.getOutputStream();
        this.rawIn = raw.getInputStream();
    }

    /**
     * Whether bytes past the last answer are in our buffer already (a hostile backend's forged second answer sent
     * with the first): the part of {@link #hasUnaskedBytes} that makes no system call.
     */
    boolean hasBufferedBytes() {
        return input.hasBuffered();
    }

    /**
     * Whether the backend sent bytes no request asked for, between exchanges: past the last answer in our buffer,
     * decrypted and waiting in the TLS socket, or still in the kernel (a stray body, an idle {@code 408}, a TLS
     * close_notify). Such a connection must not be reused: those bytes would be read as the next call's answer.
     * One {@code FIONREAD} on the socket; a plain connection, or a TLS one that served an exchange, never waits.
     * A TLS connection that never served an exchange (a {@code min_idle} one, or one whose caller left while it
     * was opened) and has bytes in the kernel may hold only a TLS 1.3 server's session tickets, which wait there
     * until the first read: it is {@link #probe probed} through TLS, for {@link #PROBE_BOUND_NANOS} at most and never
     * past the deadline of the call that wants it.
     *
     * @param forCall the exchange that would take the connection, or null when none does yet (it is given back)
     */
    boolean hasUnaskedBytes(Exchange forCall) {
        try {
            if (input.hasBuffered()) {
                return true;
            }
            socketChecks++;
            if (socket == raw) {
                return rawIn.available() > 0 || endedWhileIdle(forCall);
            }
            if (socket.getInputStream().available() > 0) {
                return true;
            }
            if (rawIn.available() == 0) {
                return endedWhileIdle(forCall);
            }
            return input.totalRead() > 0 || probe(forCall == null ? Long.MAX_VALUE : forCall.deadlineNanos());
        } catch (IOException e) {
            return true; // a socket that cannot say is not worth the risk
        }
    }

    /**
     * Whether the backend closed this connection while it sat idle, for a call that could not go again on a new one
     * ({@link Exchange#cannotResendOnStale}: a POST would fail with {@code reset} where a GET is sent once more):
     * {@code FIONREAD} reads 0 at the end of the stream as when nothing came, so a connection idle for
     * {@link #STALE_CHECK_AFTER_NANOS} or more is read, with a timeout of {@link #PROBE_MILLIS} ms, on the plain
     * socket (under TLS too: a byte read there is an unasked one, and the connection is not reused). The end of the
     * stream, or a byte, comes at once; a sound connection costs the call that millisecond. A backend that closes idle
     * connections sooner than that can still fail such a call: its keep-alive timeout is below any we have seen.
     */
    private boolean endedWhileIdle(Exchange forCall) throws IOException {
        if (forCall == null || !forCall.cannotResendOnStale() || System.nanoTime() - idleSince < STALE_CHECK_AFTER_NANOS) {
            return false;
        }
        staleChecks++;
        return spokeWithinProbe(raw, rawIn);
    }

    /**
     * Reads one byte from {@code in} (of {@code s}) with a timeout of {@link #PROBE_MILLIS} ms: true for a byte or the
     * end of the stream (the peer spoke unasked, or closed), false when nothing came; {@code s}'s timeout is put back.
     */
    private static boolean spokeWithinProbe(Socket s, InputStream in) throws IOException {
        int timeout = s.getSoTimeout();
        s.setSoTimeout(PROBE_MILLIS);
        try {
            in.read();
            return true;
        } catch (java.net.SocketTimeoutException e) {
            return false;
        } finally {
            s.setSoTimeout(timeout);
        }
    }

    /**
     * Reads through TLS with a timeout of {@link #PROBE_MILLIS} ms, on a connection that never served an exchange:
     * the TLS layer takes in session tickets and returns nothing, so the read times out when tickets were all there
     * was; a byte of data (an idle {@code 408}) or the end of the stream (a close_notify) means the server spoke
     * unasked. A timeout leaves the TLS socket usable (the JDK keeps a record read in part for the next read). Bytes
     * still in the kernel after the timeout (a record that came in meanwhile), or part of a record read when it came
     * ({@link RecordTrackingSocket}), count as unasked: a good connection thrown away costs a connect, a 408 read as an
     * answer costs a call.
     *
     * <p>The timeout bounds each read of the socket, not the TLS layer's read, which goes on until it has a whole
     * record: a server that dribbles a record of 16 KiB a byte at a time, each within the timeout, would hold the
     * probe (and the caller, whose exchange's watchdog has no connection to abort yet) for seconds. So a
     * {@link SocketGuard} closes the socket {@link #PROBE_BOUND_NANOS} from now, or at {@code callDeadline} if that
     * comes first ({@link Long#MAX_VALUE}: no call waits): a probe cut short closes the connection, and the caller
     * takes another or opens a new one.
     */
    private boolean probe(long callDeadline) throws IOException {
        long now = System.nanoTime();
        long until = now + PROBE_BOUND_NANOS;
        if (callDeadline != Long.MAX_VALUE && callDeadline - until < 0) {
            until = callDeadline;
        }
        if (until - now <= 0) {
            return true; // the call has no time left to probe it: a connection not known to be clean is not reused
        }
        SocketGuard guard = new SocketGuard(raw, until, "weft-probe-deadline");
        try {
            // a byte of data, or the end of the stream: not reused either way; when nothing came, part of a record read
            // (a record sent with pauses) counts too: the next read would go on with it
            boolean unasked = spokeWithinProbe(socket, socket.getInputStream())
                    || raw instanceof RecordTrackingSocket r && !r.betweenRecords()
                    || socket.getInputStream().available() > 0 || rawIn.available() > 0;
            if (!guard.done()) {
                return true; // cut short: the guard closed the socket (or is closing it)
            }
            return unasked;
        } finally {
            guard.done(); // on every way out; a read the guard cut fails, which the caller counts as unasked
        }
    }

    @Override
    boolean isClosed() {
        return closed;
    }

    /** Closes the TCP socket: a read or write blocked on it fails at once. Safe from any thread. */
    @Override
    void abort() {
        closed = true;
        try {
            raw.close();
        } catch (IOException ignored) {
            // closing is all we wanted
        }
    }

    void close() {
        closed = true;
        try {
            socket.close();
        } catch (IOException ignored) {
            // nothing to save
        } finally {
            abort();
        }
    }

    /** Sends a request: the head and body are written together when the body is small. */
    void send(byte[] head, byte[] body) throws IOException {
        sentAt = input.totalRead();
        try {
            if (body == null || body.length == 0) {
                out.write(head);
            } else if (body.length <= 16 * 1024) {
                byte[] all = Arrays.copyOf(head, head.length + body.length);
                System.arraycopy(body, 0, all, head.length, body.length);
                out.write(all);
            } else {
                out.write(head);
                out.write(body);
            }
            out.flush();
        } catch (java.net.SocketException e) {
            throw new ClosedException("connection lost while sending the request: " + e.getMessage(), true);
        }
    }

    /** Writes part of a request sent in runs ({@code RequestStream}), flushed; the head first ({@link #send}). */
    void write(byte[] bytes) throws IOException {
        try {
            out.write(bytes);
            out.flush();
        } catch (java.net.SocketException e) {
            throw new ClosedException("connection lost while sending the request body: " + e.getMessage(), false);
        }
    }

    /**
     * Reads the answer's head with weft-http's strict codec, skipping interim (1xx) answers.
     *
     * @param headRequest whether the request was HEAD (its answer has no body whatever it declares)
     */
    @Override
    Head readHead(boolean headRequest) throws IOException {
        runs = null;
        Http1Response h;
        try {
            h = Http1.readResponseHead(input, headRequest, MAX_HEAD_BYTES, MAX_HEADERS);
        } catch (HttpCodecException e) {
            throw new ProtocolException(e.getMessage());
        } catch (EOFException e) {
            throw closed();
        }
        Headers headers = h.head().headers();
        int status = h.head().status();
        if (h.framing().kind() != dev.weft.http.Framing.Kind.NONE) {
            String te = headers.joined("transfer-encoding");
            if (te != null && !te.strip().equalsIgnoreCase("chunked")) {
                // a coding this client does not decode (gzip, chunked): relayed without its Transfer-Encoding (a
                // hop-by-hop field), the body would reach the caller still coded, as if it were not
                throw new ProtocolException("the answer's Transfer-Encoding '" + dev.weft.http.Http1.printable(te)
                        + "' has a coding other than chunked, which this client does not decode");
            }
        }
        return switch (h.framing().kind()) {
            case NONE -> new Head(status, headers, 0, false, h.keepAlive());
            case LENGTH -> new Head(status, headers, h.framing().length(), false, h.keepAlive());
            case CHUNKED -> new Head(status, headers, Head.NONE, true, h.keepAlive());
            case UNTIL_CLOSE -> new Head(status, headers, Head.UNTIL_CLOSE, false, false);
        };
    }

    /**
     * Reads the body as {@code head} frames it, at most {@code max} bytes.
     *
     * @return the body, or null when it is longer than {@code max} (the connection must then be closed)
     */
    @Override
    byte[] readBody(Head head, long max) throws IOException {
        try {
            return Http1.readBody(input, framing(head), max, true).bytes();
        } catch (HttpCodecException.BodyTooLarge e) {
            return null;
        } catch (HttpCodecException e) {
            throw new ProtocolException(e.getMessage());
        } catch (EOFException e) {
            throw new ClosedException("closed the connection in the middle of the body", false);
        }
    }

    private static Framing framing(Head head) {
        return head.chunked() ? Framing.CHUNKED
                : head.contentLength() == Head.UNTIL_CLOSE ? Framing.UNTIL_CLOSE
                : Framing.length(head.contentLength());
    }

    /** The body being streamed ({@link #startStreaming}), or null. */
    private Http1.BodyRuns runs;

    @Override
    void startStreaming(Head head) {
        runs = new Http1.BodyRuns(input, framing(head), Http2Stream.MAX_CHUNK);
    }

    /**
     * What one read of the socket gave of the body (at most {@link Http2Stream#MAX_CHUNK}), waiting for it: a run as
     * the server sent it, so an event the server flushed is passed on as it came. Nothing of the body is held here
     * beyond the one read; the server is held back by TCP while the exchange's taker does not take.
     */
    @Override
    byte[] takeChunk() throws IOException {
        try {
            return runs.next();
        } catch (HttpCodecException e) {
            throw new ProtocolException(e.getMessage());
        } catch (EOFException e) {
            throw new ClosedException("closed the connection in the middle of the body", false);
        }
    }

    /** A streamed answer's chunked trailers, once its body ended; else none (a held body's are dropped). */
    @Override
    Headers trailers() {
        return runs != null && runs.ended() ? runs.trailers() : Headers.EMPTY;
    }

    private ClosedException closed() {
        boolean nothing = input.totalRead() == sentAt;
        return new ClosedException(nothing ? "closed the connection without answering"
                : "closed the connection before the whole answer", nothing);
    }

    /** The socket's stream, with a reset the peer caused told apart from our own abort. */
    private final class SocketInput extends FilterInputStream {
        SocketInput(InputStream in) {
            super(in);
        }

        @Override
        public int read(byte[] dst, int off, int n) throws IOException {
            try {
                return in.read(dst, off, n);
            } catch (java.net.SocketException e) {
                if (closed) {
                    throw e; // our own abort; the exchange knows why
                }
                boolean nothing = input.totalRead() == sentAt;
                throw new ClosedException("connection reset" + (nothing ? " before any answer" : " during the answer")
                        + ": " + e.getMessage(), nothing);
            } catch (EOFException e) {
                return -1;
            }
        }
    }
}
