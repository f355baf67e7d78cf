package dev.weft.client;

import dev.weft.http.Headers;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.MetaData;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;

/**
 * One exchange on a shared {@link Http2Connection}: a place reserved on the connection when the pool hands it
 * out, a stream id once its HEADERS are sent. The connection's reader fills in the answer; the exchange's thread
 * waits for it ({@link #readHead}, {@link #readBody}) and is woken by each frame, by a failure of the stream or
 * of its connection, or by {@link #abort()}.
 *
 * <p>What a server sends on a stream is checked here as RFC 9113 section 8.1 asks (Jetty's parser has checked
 * the frames and the header block): a final answer before any DATA, 1xx answers without END_STREAM and never
 * 101, trailers only with END_STREAM and without a status, DATA adding up to {@code content-length}, no control
 * character in a value (CR, LF, NUL, nor the others HTTP/1.1 refuses). A stream that breaks these fails with
 * {@code protocol-error} and is reset; the connection
 * goes on serving the others.
 */
final class Http2Stream extends Lease {
    /**
     * The stream was refused before the server processed it (RST_STREAM REFUSED_STREAM, a GOAWAY below its id,
     * or a connection that was going away before it was sent): any request may be sent again on another
     * connection (RFC 9113 section 8.7).
     */
    /** The exchange was stopped (its deadline, a cancel) as it sent its body: nothing of that frame was written. */
    static final class StoppedException extends IOException {
        StoppedException(String message) {
            super(message);
        }
    }

        static final class NotProcessedException extends Connection.ClosedException {
        NotProcessedException(String message) {
            super(message, true);
        }
    }

    /**
     * The request's header block is larger than the server takes (SETTINGS_MAX_HEADER_LIST_SIZE, at most 64 KiB):
     * not sent; {@code too-large}, the caller's request, not the backend's failure.
     */
    static final class HeadersTooLargeException extends IOException {
        HeadersTooLargeException(String message) {
            super(message);
        }
    }

    final Http2Connection connection;
    /** 0 until its HEADERS are sent (under the connection's write lock). */
    volatile int id;
    /** The exchange's thread, woken by every change below. */
    private volatile Thread waiter;
    private volatile Connection.Head head;
    /** The trailer section, when one ended the stream (written by the reader before {@link #ended}). */
    private Headers trailers = Headers.EMPTY;
    /**
     * Guards the body buffer and the credit the taker sent while the exchange streams the answer ({@link #takeChunk});
     * a java.util.concurrent lock, not a monitor: the reader takes it for every DATA frame (house rule 3).
     */
    private final java.util.concurrent.locks.ReentrantLock bodyLock = new java.util.concurrent.locks.ReentrantLock();
    /**
     * The body read and not yet taken: written by the reader, read by the exchange after {@link #ended}, or under
     * {@link #bodyLock} while the exchange streams it.
     */
    private byte[] body = new byte[0];
    private int bodyLength;
    /** While streaming: where the bytes not yet taken begin in {@link #body} (they end at {@link #bodyLength}). */
    private int bodyStart;
    /** DATA bytes received in all (reader only): what content-length is checked against. */
    private long received;
    /** The exchange takes the body as it comes (an {@link AnswerSink}): its credit is given as it takes it. */
    private volatile boolean streaming;
    /**
     * The exchange has a sink that may take the answer as it comes, and has not said yet whether it does ({@link
     * #mayStream}): DATA that comes meanwhile is neither bounded by max_body nor credited, so the server may send at
     * most the stream's window before the exchange decides; {@link #startStreaming} or {@link #hold} end it.
     */
    private volatile boolean undecided;
    /** Payload bytes buffered while {@link #undecided}, not credited (under {@link #bodyLock}). */
    private int uncredited;
    /** Whether the last DATA's bytes were buffered while streaming (reader only): their credit waits for the taker. */
    boolean lastDataStreamed;
    /** Credit the taker has sent and the reader has not yet added to {@link #receiveWindow}; under bodyLock. */
    private long creditSent;
    /** Credit the taker owes the server and has not sent yet (sent in batches); exchange thread only. */
    private int creditOwed;
    private volatile boolean ended;
    private volatile boolean tooLarge;
    private volatile IOException failure;
    private volatile boolean aborted;
    /** Whether it was reset (by the server, or here) or never sent: nothing to reset on release. */
    volatile boolean closedByPeer;
    /** Whether our side ended: END_STREAM sent with the HEADERS or the body's last DATA. */
    volatile boolean requestEnded;
    /** What the request was, for checking the answer: HEAD answers have no body. */
    private boolean headRequest;
    private long maxBody = Long.MAX_VALUE;
    private long declaredLength = -1;
    /** The final answer's status (reader only). */
    private int status;
    /** Flow control, under the connection's window lock: what the server lets it send. */
    long sendWindow;
    /** Flow control, on the reader: what it may still receive, and what it received and has not given back. */
    int receiveWindow;
    int unacknowledged;

    Http2Stream(Http2Connection connection) {
        this.connection = connection;
        this.reused = true;
    }

    /** Sends the request: HEADERS, then the body as DATA within the server's windows. */
    void send(MetaData.Request request, byte[] requestBody, boolean head, long max) throws IOException {
        this.waiter = Thread.currentThread();
        this.headRequest = head;
        this.maxBody = max;
        connection.start(this, request, requestBody);
    }

    /** Sends the request's HEADERS without ending the stream: its body follows by {@link #sendRun}. */
    void sendHead(MetaData.Request request, boolean head, long max) throws IOException {
        this.waiter = Thread.currentThread();
        this.headRequest = head;
        this.maxBody = max;
        connection.start(this, request, null, true);
    }

    /** A run of a streamed request body, from the thread that pumps it; {@code end}: the body's last. */
    void sendRun(byte[] run, boolean end) throws IOException {
        connection.sendData(this, run, end);
    }

    @Override
    Connection.Head readHead(boolean headRequest) throws IOException {
        waiter = Thread.currentThread();
        while (true) {
            Connection.Head h = head;
            if (h != null) {
                return h;
            }
            awaitChange();
        }
    }

    @Override
    byte[] readBody(Connection.Head h, long max) throws IOException {
        waiter = Thread.currentThread();
        while (!ended) {
            if (tooLarge) {
                return null;
            }
            awaitChange();
        }
        if (tooLarge) {
            return null;
        }
        return bodyLength == body.length ? body : Arrays.copyOf(body, bodyLength);
    }

    // ---- streaming: the body as it comes (AnswerSink) -----------------------------------------------------

    /** The most one {@link #takeChunk} hands over (a run of the body: the pipe behind it holds a few). */
    static final int MAX_CHUNK = 64 * 1024;

    /**
     * From now on the exchange takes the body as it comes, and the server's window opens as it does. The bytes
     * buffered already are credited again as they are taken, though the reader credited some of them: a window
     * larger by at most what was buffered, once, rather than a share of it never given back.
     */
    @Override
    void startStreaming(Connection.Head head) {
        bodyLock.lock();
        try {
            streaming = true;
            undecided = false;
            uncredited = 0; // credited as the taker takes them, as every streamed byte is
        } finally {
            bodyLock.unlock();
        }
    }

    /** Before the request goes: the exchange may stream the answer ({@link #undecided} until it says). */
    void mayStream() {
        undecided = true;
    }

    /**
     * The exchange holds the answer after all: what came while it decided is credited now, and max_body bounds the
     * body from here, counting what came (over it: too large, as if it had been held from the start).
     */
    @Override
    void hold() {
        if (!undecided) {
            return; // no sink asked (the common case): nothing to credit, no lock taken
        }
        int c;
        bodyLock.lock();
        try {
            if (!undecided) {
                return;
            }
            undecided = false;
            c = uncredited;
            uncredited = 0;
            if (received > maxBody) {
                tooLarge = true;
            }
        } finally {
            bodyLock.unlock();
        }
        if (c > 0) {
            owe(c, true);
        }
    }

    /**
     * The body read since the last call (at most {@link #MAX_CHUNK}), waiting for it when there is none: null once the
     * stream ended and all was taken. Throws as {@link #readBody} does (a failure, an abort, the deadline). What waits
     * to be taken is bounded by the stream's window, which opens only as bytes are taken, not by max_body.
     */
    @Override
    byte[] takeChunk() throws IOException {
        waiter = Thread.currentThread();
        while (true) {
            if (tooLarge) { // bytes were dropped before it streamed: a cut, never a clean end
                throw new IOException("the answer went over max_body before it streamed");
            }
            boolean end = ended; // read before the buffer: bytes that came with END_STREAM are in it by then
            byte[] chunk = null;
            bodyLock.lock();
            try {
                int n = Math.min(MAX_CHUNK, bodyLength - bodyStart);
                if (n > 0) {
                    chunk = Arrays.copyOfRange(body, bodyStart, bodyStart + n);
                    bodyStart += n;
                    if (bodyStart == bodyLength) {
                        bodyStart = 0;
                        bodyLength = 0;
                    }
                }
            } finally {
                bodyLock.unlock();
            }
            if (chunk != null) {
                owe(chunk.length, false);
                return chunk;
            }
            if (end) {
                return null;
            }
            owe(0, true); // all taken: what is owed goes now, or a server at the end of its window would wait
            awaitChange();
        }
    }

    /** Credit for bytes taken: sent once an eighth of the stream's window is owed, or now when {@code flush}. */
    private void owe(int n, boolean flush) {
        creditOwed += n;
        if (creditOwed > 0 && !ended && (flush || creditOwed >= Http2Connection.STREAM_WINDOW / 8)) {
            int c = creditOwed;
            creditOwed = 0;
            bodyLock.lock();
            try {
                creditSent += c; // counted before the server can see it: its next DATA may use it
            } finally {
                bodyLock.unlock();
            }
            connection.streamCredit(this, c);
        }
    }

    /** The reader, before it counts a DATA frame against the window: the credit the taker sent meanwhile. */
    long takeCreditSent() {
        bodyLock.lock();
        try {
            long c = creditSent;
            creditSent = 0;
            return c;
        } finally {
            bodyLock.unlock();
        }
    }

    /**
     * Parks until the reader or an abort changes something; throws when the stream failed or was aborted, or the
     * thread is interrupted (a park returns at once while it is: the call would spin until its deadline).
     */
    private void awaitChange() throws IOException {
        IOException f = failure;
        if (f != null) {
            throw f;
        }
        if (aborted) {
            throw new IOException("the exchange was stopped");
        }
        if (Thread.currentThread().isInterrupted()) {
            throw new java.io.InterruptedIOException("interrupted while waiting for the answer");
        }
        LockSupport.park(this);
        f = failure;
        if (f != null) {
            throw f;
        }
        if (aborted) {
            throw new IOException("the exchange was stopped");
        }
        if (Thread.currentThread().isInterrupted()) {
            throw new java.io.InterruptedIOException("interrupted while waiting for the answer");
        }
    }

    private void wake() {
        Thread t = waiter;
        if (t != null) {
            LockSupport.unpark(t);
        }
    }

    @Override
    void abort() {
        aborted = true;
        wake();
        connection.aborted(this);
    }

    boolean isAborted() {
        return aborted;
    }

    @Override
    boolean isClosed() {
        return failure != null || aborted;
    }

    /** Whether the answer's head arrived. */
    boolean answered() {
        return head != null;
    }

    /** Whether the whole answer arrived (END_STREAM). */
    boolean ended() {
        return ended;
    }

    /** Whether nothing is left to reset on release: it was reset or never sent, or it ended on both sides. */
    boolean done() {
        return closedByPeer || ended && requestEnded;
    }

    // ---- called by the connection's reader ---------------------------------------------------------

    /**
     * A header block arrived for this stream.
     *
     * @return null, or why the stream is malformed (the reader resets it with PROTOCOL_ERROR)
     */
    String onHeaders(MetaData meta, boolean endStream) {
        if (meta instanceof MetaData.Failed failed) {
            // the HPACK decoder refused a field (an upper-case name, a connection-specific field): its reason, not
            // the status 0 it leaves in the block
            Throwable why = failed.getFailure();
            return "a malformed header block: " + (why == null || why.getMessage() == null ? "refused by the decoder"
                    : dev.weft.http.Http1.printable(why.getMessage()));
        }
        if (head == null) {
            if (!(meta instanceof MetaData.Response response)) {
                return "the answer's first header block has no :status";
            }
            int status = response.getStatus();
            if (status < 100 || status > 999) {
                return "status " + status + " is not three digits";
            }
            String bad = badField(meta);
            if (bad != null) {
                return bad;
            }
            if (status < 200) {
                if (status == 101) {
                    return "101 Switching Protocols is not allowed in HTTP/2";
                }
                if (endStream) {
                    return "an interim (1xx) answer ended the stream";
                }
                return null; // interim: the final answer follows
            }
            this.status = status;
            long length;
            try {
                length = contentLength(meta);
            } catch (IllegalArgumentException e) {
                return e.getMessage();
            }
            declaredLength = length;
            // As the exchange reads it: 0 when the stream ended here; the length when it says how much DATA follows
            // (not for HEAD, 204, 304, whose content-length describes a body not sent); else until END_STREAM.
            long framed = endStream ? 0 : length > 0 && !noContent() ? length : Connection.Head.NONE;
            if (endStream && length > 0 && !noContent()) {
                return "content-length " + length + " but the stream ended with no DATA";
            }
            if (endStream) {
                ended = true;
            }
            head = new Connection.Head(status, fieldsOf(meta), framed, false, true);
            wake();
            return null;
        }
        if (ended) {
            return "a header block after the stream ended";
        }
        if (!endStream) {
            return "a second header block (trailers) without END_STREAM";
        }
        if (meta instanceof MetaData.Response || meta instanceof MetaData.Request) {
            return "trailers with pseudo-header fields"; // RFC 9113 section 8.1: malformed
        }
        String bad = badField(meta);
        if (bad != null) {
            return bad;
        }
        String shortBy = shortOfContentLength();
        if (shortBy != null) {
            return shortBy;
        }
        trailers = fieldsOf(meta);
        return end();
    }

    @Override
    Headers trailers() {
        return ended ? trailers : Headers.EMPTY;
    }

    private static Headers fieldsOf(MetaData meta) {
        List<Map.Entry<String, String>> fields = new ArrayList<>(meta.getHttpFields().size());
        for (HttpField f : meta.getHttpFields()) {
            fields.add(Map.entry(f.getName(), f.getValue()));
        }
        return Headers.of(fields);
    }

    /**
     * DATA for this stream: {@code data} is the reader's buffer, copied here.
     *
     * @return null, or why the stream is malformed
     */
    String onData(ByteBuffer data, boolean endStream) {
        if (head == null) {
            return "DATA before the answer's headers";
        }
        if (ended) {
            return "DATA after the stream ended";
        }
        int n = data.remaining();
        if (n > 0 && noContent()) {
            return "DATA in an answer that has no content (" + (headRequest ? "to HEAD" : "status " + status) + ")";
        }
        lastDataStreamed = false;
        if (!tooLarge && n > 0) {
            received += n;
            if (declaredLength >= 0 && received > declaredLength) {
                return "more DATA than its content-length of " + declaredLength;
            }
            bodyLock.lock();
            try {
                // held whole: bounded by max_body in all; streamed: by the stream's window, which opens only as the
                // exchange takes the bytes
                if (!streaming && !undecided && received > maxBody) {
                    tooLarge = true; // the exchange answers too-large and resets the stream
                } else {
                    if (bodyStart > 0 && bodyLength + n > body.length) { // taken bytes first make room
                        System.arraycopy(body, bodyStart, body, 0, bodyLength - bodyStart);
                        bodyLength -= bodyStart;
                        bodyStart = 0;
                    }
                    long total = (long) bodyLength + n;
                    if (total > body.length) {
                        body = Arrays.copyOf(body, (int) Math.min(streaming || undecided ? Integer.MAX_VALUE - 16
                                : maxBody, Math.max(total, Math.max(1024, 2L * body.length))));
                    }
                    data.get(body, bodyLength, n);
                    bodyLength = (int) total;
                    lastDataStreamed = streaming || undecided;
                    if (undecided) {
                        uncredited += n;
                    }
                }
            } finally {
                bodyLock.unlock();
            }
            if (tooLarge || streaming) {
                wake();
            }
        }
        if (endStream) {
            String shortBy = shortOfContentLength();
            return shortBy != null ? shortBy : end();
        }
        return null;
    }

    /** At the stream's end (DATA or trailers with END_STREAM): why the DATA did not add up to its content-length. */
    private String shortOfContentLength() {
        if (!tooLarge && declaredLength >= 0 && received != declaredLength && !noContent()) {
            return "DATA of " + received + " bytes where content-length said " + declaredLength;
        }
        return null;
    }

    /**
     * An answer with no content whatever its content-length says (RFC 9113 section 8.1.1): to HEAD, or 204 or
     * 304.
     */
    private boolean noContent() {
        return headRequest || status == 204 || status == 304;
    }

    private String end() {
        ended = true;
        wake();
        return null;
    }

    /** The stream failed (reset by the server, malformed, or its connection ended): wakes the exchange. */
    void fail(IOException e) {
        if (failure == null && !ended) {
            failure = e;
        }
        wake();
    }

    /** Fields that are connection-specific in HTTP/1.1 and malformed in HTTP/2 (RFC 9113 section 8.2.2). */
    private static final java.util.Set<String> CONNECTION_SPECIFIC = java.util.Set.of("connection", "keep-alive",
            "proxy-connection", "transfer-encoding", "upgrade");

    /**
     * A value with a control character (CR, LF and NUL are malformed, RFC 9113 section 8.2.1; the others are refused as
     * the HTTP/1.1 reader refuses them, so that what passes here can be passed on), or a connection-specific field
     * (section 8.2.2): malformed. Jetty's decoder has refused upper-case and non-token names already.
     */
    private static String badField(MetaData meta) {
        for (HttpField f : meta.getHttpFields()) {
            if (CONNECTION_SPECIFIC.contains(f.getLowerCaseName())) {
                return "the connection-specific field '" + f.getName() + "'";
            }
            String v = f.getValue();
            if (v != null && !dev.weft.http.Http1.isFieldValue(v)) {
                return "the value of '" + f.getName() + "' has a control character (CR, LF, NUL or another)";
            }
        }
        return null;
    }

    /** The content-length of a header block: -1 when absent; several must agree and be digits. */
    private static long contentLength(MetaData meta) {
        long length = -1;
        for (HttpField f : meta.getHttpFields()) {
            if (!f.getName().equalsIgnoreCase("content-length")) {
                continue;
            }
            String v = f.getValue();
            if (v == null || v.isEmpty() || v.length() > 18) {
                throw new IllegalArgumentException("content-length '" + v + "' is not a number of bytes");
            }
            long n = 0;
            for (int i = 0; i < v.length(); i++) {
                char c = v.charAt(i);
                if (c < '0' || c > '9') {
                    throw new IllegalArgumentException("content-length '" + v + "' is not a number of bytes");
                }
                n = n * 10 + (c - '0');
            }
            if (length >= 0 && length != n) {
                throw new IllegalArgumentException("two content-length values, " + length + " and " + n);
            }
            length = n;
        }
        return length;
    }
}
