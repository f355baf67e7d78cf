package dev.weft.client;

import org.eclipse.jetty.http.MetaData;
import org.eclipse.jetty.http2.ErrorCode;
import org.eclipse.jetty.http2.frames.DataFrame;
import org.eclipse.jetty.http2.frames.Frame;
import org.eclipse.jetty.http2.frames.GoAwayFrame;
import org.eclipse.jetty.http2.frames.HeadersFrame;
import org.eclipse.jetty.http2.frames.PingFrame;
import org.eclipse.jetty.http2.frames.PrefaceFrame;
import org.eclipse.jetty.http2.frames.PushPromiseFrame;
import org.eclipse.jetty.http2.frames.ResetFrame;
import org.eclipse.jetty.http2.frames.SettingsFrame;
import org.eclipse.jetty.http2.frames.WindowUpdateFrame;
import org.eclipse.jetty.http2.generator.Generator;
import org.eclipse.jetty.http2.hpack.HpackException;
import org.eclipse.jetty.http2.parser.Parser;
import org.eclipse.jetty.io.ByteBufferPool;
import org.eclipse.jetty.io.RetainableByteBuffer;
import org.eclipse.jetty.io.WindowRateControl;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One HTTP/2 connection (RFC 9113) to an https destination that chose {@code h2} by ALPN: many exchanges at once,
 * one {@link Http2Stream} each, so a cold start of thousands of calls needs a few TLS handshakes, not thousands.
 *
 * <ul>
 *   <li>Frames and HPACK are Jetty's ({@code jetty-http2-common}: its {@link Parser} checks every frame and header
 *       block a server sends, its {@link Generator} writes ours); the connection, its streams, flow control and
 *       the waits are this class's, in plain blocking code.</li>
 *   <li>Writes: any thread, under one lock (the HPACK encoder's table and the order of stream ids need it).</li>
 *   <li>Reads: one virtual thread per connection reads frames and hands each to its stream, which wakes the
 *       exchange waiting on it: as the JDK's own read pollers do on Linux (virtual threads since JDK 22), so the
 *       exchanges it wakes are queued on its carrier like those the pollers wake. A platform reader was tried
 *       first: a virtual thread it unparks goes to the scheduler's external queue, which a saturated scheduler
 *       drained late, and calls were cut at their budget with their answer in hand ({@code weft lab storm}: 28%
 *       errors in the cold window and the breaker opened; 0.6% with a virtual reader in the same run;
 *       docs/design/pool.md).</li>
 *   <li>Places: {@link #reserve()} takes one of {@code min(max_streams, the server's
 *       SETTINGS_MAX_CONCURRENT_STREAMS)} places for an exchange; the pool hands it out and gives it back
 *       ({@link ConnectionPool}).</li>
 *   <li>An exchange stopped by its deadline resets its stream (RST_STREAM CANCEL); the connection goes on. One
 *       stopped in a socket write held up by back-pressure waits for that write to end while the server still gives
 *       credit back, rather than closing the connection under the other streams ({@link #aborted}).</li>
 *   <li>GOAWAY: no new streams; those above its last stream id fail as not processed (sent again elsewhere); the
 *       connection closes when its last stream ends. A connection error (a frame Jetty's parser refuses, a flow
 *       control violation) sends GOAWAY with its code and fails every stream with {@code protocol-error}.</li>
 * </ul>
 */
final class Http2Connection {
    /** Streams at once per connection unless {@code max_streams} says otherwise. */
    static final int DEFAULT_MAX_STREAMS = 100;
    /** What each stream may receive before it gives credit back (SETTINGS_INITIAL_WINDOW_SIZE we send). */
    static final int STREAM_WINDOW = 1 << 20;
    /** What the connection may receive before it gives credit back (its window, raised at start). */
    static final int CONNECTION_WINDOW = 16 << 20;
    /** Longest header block accepted (SETTINGS_MAX_HEADER_LIST_SIZE we send), as HTTP/1.1's longest head. */
    static final int MAX_HEADER_LIST = Connection.MAX_HEAD_BYTES;
    /** The RFC's default window and frame size, before the server's SETTINGS. */
    private static final int DEFAULT_WINDOW = 65_535;
    private static final int MAX_WINDOW = Integer.MAX_VALUE;
    private static final int MAX_STREAM_ID = Integer.MAX_VALUE;
    /**
     * Control frames (PING, SETTINGS, empty DATA, RST_STREAM of a stream not open...) a server may send per second
     * before it is cut off.
     */
    private static final int MAX_CONTROL_FRAMES_PER_SECOND = 1000;
    /**
     * Heap buffers, pooled, for the generator (and the parser's CONTINUATION fragments). The generator takes a
     * buffer of the encoder's max header list size for every HEADERS frame: unpooled and direct, as by default,
     * that was a zeroed 1 MiB (Go's SETTINGS_MAX_HEADER_LIST_SIZE) per request, most of a core at 1,500 calls a
     * second.
     */
    private static final ByteBufferPool BUFFERS = new org.eclipse.jetty.io.ArrayByteBufferPool();

    /** What the connection tells its pool. */
    interface Owner {
        /** The connection takes no new streams any more (GOAWAY, closed, ids used up). */
        void retired(Http2Connection c);

        /**
         * Places on {@code c} came back ({@link #unreserve}d) once the resets of their streams were written: the
         * server counts a stream until its reset, so the place is not handed on before.
         */
        void placesFreed(Http2Connection c);
    }

    private final String key;
    private final Socket socket;
    private final Socket raw;
    private final InputStream in;
    private final OutputStream out;
    private final Owner owner;
    private final int maxStreams;

    private final ReentrantLock writeLock = new ReentrantLock();
    /** Under {@link #writeLock}: its HPACK encoder has state. */
    private final Generator generator;
    private final RetainableByteBuffer.DynamicCapacity frames =
            new RetainableByteBuffer.DynamicCapacity(BUFFERS, false, -1);
    /** Under {@link #writeLock}. */
    private int nextStreamId = 1;
    /** When the write in progress began ({@link System#nanoTime()}), 0 while none is. */
    private volatile long writingSince;
    /**
     * Who writes now: the {@link Http2Stream} whose exchange's thread writes its request, {@link #CONTROL} for a
     * control frame (the reader's acknowledgements and credit, a reset), null while nobody writes. A socket write
     * cannot be stopped but by closing the socket: a stream's write blocked by a server that stopped reading is
     * ended after its exchange's deadline or cancel ({@link #aborted}), a control write by {@link #STALLED_WRITE}.
     */
    private volatile Object writing;
    /** Counts the writes: a check that a blocked write is still the same one later ({@link #closeIfStillWriting}). */
    private volatile long writeSeq;
    private static final Object CONTROL = new Object();
    /**
     * A control frame's write (a few bytes) blocked this long means a server that stopped reading: a stream that is
     * stopped, or waits for the write lock, then closes the connection ({@link #closeIfStalled}).
     */
    static final long STALLED_WRITE = TimeUnit.SECONDS.toNanos(1);
    /**
     * How long a stopped stream's write may go on before the connection may be closed under it, and how often the
     * watcher looks again after that ({@link #aborted}). A write held up by TCP back-pressure need not end within
     * it: Linux wakes a blocked send only once about half of the send buffer (autotuned up to 4 MiB) has drained,
     * so against a server reading 6-8 MB/s a blocked write lasts about 200 ms. So past the grace the connection is
     * closed only when the server also sent no WINDOW_UPDATE for {@link #STOPPED_WRITE_CREDIT_SILENCE}.
     */
    static final long STOPPED_WRITE_GRACE = Math.min(TimeUnit.MILLISECONDS.toNanos(100), STALLED_WRITE);
    /**
     * A server that reads what we send gives credit back as it consumes it (WINDOW_UPDATE, of the connection or of a
     * stream, in steps of a fraction of its window); none for this long while a stopped stream's write stays blocked
     * means it stopped reading, and the connection closes. 250 ms: a server reading at 1 MB/s and crediting every
     * 256 KiB keeps the connection; one that stopped reading has it closed at most this long after its last credit
     * (and never before {@link #STOPPED_WRITE_GRACE}). Only WINDOW_UPDATE counts: it is the frame that says our
     * bytes were consumed; a server that reads but never gives credit (windows wide enough for the whole upload)
     * shows nothing, and has the connection closed after the grace as before.
     */
    static final long STOPPED_WRITE_CREDIT_SILENCE = TimeUnit.MILLISECONDS.toNanos(250);
    /**
     * However much credit keeps coming, a stopped stream's write still blocked this long after the stop closes the
     * connection: a server that sends WINDOW_UPDATE without reading must not hold the stopped call's thread (and the
     * write lock) for ever. 2 s: a blocked write against a server reading 1 MB/s with Linux's largest default send
     * buffer (4 MiB) ends within it. The stopped call itself ends when its write does, so this is also the most it
     * may end past its deadline or cancel.
     */
    static final long STOPPED_WRITE_CAP = TimeUnit.SECONDS.toNanos(2);
    /** When the reader last read a WINDOW_UPDATE, of any stream ({@link System#nanoTime()}): the server reads. */
    private volatile long creditReadAt = System.nanoTime() - STOPPED_WRITE_CREDIT_SILENCE - 1;
    /** How often a stream waiting for the write lock looks at whether its exchange was stopped meanwhile. */
    private static final long LOCK_RECHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    /**
     * Streams to reset (RST_STREAM CANCEL) that their exchanges gave back: written by a virtual thread of the
     * connection ({@link #writeResets}), not by the exchange's, whose call must end at its deadline even when a
     * write blocks (and whose socket write would close the shared connection if its thread was interrupted).
     */
    private final java.util.concurrent.ConcurrentLinkedQueue<Integer> resets =
            new java.util.concurrent.ConcurrentLinkedQueue<>();
    private final java.util.concurrent.atomic.AtomicBoolean resetting = new java.util.concurrent.atomic.AtomicBoolean();

    private final Parser parser;
    private final ConcurrentHashMap<Integer, Http2Stream> streams = new ConcurrentHashMap<>();
    /** The highest stream id sent: a frame for an id above it, or an even one, is a protocol error. */
    private volatile int lastStarted;
    private final AtomicInteger reserved = new AtomicInteger();
    private volatile int peerMaxStreams = Integer.MAX_VALUE;
    private volatile boolean goingAway;
    private volatile boolean closed;
    private volatile String closeReason;
    /** What a connection error failed its streams with: thrown by {@link #open} when it came before the start. */
    private volatile Connection.ProtocolException protocolError;
    /** When the last stream left ({@link System#nanoTime()}); for the pool's idle timeout. */
    volatile long idleSince = System.nanoTime();
    private final java.util.concurrent.CountDownLatch settingsReceived = new java.util.concurrent.CountDownLatch(1);

    /** Flow control of what we send: the connection's window, the streams' ({@link Http2Stream#sendWindow}). */
    private final ReentrantLock windowLock = new ReentrantLock();
    private final Condition windowGrew = windowLock.newCondition();
    private long sendWindow = DEFAULT_WINDOW;
    private int peerInitialWindow = DEFAULT_WINDOW;

    /** Reader only: what the server may still send on the connection, and the credit not yet given back. */
    private long receiveWindow = CONNECTION_WINDOW;
    private int unacknowledged;
    /** Reader only: WINDOW_UPDATE frames to send once the bytes at hand are parsed. */
    private final List<WindowUpdateFrame> credit = new ArrayList<>();
    private final Thread reader;

    private Http2Connection(String key, Socket socket, Socket raw, Owner owner, int maxStreams) throws IOException {
        this.key = key;
        this.socket = socket;
        this.raw = raw;
        this.in = socket.getInputStream();
        this.out = socket.getOutputStream();
        this.owner = owner;
        this.maxStreams = maxStreams;
        this.generator = new Generator(BUFFERS, false, 0);
        this.generator.getHpackEncoder().setMaxHeaderListSize(MAX_HEADER_LIST);
        WindowRateControl window = new WindowRateControl(MAX_CONTROL_FRAMES_PER_SECOND, Duration.ofSeconds(1));
        // The first RST_STREAM of a stream this client opened and still waits on is not counted: there can be no
        // more of those than streams the client opens, and a server that sheds load with REFUSED_STREAM may send
        // thousands a second on a busy connection; counted, they cut it off and failed every stream on it. A
        // reset of a stream already closed (a repeat, or one for a stream long answered) counts (parsed before
        // onReset forgets the stream, so the first one still finds it in the map).
        this.parser = new Parser(BUFFERS, MAX_HEADER_LIST, event -> (event instanceof ResetFrame r
                && streams.containsKey(r.getStreamId())) || window.onEvent(event));
        this.parser.getHpackDecoder().setMaxHeaderListSize(MAX_HEADER_LIST);
        this.parser.init(new Frames());
        this.reader = Thread.ofVirtual().name("weft-h2-" + key).unstarted(this::readLoop);
    }

    /**
     * Starts HTTP/2 on a TLS socket whose ALPN chose {@code h2}: sends the preface and our SETTINGS, starts the
     * reader and waits for the server's SETTINGS, within {@code timeoutNanos}.
     */
    static Http2Connection open(String key, Socket socket, Socket raw, Owner owner, int maxStreams,
                                long timeoutNanos) throws IOException {
        Http2Connection c = new Http2Connection(key, socket, raw, owner, maxStreams);
        try {
            c.writeLock.lock();
            try {
                c.generator.control(c.frames, new PrefaceFrame());
                Map<Integer, Integer> settings = new HashMap<>();
                settings.put(SettingsFrame.ENABLE_PUSH, 0);
                settings.put(SettingsFrame.MAX_CONCURRENT_STREAMS, 0); // a client takes no streams the server opens
                settings.put(SettingsFrame.INITIAL_WINDOW_SIZE, STREAM_WINDOW);
                settings.put(SettingsFrame.MAX_HEADER_LIST_SIZE, MAX_HEADER_LIST);
                c.generator.control(c.frames, new SettingsFrame(settings, false));
                c.generator.control(c.frames, new WindowUpdateFrame(0, CONNECTION_WINDOW - DEFAULT_WINDOW));
                c.flush(CONTROL);
            } finally {
                c.writeLock.unlock();
            }
            c.reader.start();
            if (!c.settingsReceived.await(Math.max(1, timeoutNanos), TimeUnit.NANOSECONDS)) {
                throw new java.net.SocketTimeoutException("no HTTP/2 SETTINGS from " + key + " within the connect timeout");
            }
            if (c.closed) {
                if (c.protocolError != null) { // the server broke the protocol: protocol-error, not io-error
                    throw c.protocolError;
                }
                throw new IOException("HTTP/2 connection to " + key + " failed at its start: " + c.closeReason);
            }
            if (c.capacity() < 1) { // else the pool would open connection after connection for its waiting calls
                c.close("the server allows no streams (SETTINGS_MAX_CONCURRENT_STREAMS 0)");
                throw new IOException(key + " allows no HTTP/2 streams (SETTINGS_MAX_CONCURRENT_STREAMS 0)");
            }
            return c;
        } catch (HpackException e) {
            c.close("could not start: " + e.getMessage());
            throw new IOException(e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            c.close("interrupted while starting");
            throw new java.io.InterruptedIOException("interrupted while starting HTTP/2 with " + key);
        } catch (IOException | RuntimeException e) {
            c.close("could not start: " + e.getMessage());
            throw e;
        }
    }

    /** Streams started (HEADERS sent or being sent) that have not ended. */
    int streamsStarted() {
        return streams.size();
    }

    /** When the write in progress began ({@link System#nanoTime()}), 0 while none is. */
    long writingSince() {
        return writingSince;
    }

    /** Streams this connection takes at once now: ours and the server's limit, whichever is lower. */
    int capacity() {
        return Math.min(maxStreams, peerMaxStreams);
    }

    /** Places taken by exchanges now (streams running, or handed out and not yet started). */
    int reserved() {
        return reserved.get();
    }

    /** Whether it takes new streams. */
    boolean usable() {
        return !closed && !goingAway;
    }

    boolean isClosed() {
        return closed;
    }

    /** A place for one exchange, or null when the connection is full or takes no new streams. */
    Http2Stream reserve() {
        while (usable()) {
            int n = reserved.get();
            if (n >= capacity()) {
                return null;
            }
            if (reserved.compareAndSet(n, n + 1)) {
                return new Http2Stream(this);
            }
        }
        return null;
    }

    /**
     * Takes no new streams when none has been running for {@code idleNanos}: closed at once, or by the last
     * stream that raced in. Whether it is retired.
     */
    boolean retireIfIdle(long idleNanos) {
        if (!usable()) {
            return true;
        }
        if (reserved.get() != 0 || System.nanoTime() - idleSince <= idleNanos) {
            return false;
        }
        goingAway = true;
        owner.retired(this);
        if (reserved.get() == 0) {
            close("no stream for longer than idle_timeout");
        }
        return true;
    }

    /** Gives back a place that {@link #reserve()} took; closes a connection going away once it has none left. */
    void unreserve() {
        if (reserved.decrementAndGet() == 0) {
            idleSince = System.nanoTime();
            if (goingAway && !closed) {
                close("went away and its last stream ended");
            }
        }
    }

    /** A new stream object for a place the caller keeps (a place handed from one exchange to the next). */
    Http2Stream handOn() {
        return new Http2Stream(this);
    }

    // ---- writing -------------------------------------------------------------------------------------------

    /** Sends {@code s}'s HEADERS (and its body as DATA): called once, by the exchange's thread. */
    void start(Http2Stream s, MetaData.Request request, byte[] body) throws IOException {
        start(s, request, body, false);
    }

    /** As {@link #start(Http2Stream, MetaData.Request, byte[])}; {@code more}: the body follows by {@link #sendData}. */
    void start(Http2Stream s, MetaData.Request request, byte[] body, boolean more) throws IOException {
        boolean endStream = !more && (body == null || body.length == 0);
        lockWrites(s);
        try {
            if (closed || goingAway) {
                throw new Http2Stream.NotProcessedException("the HTTP/2 connection to " + key
                        + (closed ? " closed (" + closeReason + ")" : " is going away") + " before the request was sent");
            }
            if (s.isAborted()) {
                throw new IOException("the exchange was stopped before it was sent");
            }
            long listSize = headerListSize(request);
            int maxList = generator.getHpackEncoder().getMaxHeaderListSize();
            if (maxList > 0 && listSize > maxList) { // checked before the encoder, whose table a failure would change
                s.closedByPeer = true; // nothing was sent: nothing to reset
                throw new Http2Stream.HeadersTooLargeException("request not sent: its headers come to " + listSize
                        + " bytes as HTTP/2 counts them, over the limit of " + maxList + " for " + key);
            }
            int id = nextStreamId;
            nextStreamId += 2;
            boolean lastId = nextStreamId > MAX_STREAM_ID || nextStreamId < 0;
            if (lastId) {
                goingAway = true; // ids used up: this is the last stream of this connection
                owner.retired(this);
            }
            s.receiveWindow = STREAM_WINDOW;
            s.id = id;
            streams.put(id, s); // before its window is set: a SETTINGS that changes the windows meanwhile sees it
            lastStarted = id;
            windowLock.lock();
            try {
                s.sendWindow = peerInitialWindow;
            } finally {
                windowLock.unlock();
            }
            if (goingAway && !lastId || closed) {
                // a GOAWAY came since the check above: its reader may not have seen this stream in the map
                streams.remove(id);
                s.closedByPeer = true;
                throw new Http2Stream.NotProcessedException("the HTTP/2 connection to " + key
                        + " went away before the request was sent");
            }
            try {
                generator.control(frames, new HeadersFrame(id, request, null, endStream));
            } catch (HpackException e) {
                // The encoder may have changed its table for fields the server will never see: every later
                // header block on this connection would decode wrongly there. Nothing was sent of this one.
                frames.clear();
                streams.remove(id);
                s.closedByPeer = true;
                close("the HPACK encoder failed: " + e.getMessage());
                throw new Http2Stream.HeadersTooLargeException("request not sent: " + e.getMessage());
            }
            flush(s);
            if (endStream) {
                s.requestEnded = true;
            }
        } finally {
            writeLock.unlock();
        }
        if (!endStream && body != null && body.length > 0) {
            sendBody(s, body, !more);
        }
    }

    /**
     * A run of a streamed request body ({@link RequestStream}), and with {@code end} the body's end (an empty run then
     * sends an empty DATA frame that ends the stream).
     */
    void sendData(Http2Stream s, byte[] run, boolean end) throws IOException {
        if (run.length > 0) {
            sendBody(s, run, end);
            return;
        }
        if (!end) {
            return;
        }
        lockWrites(s);
        try {
            if (s.isAborted() || s.closedByPeer) {
                throw new IOException("the stream ended while sending the request body");
            }
            if (closed) {
                throw new Connection.ClosedException("the HTTP/2 connection to " + key + " closed while sending"
                        + " the request body (" + closeReason + ")", false);
            }
            generator.data(frames, new DataFrame(s.id, ByteBuffer.allocate(0), true), 0);
            flush(s, 0, 0);
            s.requestEnded = true;
        } finally {
            writeLock.unlock();
        }
    }

    /**
     * The body as DATA frames, each within the connection's and the stream's windows (waiting for credit); the last
     * ends the stream when {@code end}.
     */
    private void sendBody(Http2Stream s, byte[] body, boolean end) throws IOException {
        int off = 0;
        while (off < body.length) {
            int chunk;
            windowLock.lock();
            try {
                while (true) {
                    if (s.ended()) {
                        // The server answered in full before reading the whole body (RFC 9113 section 8.1): the
                        // rest is not sent, the answer stands, and the release resets the stream.
                        return;
                    }
                    if (closed) {
                        throw new Connection.ClosedException("the HTTP/2 connection to " + key + " closed while sending"
                                + " the request body (" + closeReason + ")", false);
                    }
                    if (s.isClosed()) {
                        throw new IOException("the stream ended while sending the request body");
                    }
                    long room = Math.min(sendWindow, s.sendWindow);
                    if (room > 0) {
                        chunk = (int) Math.min(Math.min(room, body.length - off), generator.getMaxFrameSize());
                        sendWindow -= chunk;
                        s.sendWindow -= chunk;
                        break;
                    }
                    windowGrew.await(100, TimeUnit.MILLISECONDS); // an abort sets a flag; look again soon
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new java.io.InterruptedIOException("interrupted while sending the request body");
            } finally {
                windowLock.unlock();
            }
            boolean last = end && off + chunk == body.length;
            try {
                lockWrites(s);
            } catch (IOException e) {
                giveBackCredit(s, chunk); // not sent: the windows stay as the server counts them
                throw e;
            }
            try {
                if (s.isAborted()) {
                    giveBackCredit(s, chunk);
                    throw new IOException("the stream ended while sending the request body");
                }
                if (closed) {
                    throw new Connection.ClosedException("the HTTP/2 connection to " + key + " closed while sending"
                            + " the request body (" + closeReason + ")", false);
                }
                generator.data(frames, new DataFrame(s.id, ByteBuffer.wrap(body, off, chunk), last), chunk);
                flush(s, chunk, 0);
                if (last) {
                    s.requestEnded = true;
                }
            } finally {
                writeLock.unlock();
            }
            off += chunk;
        }
    }

    private void giveBackCredit(Http2Stream s, int n) {
        windowLock.lock();
        try {
            sendWindow += n;
            s.sendWindow += n;
        } finally {
            windowLock.unlock();
        }
    }

    /**
     * The header list size of a request as RFC 9113 section 6.5.2 counts it (name, value and 32 per field), with
     * the whole URI standing for the pseudo-header fields: never less than what the encoder counts.
     */
    static long headerListSize(MetaData.Request request) {
        long size = 4 * (32 + ":authority".length()) + request.getMethod().length()
                + request.getHttpURI().toString().length();
        for (org.eclipse.jetty.http.HttpField f : request.getHttpFields()) {
            size += 32 + f.getName().length() + (f.getValue() == null ? 0 : f.getValue().length());
        }
        return size;
    }

    /**
     * Takes the write lock for {@code s}'s exchange, which leaves when it is stopped meanwhile (its deadline, a cancel):
     * a write blocked by a server that stopped reading holds the lock, and every stream of the connection waits.
     */
    private void lockWrites(Http2Stream s) throws IOException {
        if (Thread.currentThread().isInterrupted()) {
            // A virtual thread interrupted in a socket write has the JDK close the socket: every stream would fail.
            throw new java.io.InterruptedIOException("interrupted before writing on the HTTP/2 connection to " + key);
        }
        if (writeLock.tryLock()) {
            return;
        }
        try {
            while (!writeLock.tryLock(LOCK_RECHECK_NANOS, TimeUnit.NANOSECONDS)) {
                if (s.isAborted()) {
                    closeIfStalled();
                    throw new IOException("the exchange was stopped while it waited to write on the HTTP/2 connection"
                            + " to " + key);
                }
                closeIfStalled();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException("interrupted while waiting to write");
        }
    }

    /** Closes the connection when a control frame's write has blocked for {@link #STALLED_WRITE}. */
    private void closeIfStalled() {
        Object w = writing; // read before writingSince: a newer write's start only makes the wait look shorter
        long since = writingSince;
        if (w == CONTROL && since != 0 && System.nanoTime() - since > STALLED_WRITE) {
            close("a write blocked for over " + TimeUnit.NANOSECONDS.toMillis(STALLED_WRITE) + " ms: the server"
                    + " stopped reading");
        }
    }

    /**
     * Writes what the generator put in {@link #frames} (under {@link #writeLock}), for {@code by}: the stream whose
     * request it is, or {@link #CONTROL}.
     */
    private void flush(Object by) throws IOException {
        flush(by, -1, 0);
    }

    /**
     * As {@link #flush(Object)}. {@code dataCredit}: for a stream's DATA frame, its size (else -1): a stream stopped
     * just before it is not written, its credit given back. {@code watchNanos}: when positive, the connection closes
     * if this very write still runs after that long (a control write nobody else would look at).
     */
    private void flush(Object by, int dataCredit, long watchNanos) throws IOException {
        ByteBuffer b = frames.getByteBuffer();
        writingSince = Math.max(1, System.nanoTime());
        long seq = ++writeSeq; // under the write lock
        writing = by;
        if (watchNanos > 0) {
            closeIfStillWriting(by, seq, watchNanos, false);
        }
        try {
            if (by instanceof Http2Stream st && st.isAborted() && dataCredit >= 0) {
                // Stopped just now: its DATA frame is not written (nothing of it went out, so the connection's state
                // is as before), and its credit goes back. The connection stays open for its other streams.
                frames.clear();
                giveBackCredit(st, dataCredit);
                throw new Http2Stream.StoppedException("the stream was stopped while sending the request body");
            }
            if (by instanceof Http2Stream st && st.isAborted()) {
                // Stopped just now, and its abort may have looked before this write was marked as its own: were it to
                // block, nothing would end it. Its frames are encoded (HPACK's table moved): the connection closes.
                close("an exchange was stopped as it wrote");
                throw new java.net.SocketException("the exchange was stopped as it wrote");
            }
            if (b.hasArray()) {
                out.write(b.array(), b.arrayOffset() + b.position(), b.remaining());
            } else {
                byte[] copy = new byte[b.remaining()];
                b.get(copy);
                out.write(copy);
            }
            out.flush();
        } catch (Http2Stream.StoppedException e) {
            throw e;
        } catch (IOException e) {
            close("write failed: " + e.getMessage());
            throw new Connection.ClosedException("HTTP/2 connection to " + key + " lost while writing: " + e.getMessage(),
                    false);
        } finally {
            writing = null;
            writingSince = 0;
            frames.clear();
        }
    }

    /** A streaming exchange took {@code n} bytes of {@code s}'s answer: the server may send that many more. */
    void streamCredit(Http2Stream s, int n) {
        control(new WindowUpdateFrame(s.id, n));
    }

    /** Writes one control frame if the connection is still open; failures close the connection. */
    private void control(Frame frame) {
        writeLock.lock();
        try {
            if (closed) {
                return;
            }
            generator.control(frames, frame);
            flush(CONTROL);
        } catch (IOException | HpackException e) {
            frames.clear();
            close("write failed: " + e.getMessage());
        } finally {
            writeLock.unlock();
        }
    }

    /**
     * An exchange gives its stream back: a stream that did not end on both sides (stopped by its deadline, an
     * answer too large, a malformed one) is reset with CANCEL, so the server stops working on it. Whether its place
     * is free now; false when a reset was queued: the place comes back once it is written
     * ({@link Owner#placesFreed}), since the server counts the stream against its limit until then.
     */
    boolean finish(Http2Stream s) {
        int id = s.id;
        if (id == 0) {
            return true;
        }
        streams.remove(id);
        if (s.done() || closed) {
            return true;
        }
        resets.add(id);
        if (resetting.compareAndSet(false, true)) {
            Thread.ofVirtual().name("weft-h2-reset").start(this::writeResets);
        }
        return false;
    }

    /** Writes the queued resets, in one write, until none is left (one such thread per connection at a time). */
    private void writeResets() {
        do {
            int written = 0;
            // Bounded: a write that holds the lock blocked (a server that stopped reading) closes the connection after
            // STALLED_WRITE, and so does this thread's own write; were it to wait for ever, the places its resets
            // hold would never come back.
            boolean locked = false;
            try {
                while (!(locked = writeLock.tryLock(LOCK_RECHECK_NANOS, TimeUnit.NANOSECONDS)) && !closed) {
                    closeIfStalled(); // a stream's blocked write ends at its exchange's deadline (aborted)
                }
                Integer id;
                while ((id = resets.poll()) != null) {
                    written++;
                    if (!closed && locked) {
                        generator.control(frames, new ResetFrame(id, ErrorCode.CANCEL_STREAM_ERROR.code));
                    }
                }
                if (written > 0 && !closed && locked) {
                    flush(CONTROL, -1, STALLED_WRITE);
                }
            } catch (IOException | HpackException e) {
                frames.clear();
                close("write failed: " + e.getMessage());
            } catch (InterruptedException e) {
                close("the thread writing its resets was interrupted");
            } finally {
                if (locked) {
                    writeLock.unlock();
                }
                resetting.set(false);
                for (int i = 0; i < written; i++) {
                    unreserve();
                }
                if (written > 0) {
                    owner.placesFreed(this);
                }
            }
            // a reset queued after the poll above, whose exchange saw this thread still running, is written here
        } while (!resets.isEmpty() && resetting.compareAndSet(false, true));
    }

    /**
     * An exchange was stopped from another thread. A stream blocked in its own write can be freed only by closing the
     * socket: the connection closes if the write still runs after {@link #STOPPED_WRITE_GRACE} and the server has
     * stopped reading (no WINDOW_UPDATE for {@link #STOPPED_WRITE_CREDIT_SILENCE}), or after
     * {@link #STOPPED_WRITE_CAP} whatever it sends. A stream waiting for the write lock leaves by itself
     * ({@link #lockWrites}); a control write blocked for {@link #STALLED_WRITE} closes the connection too.
     */
    void aborted(Http2Stream s) {
        wakeSenders();
        long seq = writeSeq; // read before writing: a later write by s sees its abort and is not written
        if (writing == s && writingSince != 0) {
            // A deadline or a hedge's cancel landing in a write held up by a server that reads, slowly, must not fail
            // every other stream of the connection: that write ends by itself, and the stream writes no more.
            closeIfStillWriting(s, seq, STOPPED_WRITE_GRACE, true);
            return;
        }
        closeIfStalled();
    }

    /**
     * After {@code grace}, closes the connection if write {@code seq} by {@code by} still runs (on its own thread).
     * {@code whileCredited}: instead, looks again every {@code grace} while the server gave credit within
     * {@link #STOPPED_WRITE_CREDIT_SILENCE}, up to {@link #STOPPED_WRITE_CAP}.
     */
    private void closeIfStillWriting(Object by, long seq, long grace, boolean whileCredited) {
        long from = System.nanoTime();
        Thread.ofVirtual().name("weft-h2-write-watch").start(() -> {
            long until = from + grace;
            while (true) {
                long left;
                while ((left = until - System.nanoTime()) > 0 && writeSeq == seq && writing == by && !closed) {
                    java.util.concurrent.locks.LockSupport.parkNanos(this, left);
                }
                if (writeSeq != seq || writing != by || writingSince == 0 || closed) {
                    return;
                }
                long now = System.nanoTime();
                long blocked = TimeUnit.NANOSECONDS.toMillis(now - from);
                if (!whileCredited) {
                    close("a write blocked for over " + blocked + " ms: the server stopped reading");
                    return;
                }
                if (now - from >= STOPPED_WRITE_CAP) {
                    close("the exchange writing on it was stopped and its write was still blocked " + blocked
                            + " ms later, though the server gave credit: it reads too slowly, or credits without"
                            + " reading");
                    return;
                }
                if (now - creditReadAt > STOPPED_WRITE_CREDIT_SILENCE) {
                    close("the exchange writing on it was stopped with its write blocked for " + blocked + " ms since,"
                            + " and no WINDOW_UPDATE from the server for over "
                            + TimeUnit.NANOSECONDS.toMillis(STOPPED_WRITE_CREDIT_SILENCE) + " ms: the server stopped"
                            + " reading");
                    return;
                }
                until = Math.min(now + grace, from + STOPPED_WRITE_CAP); // it reads: look again
            }
        });
    }

    /** Closes the connection: every stream still open fails, and the pool forgets it. */
    void close(String reason) {
        if (closed) {
            return;
        }
        closeReason = reason;
        closed = true;
        owner.retired(this);
        try {
            raw.close();
        } catch (IOException ignored) {
            // closing is all we wanted
        }
        settingsReceived.countDown();
        String message = "the HTTP/2 connection to " + key + " closed: " + reason;
        for (Http2Stream s : streams.values()) {
            // As an HTTP/1.1 keep-alive connection lost under a call: a stream that had no answer yet received
            // nothing, so an idempotent request goes once more on a fresh connection (Exchange), and a backend
            // restart does not count against the breaker for every stream in flight.
            s.fail(new Connection.ClosedException(message, !s.answered()));
        }
        wakeSenders();
    }

    /** Sends GOAWAY with {@code error} and closes: the server broke the protocol. */
    private void connectionError(int error, String reason) {
        if (closed) {
            return;
        }
        control(new GoAwayFrame(lastStarted, error, reason.getBytes(StandardCharsets.UTF_8)));
        String message = "HTTP/2 connection error from " + key + ": " + reason + " (" + errorName(error) + ")";
        Connection.ProtocolException e = new Connection.ProtocolException(message);
        protocolError = e;
        for (Http2Stream s : streams.values()) {
            s.fail(e);
        }
        close(message);
    }

    /** Resets one stream with {@code error}: the server broke the protocol on it. */
    private void streamError(Http2Stream s, int error, String reason) {
        streams.remove(s.id);
        s.closedByPeer = true; // reset here: nothing more to reset on release
        control(new ResetFrame(s.id, error));
        s.fail(new Connection.ProtocolException("HTTP/2 stream error from " + key + ": " + reason));
    }

    private static String errorName(int code) {
        ErrorCode c = ErrorCode.from(code);
        return c == null ? "error " + code : c.name();
    }

    // ---- reading -------------------------------------------------------------------------------------------

    /** HTTP/2 reader threads running now in this JVM ({@link Transport#http2ReadersRunning()}). */
    private static final java.util.concurrent.atomic.AtomicInteger READERS = new java.util.concurrent.atomic.AtomicInteger();

    static int readersRunning() {
        return READERS.get();
    }

    private void readLoop() {
        READERS.incrementAndGet();
        try {
            readFrames();
        } finally {
            READERS.decrementAndGet();
        }
    }

    private void readFrames() {
        byte[] buf = new byte[32 * 1024];
        ByteBuffer bb = ByteBuffer.wrap(buf);
        try {
            while (!closed) {
                int n = in.read(buf);
                if (n < 0) {
                    throw new EOFException("the server closed the connection");
                }
                bb.limit(n).position(0);
                if (settingsReceived.getCount() > 0 && startsHttp1(buf, n)) {
                    // an HTTP/1.x server answering our preface (http2: h2c to a server without h2c): say so, rather
                    // than the FRAME_SIZE_ERROR its status line would read as
                    connectionError(ErrorCode.PROTOCOL_ERROR.code, "the server answered in HTTP/1.x ("
                            + statusLine(buf, n) + "), not HTTP/2: it does not speak HTTP/2 with prior knowledge"
                            + " (http2: h2c)");
                    return;
                }
                while (bb.hasRemaining() && !closed) {
                    parser.parse(bb);
                }
                giveCredit();
            }
        } catch (IOException | RuntimeException e) {
            if (!closed) {
                String why = e instanceof EOFException ? e.getMessage()
                        : "read failed: " + (e.getMessage() == null ? e.toString() : e.getMessage());
                close(why);
            }
        }
    }

    private static boolean startsHttp1(byte[] b, int n) {
        return n >= 5 && b[0] == 'H' && b[1] == 'T' && b[2] == 'T' && b[3] == 'P' && b[4] == '/';
    }

    /** The first line of what an HTTP/1.x server sent, printable, at most 64 characters. */
    private static String statusLine(byte[] b, int n) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < n && i < 64 && b[i] != '\r' && b[i] != '\n'; i++) {
            sb.append(b[i] >= 0x20 && b[i] < 0x7f ? (char) b[i] : '?');
        }
        return sb.toString();
    }

    /** Sends the WINDOW_UPDATE frames the bytes just parsed earned (one write for all of them). */
    private void giveCredit() {
        if (unacknowledged >= CONNECTION_WINDOW / 2) {
            credit.add(new WindowUpdateFrame(0, unacknowledged));
            receiveWindow += unacknowledged;
            unacknowledged = 0;
        }
        if (credit.isEmpty()) {
            return;
        }
        writeLock.lock();
        try {
            if (!closed) {
                for (WindowUpdateFrame f : credit) {
                    generator.control(frames, f);
                }
                flush(CONTROL);
            }
        } catch (IOException | HpackException e) {
            frames.clear();
            close("write failed: " + e.getMessage());
        } finally {
            writeLock.unlock();
            credit.clear();
        }
    }

    /** Wakes the exchanges waiting for send credit in {@link #sendBody}, to look again at their stream. */
    private void wakeSenders() {
        windowLock.lock();
        try {
            windowGrew.signalAll();
        } finally {
            windowLock.unlock();
        }
    }

    /**
     * The server's side of {@code s} ended (reader): it leaves the map; an exchange still sending its body is woken,
     * since no credit for the stream will be counted any more.
     */
    private void endedHere(Http2Stream s) {
        streams.remove(s.id);
        if (!s.requestEnded) {
            wakeSenders();
        }
    }

    /** The stream {@code id} names, null when it is gone; a protocol error when no such stream was ever opened. */
    private Http2Stream stream(int id, String frame) {
        Http2Stream s = streams.get(id);
        if (s == null && ((id & 1) == 0 || id > lastStarted)) {
            connectionError(ErrorCode.PROTOCOL_ERROR.code, frame + " for stream " + id + ", which this client never"
                    + " opened");
        }
        return s;
    }

    /** The parser's events, on the reader thread. */
    private final class Frames implements Parser.Listener {
        private boolean first = true;

        /** The server's preface must be a SETTINGS frame (RFC 9113 section 3.4). */
        private boolean preface(String frame) {
            if (first) {
                first = false;
                if (!frame.equals("SETTINGS")) {
                    connectionError(ErrorCode.PROTOCOL_ERROR.code, "the server's first frame was " + frame
                            + ", not SETTINGS");
                    return false;
                }
            }
            return true;
        }

        @Override
        public void onData(DataFrame frame) {
            if (!preface("DATA")) {
                return;
            }
            int n = frame.flowControlLength();
            receiveWindow -= n;
            if (receiveWindow < 0) {
                connectionError(ErrorCode.FLOW_CONTROL_ERROR.code, "DATA beyond the connection's window");
                return;
            }
            unacknowledged += n;
            Http2Stream s = stream(frame.getStreamId(), "DATA");
            if (s == null) {
                return; // a stream reset or ended here: its bytes only give the connection's credit back
            }
            s.receiveWindow += (int) s.takeCreditSent(); // what a streaming exchange gave back meanwhile
            s.receiveWindow -= n;
            if (s.receiveWindow < 0) {
                streamError(s, ErrorCode.FLOW_CONTROL_ERROR.code, "DATA beyond the stream's window");
                return;
            }
            int payload = frame.getByteBuffer().remaining(); // before onData takes it
            String bad = s.onData(frame.getByteBuffer(), frame.isEndStream());
            if (bad != null) {
                streamError(s, ErrorCode.PROTOCOL_ERROR.code, bad);
                return;
            }
            if (s.ended()) {
                endedHere(s);
                return;
            }
            if (s.lastDataStreamed) {
                // its payload's credit is given as the exchange takes the bytes (Http2Stream.takeChunk); its padding,
                // which nobody takes, now
                n -= payload;
                if (n == 0) {
                    return;
                }
            }
            s.unacknowledged += n;
            if (s.unacknowledged >= STREAM_WINDOW / 2) {
                credit.add(new WindowUpdateFrame(s.id, s.unacknowledged));
                s.receiveWindow += s.unacknowledged;
                s.unacknowledged = 0;
            }
        }

        @Override
        public void onHeaders(HeadersFrame frame) {
            if (!preface("HEADERS")) {
                return;
            }
            Http2Stream s = stream(frame.getStreamId(), "HEADERS");
            if (s == null) {
                return;
            }
            String bad = s.onHeaders(frame.getMetaData(), frame.isEndStream());
            if (bad != null) {
                streamError(s, ErrorCode.PROTOCOL_ERROR.code, bad);
            } else if (s.ended()) {
                endedHere(s);
            }
        }

        @Override
        public void onReset(ResetFrame frame) {
            if (!preface("RST_STREAM")) {
                return;
            }
            Http2Stream s = stream(frame.getStreamId(), "RST_STREAM");
            if (s == null) {
                return;
            }
            streams.remove(s.id);
            s.closedByPeer = true;
            if (frame.getError() == ErrorCode.REFUSED_STREAM_ERROR.code) {
                s.fail(new Http2Stream.NotProcessedException(key + " refused the stream (REFUSED_STREAM) before"
                        + " processing it"));
            } else {
                s.fail(new Connection.ClosedException(key + " reset the stream (" + errorName(frame.getError()) + ")",
                        false));
            }
        }

        @Override
        public void onSettings(SettingsFrame frame) {
            if (!preface("SETTINGS")) {
                return;
            }
            if (frame.isReply()) {
                return;
            }
            for (Map.Entry<Integer, Integer> e : frame.getSettings().entrySet()) {
                int v = e.getValue();
                switch (e.getKey()) {
                    case SettingsFrame.MAX_CONCURRENT_STREAMS -> peerMaxStreams = v;
                    case SettingsFrame.INITIAL_WINDOW_SIZE -> {
                        boolean overflow = false;
                        windowLock.lock(); // never the write lock inside it: writers take the two the other way
                        try {
                            int delta = v - peerInitialWindow;
                            peerInitialWindow = v;
                            for (Http2Stream s : streams.values()) {
                                long w = s.sendWindow + delta;
                                overflow |= w > MAX_WINDOW;
                                s.sendWindow = w;
                            }
                            windowGrew.signalAll();
                        } finally {
                            windowLock.unlock();
                        }
                        if (overflow) {
                            connectionError(ErrorCode.FLOW_CONTROL_ERROR.code,
                                    "SETTINGS_INITIAL_WINDOW_SIZE took a stream's window past 2^31-1");
                            return;
                        }
                    }
                    case SettingsFrame.MAX_FRAME_SIZE -> {
                        writeLock.lock();
                        try {
                            generator.setMaxFrameSize(v);
                        } finally {
                            writeLock.unlock();
                        }
                    }
                    case SettingsFrame.HEADER_TABLE_SIZE -> {
                        writeLock.lock();
                        try { // the encoder may use up to what the server's decoder keeps; at most 4 KiB
                            generator.getHpackEncoder().setMaxTableCapacity(v);
                            generator.getHpackEncoder().setTableCapacity(Math.min(v, 4096));
                        } finally {
                            writeLock.unlock();
                        }
                    }
                    case SettingsFrame.MAX_HEADER_LIST_SIZE -> {
                        writeLock.lock();
                        try {
                            // what we may send: the server's limit, at most ours (the generator sizes a buffer by it)
                            generator.getHpackEncoder().setMaxHeaderListSize(Math.min(v, MAX_HEADER_LIST));
                        } finally {
                            writeLock.unlock();
                        }
                    }
                    case SettingsFrame.ENABLE_PUSH -> {
                        if (v != 0) { // RFC 9113 section 6.5.2: a server MUST NOT set it to 1
                            connectionError(ErrorCode.PROTOCOL_ERROR.code, "SETTINGS_ENABLE_PUSH " + v
                                    + " from a server");
                            return;
                        }
                    }
                    default -> {
                        // ENABLE_CONNECT_PROTOCOL, unknown ones: nothing for a client
                    }
                }
            }
            control(new SettingsFrame(Map.of(), true));
            settingsReceived.countDown();
        }

        @Override
        public void onPushPromise(PushPromiseFrame frame) {
            connectionError(ErrorCode.PROTOCOL_ERROR.code, "PUSH_PROMISE, which this client's SETTINGS refused");
        }

        @Override
        public void onPing(PingFrame frame) {
            if (!preface("PING")) {
                return;
            }
            if (!frame.isReply()) {
                control(new PingFrame(frame.getPayload(), true));
            }
        }

        @Override
        public void onGoAway(GoAwayFrame frame) {
            if (!preface("GOAWAY")) {
                return;
            }
            goingAway = true;
            owner.retired(Http2Connection.this);
            int last = frame.getLastStreamId();
            for (Http2Stream s : streams.values()) {
                if (s.id > last) {
                    streams.remove(s.id);
                    s.closedByPeer = true;
                    s.fail(new Http2Stream.NotProcessedException(key + " went away (GOAWAY "
                            + errorName(frame.getError()) + ") before processing the stream"));
                }
            }
            if (reserved.get() == 0) {
                close("went away (GOAWAY " + errorName(frame.getError()) + ")");
            }
        }

        @Override
        public void onWindowUpdate(WindowUpdateFrame frame) {
            if (!preface("WINDOW_UPDATE")) {
                return;
            }
            creditReadAt = System.nanoTime(); // the server reads (aborted: a stopped stream's blocked write)
            int id = frame.getStreamId();
            int delta = frame.getWindowDelta();
            Http2Stream s = id == 0 ? null : stream(id, "WINDOW_UPDATE");
            if (id != 0 && s == null) {
                return;
            }
            boolean overflow;
            windowLock.lock(); // never the write lock inside it (see onSettings)
            try {
                if (id == 0) {
                    overflow = sendWindow + delta > MAX_WINDOW;
                    if (!overflow) {
                        sendWindow += delta;
                    }
                } else {
                    overflow = s.sendWindow + delta > MAX_WINDOW;
                    if (!overflow) {
                        s.sendWindow += delta;
                    }
                }
                windowGrew.signalAll();
            } finally {
                windowLock.unlock();
            }
            if (overflow && id == 0) {
                connectionError(ErrorCode.FLOW_CONTROL_ERROR.code, "WINDOW_UPDATE took the connection's window past"
                        + " 2^31-1");
            } else if (overflow) {
                streamError(s, ErrorCode.FLOW_CONTROL_ERROR.code, "WINDOW_UPDATE took the stream's window past 2^31-1");
            }
        }

        @Override
        public void onStreamFailure(int streamId, int error, String reason) {
            Http2Stream s = streams.get(streamId);
            if (s != null) {
                streamError(s, error, reason);
            } else {
                control(new ResetFrame(streamId, error));
            }
        }

        @Override
        public void onConnectionFailure(int error, String reason) {
            connectionError(error, reason);
        }
    }
}
