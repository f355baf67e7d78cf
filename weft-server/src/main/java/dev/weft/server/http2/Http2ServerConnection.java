package dev.weft.server.http2;

import dev.weft.http.h2.Http2Error;
import dev.weft.http.h2.Http2Exception;
import dev.weft.http.h2.Http2Frame;
import dev.weft.http.h2.Http2FrameReader;
import dev.weft.http.h2.Http2FrameWriter;
import dev.weft.server.ConnectionListener;
import dev.weft.server.ServerRequest;
import dev.weft.server.ServerResponse;
import org.eclipse.jetty.http.MetaData;
import org.eclipse.jetty.http2.hpack.HpackDecoder;
import org.eclipse.jetty.http2.hpack.HpackEncoder;
import org.eclipse.jetty.http2.hpack.HpackException;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One HTTP/2 connection on the server (RFC 9113). The connection's virtual thread (the caller of {@link #serve})
 * reads every frame, decodes HPACK and keeps the flow-control windows; after a request's header block it starts a
 * virtual thread for the stream ({@link Http2ServerStream}), at most {@code max_concurrent_streams} at once counting
 * those still running after a reset (a stream over it gets REFUSED_STREAM). A stream's thread takes its body as the
 * connection hands it DATA (bounded by the stream's window), runs the handler and writes its answer through the
 * connection's one locked writer, which honours the peer's windows for at most {@code write_timeout}. RST_STREAM,
 * GOAWAY and a lost connection interrupt the streams' threads.
 *
 * <p>A peer that breaks the protocol gets GOAWAY with the RFC's error code; one that floods control frames past a
 * rate of {@link Http2Limits} gets GOAWAY ENHANCE_YOUR_CALM; either way the connection is closed and counted in
 * {@link Http2Metrics}.
 */
public final class Http2ServerConnection {
    private static final System.Logger LOG = System.getLogger("weft.server");
    /** RFC 9113's initial window and frame size, in force until the peer's SETTINGS say otherwise. */
    static final int DEFAULT_WINDOW = 65_535;
    static final int DEFAULT_FRAME_SIZE = 16_384;

    /** Runs one request to its answer (admission included); never throws. */
    @FunctionalInterface
    public interface Requests {
        ServerResponse handle(ServerRequest request);

        /** Whether {@code head}'s request is handed over before its body, which the handler reads as it comes. */
        default boolean streamsBody(dev.weft.http.RequestHead head) {
            return false;
        }
    }

    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;
    private final Http2FrameReader reader;
    private final Http2Limits limits;
    /** The server's body bounds: max_body_bytes, body_timeout, min_body_rate. */
    private final dev.weft.server.ServerLimits server;
    private final ConnectionListener.Activity activity;
    private final Http2Metrics metrics;
    private final Requests requests;
    private final InetSocketAddress remote;
    private final HpackDecoder decoder;
    private final HpackEncoder encoder = new HpackEncoder();
    /**
     * The largest header block (head or trailers) an answer may have, as RFC 9113 section 6.5.2 counts it (names and
     * values plus 32 bytes a field): what weft-client takes; lower when the client's SETTINGS_MAX_HEADER_LIST_SIZE is.
     */
    static final int MAX_ANSWER_HEADER_LIST = 64 * 1024;
    /** The client's SETTINGS_MAX_HEADER_LIST_SIZE (unlimited until it sends one): read by every answer, unlocked. */
    private volatile long peerMaxHeaderList = Long.MAX_VALUE;

    /** Guards every write, the send windows, the peer's settings and {@link #openStreams}. */
    final ReentrantLock writeLock = new ReentrantLock();
    /** Signalled when a send window opens, a stream is reset or the connection ends. */
    final Condition windowOpened = writeLock.newCondition();
    long connectionSendWindow = DEFAULT_WINDOW;
    int peerInitialWindow = DEFAULT_WINDOW;
    int peerMaxFrameSize = DEFAULT_FRAME_SIZE;
    private int openStreams;

    /** Streams whose thread has not ended, by id (the connection's thread adds, a stream's thread removes). */
    final Map<Integer, Http2ServerStream> streams = new ConcurrentHashMap<>();
    /**
     * What {@code max_concurrent_streams} counts: streams whose answer has not been sent in full, including those
     * reset whose thread has not ended yet (a rapid reset cannot pile up threads). A stream gives its place back just
     * before its last frame goes out, so that a client that opens a new stream as soon as it read one's end is never
     * refused.
     */
    private final AtomicInteger running = new AtomicInteger();
    /** Connection window credits taken by streams and not yet given back by a WINDOW_UPDATE. */
    private final AtomicInteger connectionCredit = new AtomicInteger();
    /**
     * The clock of the time the peer could not send a full DATA frame on this connection (its window under one frame):
     * when that began (0: it can now) and the total of earlier spells. Guarded by {@link #windowClock}.
     */
    private long blockedSince;
    private long blockedTotal;
    private final ReentrantLock windowClock = new ReentrantLock();
    /** Request body bytes the peer may still send on the connection (the connection's thread spends, streams credit). */
    private final java.util.concurrent.atomic.AtomicLong connectionReceiveWindow = new java.util.concurrent.atomic.AtomicLong(DEFAULT_WINDOW);

    // only the connection's thread touches these
    /** The highest stream the client opened (read by a drain's GOAWAY on another thread). */
    private volatile int lastStreamId;
    /**
     * Whether the client acknowledged this side's SETTINGS: until then a window or an HPACK table smaller than RFC
     * 9113's initial ones is not yet in force (the client may still use the initial ones).
     */
    private boolean settingsAcked;
    /** Streams this side reset or answered early: frames still in flight on them are ignored (RFC 9113 section 5.1). */
    private final LinkedHashSet<Integer> resetHere = new LinkedHashSet<>();
    /** Streams the peer reset: a frame on one but PRIORITY is a stream error STREAM_CLOSED (RFC 9113 section 5.1). */
    private final LinkedHashSet<Integer> resetThere = new LinkedHashSet<>();
    /**
     * Stream ids the client skipped (open interval {@code (from, to)}): opening a higher one closed them unused (RFC
     * 9113 section 5.1.1), so HEADERS on one is an unexpected stream id, PROTOCOL_ERROR, where HEADERS on a stream
     * that was opened and closed is STREAM_CLOSED. The last {@value #SKIPPED_RANGES} such gaps only (clients do not
     * skip ids; one that does past this gets STREAM_CLOSED, a connection error all the same).
     */
    private final java.util.ArrayDeque<int[]> skipped = new java.util.ArrayDeque<>();
    private static final int SKIPPED_RANGES = 64;
    /** Streams whose thread ended before their request did (413, body timeout): moved into {@link #resetHere}. */
    private final java.util.concurrent.ConcurrentLinkedQueue<Integer> endedEarly = new java.util.concurrent.ConcurrentLinkedQueue<>();
    private int headerBlockStream;
    private Http2Frame.Headers headerBlockStart;
    private java.io.ByteArrayOutputStream headerBlock;
    private final Rate settingsRate;
    private final Rate pingRate;
    private final Rate resetRate;
    private final Rate emptyDataRate;
    private final Rate continuationRate;
    private final Rate priorityRate;
    private final Rate windowUpdateRate;
    /** Every WINDOW_UPDATE, whatever its increment: {@link #LARGE_WINDOW_UPDATES} times the small ones' bound. */
    private final Rate anyWindowUpdateRate;
    private final Rate unknownRate;

    /** Written under {@link #writeLock}: a drain's GOAWAY is only set once it is. */
    private volatile boolean goingAway;
    /** The server's SETTINGS went out (under {@link #writeLock}). */
    private boolean prefaceSent;
    /** A drain came before the server's SETTINGS went out (under {@link #writeLock}). */
    private boolean goAwayAfterPreface;
    /** The highest stream taken (started), under {@link #writeLock}: what a drain's GOAWAY names. */
    private volatile int acceptedStreamId;
    private volatile boolean closed;

    Http2ServerConnection(Socket socket, InputStream in, Http2Limits limits, dev.weft.server.ServerLimits server,
                          ConnectionListener.Activity activity, Http2Metrics metrics, Requests requests)
            throws IOException {
        this.socket = socket;
        this.in = new BufferedInputStream(in, 16 * 1024);
        this.out = new BufferedOutputStream(new TimedOutput(socket.getOutputStream()), DEFAULT_FRAME_SIZE + 9);
        this.reader = new Http2FrameReader(this.in);
        this.limits = limits;
        this.server = server;
        this.activity = activity;
        this.metrics = metrics;
        this.requests = requests;
        this.remote = (InetSocketAddress) socket.getRemoteSocketAddress();
        this.decoder = new HpackDecoder(limits.maxHeaderListSize(), System::nanoTime);
        // Jetty's default (4 KiB) would fail a larger block in encode(), after the stream's earlier frames went out,
        // and the failure closes the connection; Http2ServerStream checks each answer against answerHeaderLimit()
        // before writing any frame, so this bound is never the one that trips
        this.encoder.setMaxHeaderListSize(MAX_ANSWER_HEADER_LIST + 1024);
        this.decoder.setMaxTableCapacity(Math.max(limits.headerTableSize(), 4096));
        this.settingsRate = new Rate(limits.settingsPerSecond());
        this.pingRate = new Rate(limits.pingsPerSecond());
        this.resetRate = new Rate(limits.resetsPerSecond());
        this.emptyDataRate = new Rate(limits.emptyDataPerSecond());
        this.continuationRate = new Rate(limits.continuationsPerSecond());
        this.priorityRate = new Rate(limits.prioritiesPerSecond());
        this.windowUpdateRate = new Rate(limits.windowUpdatesPerSecond());
        this.anyWindowUpdateRate = new Rate((int) Math.min(Integer.MAX_VALUE,
                (long) limits.windowUpdatesPerSecond() * LARGE_WINDOW_UPDATES));
        this.unknownRate = new Rate(limits.unknownFramesPerSecond());
    }

    /**
     * An HTTP/1.1 request that switched the connection to h2c: the client's settings from its HTTP2-Settings field
     * (in force at once: the 101 acknowledges them), and the request itself, which becomes stream 1.
     */
    record Upgraded(List<Http2Frame.Setting> settings, dev.weft.http.RequestHead head, byte[] body) {
    }

    /**
     * Serves the connection until it ends, on the caller's thread; every stream's thread has been told to stop when
     * it returns (the caller then closes the socket).
     *
     * @param prefaceRead whether the client's connection preface has been read already (h2c with prior knowledge)
     * @param upgraded    the request that switched an HTTP/1.1 connection to h2c (after the 101), or null
     */
    void serve(boolean prefaceRead, Upgraded upgraded) throws IOException {
        metrics.onConnection();
        activity.idle(); // no head is being read: the idle timeout applies while no stream is open
        try {
            if (!prefaceRead && upgraded == null) {
                reader.readPreface();
            }
            writeLock.lock();
            try {
                List<Http2Frame.Setting> s = new ArrayList<>();
                s.add(new Http2Frame.Setting(Http2FrameReader.SETTINGS_MAX_CONCURRENT_STREAMS, limits.maxConcurrentStreams()));
                s.add(new Http2Frame.Setting(Http2FrameReader.SETTINGS_MAX_HEADER_LIST_SIZE, limits.maxHeaderListSize()));
                if (limits.headerTableSize() != 4096) {
                    s.add(new Http2Frame.Setting(Http2FrameReader.SETTINGS_HEADER_TABLE_SIZE, limits.headerTableSize()));
                }
                if (limits.initialWindowSize() != DEFAULT_WINDOW) {
                    s.add(new Http2Frame.Setting(Http2FrameReader.SETTINGS_INITIAL_WINDOW_SIZE, limits.initialWindowSize()));
                }
                if (limits.maxFrameSize() != DEFAULT_FRAME_SIZE) {
                    s.add(new Http2Frame.Setting(Http2FrameReader.SETTINGS_MAX_FRAME_SIZE, limits.maxFrameSize()));
                }
                Http2FrameWriter.settings(out, s);
                int more = limits.connectionWindowSize() - DEFAULT_WINDOW;
                if (more > 0) {
                    connectionReceiveWindow.addAndGet(more);
                    Http2FrameWriter.windowUpdate(out, 0, more);
                }
                flushLocked();
                prefaceSent = true;
            } finally {
                writeLock.unlock();
            }
            if (upgraded != null) {
                applySettings(upgraded.settings());
                startUpgradedStream(upgraded);
            }
            boolean drainCameFirst;
            writeLock.lock();
            try {
                drainCameFirst = goAwayAfterPreface;
            } finally {
                writeLock.unlock();
            }
            if (drainCameFirst) {
                goAway();
            }
            if (upgraded != null) {
                reader.readPreface();
            }
            Http2Frame first = reader.read(limits.maxFrameSize());
            if (first == null) {
                return;
            }
            if (!(first instanceof Http2Frame.Settings settings) || settings.ack()) {
                throw Http2Exception.connection(Http2Error.PROTOCOL_ERROR, "the connection preface's first frame is not SETTINGS");
            }
            onFrame(first);
            while (!closed) {
                Http2Frame f;
                try {
                    f = reader.read(limits.maxFrameSize());
                } catch (Http2Exception e) {
                    if (e.isConnectionError()) {
                        throw e;
                    }
                    resetStream(e.streamId(), e.error());
                    continue;
                }
                if (f == null) {
                    return; // the peer closed the connection
                }
                try {
                    onFrame(f);
                } catch (Http2Exception e) {
                    if (e.isConnectionError()) {
                        throw e;
                    }
                    resetStream(e.streamId(), e.error());
                }
            }
        } catch (Gone g) {
            // the peer went away while this side wrote
        } catch (Hostile h) {
            metrics.onHostile(h.why);
            fail(h.error, h.getMessage());
        } catch (Http2Exception e) {
            metrics.onHostile(e.error() == Http2Error.COMPRESSION_ERROR ? Http2Metrics.Hostile.HPACK
                    : Http2Metrics.Hostile.PROTOCOL);
            fail(e.error(), e.getMessage());
        } finally {
            end();
        }
    }

    /** A connection error: GOAWAY with its code, then the connection is closed once the peer had a chance to read it. */
    private void fail(Http2Error error, String message) {
        if (closed) {
            return;
        }
        try {
            writeLock.lock();
            try {
                Http2FrameWriter.goAway(out, lastStreamId, error, message);
                out.flush();
            } finally {
                writeLock.unlock();
            }
            dev.weft.server.HttpServer.lingeringClose(socket); // so that GOAWAY is not lost in a reset
        } catch (IOException | RuntimeException ignored) {
            // the peer is gone: nothing more to say
        }
    }

    /** The connection is over: every stream's thread is interrupted and every waiting writer woken. */
    private void end() {
        metrics.onConnectionEnded();
        closed = true;
        for (Http2ServerStream s : streams.values()) {
            s.cancel();
        }
        writeLock.lock();
        try {
            windowOpened.signalAll();
        } finally {
            writeLock.unlock();
        }
    }

    /**
     * Graceful close (a drain): GOAWAY NO_ERROR naming the last stream taken; streams open finish, new ones are
     * ignored, and the connection closes when the last one is done.
     */
    void goAway() {
        if (closed || goingAway) {
            return;
        }
        writeLock.lock();
        try {
            if (!prefaceSent) {
                goAwayAfterPreface = true; // the server's SETTINGS must go first: serve() sends it then
                return;
            }
            if (goingAway) {
                return;
            }
            // under the write lock, where startStream takes a stream: a stream is either named by this GOAWAY
            // (and answered) or not taken at all
            goingAway = true;
            Http2FrameWriter.goAway(out, acceptedStreamId, Http2Error.NO_ERROR, "server going away");
            flushLocked();
            if (openStreams == 0) {
                socket.shutdownOutput();
            }
        } catch (IOException | RuntimeException ignored) {
            // gone already
        } finally {
            writeLock.unlock();
        }
    }

    boolean isClosed() {
        return closed;
    }

    private void onFrame(Http2Frame f) throws Http2Exception {
        for (Integer early; (early = endedEarly.poll()) != null; ) {
            resetHere(early);
        }
        if (headerBlockStart != null && !(f instanceof Http2Frame.Continuation)) {
            throw Http2Exception.connection(Http2Error.PROTOCOL_ERROR,
                    "a " + frameName(f) + " frame inside the header block of stream " + headerBlockStream);
        }
        switch (f) {
            case Http2Frame.Settings s -> onSettings(s);
            case Http2Frame.Ping p -> {
                limit(pingRate, Http2Metrics.Hostile.PING_FLOOD, "PING");
                if (!p.ack()) {
                    write(o -> Http2FrameWriter.ping(o, true, p.payload()));
                }
            }
            case Http2Frame.Headers h -> onHeaders(h);
            case Http2Frame.Continuation c -> onContinuation(c);
            case Http2Frame.Data d -> onData(d);
            case Http2Frame.RstStream r -> onReset(r);
            case Http2Frame.WindowUpdate w -> onWindowUpdate(w);
            case Http2Frame.Priority p -> limit(priorityRate, Http2Metrics.Hostile.PRIORITY_FLOOD, "PRIORITY");
            case Http2Frame.GoAway g -> goingAwayByPeer(g);
            case Http2Frame.PushPromise p ->
                    throw Http2Exception.connection(Http2Error.PROTOCOL_ERROR, "a client may not send PUSH_PROMISE");
            case Http2Frame.Unknown u -> // extension frames are ignored (RFC 9113 section 5.5), within a rate
                    limit(unknownRate, Http2Metrics.Hostile.UNKNOWN_FRAME_FLOOD, "extension");
        }
    }

    private static String frameName(Http2Frame f) {
        return f instanceof Http2Frame.Unknown u ? "type " + u.type() : f.getClass().getSimpleName();
    }

    private void goingAwayByPeer(Http2Frame.GoAway g) {
        // the peer opens no new stream; those it opened are answered, then it closes the connection
    }

    private void onSettings(Http2Frame.Settings s) throws Http2Exception {
        limit(settingsRate, Http2Metrics.Hostile.SETTINGS_FLOOD, "SETTINGS");
        if (s.ack()) {
            if (!settingsAcked) {
                settingsAcked = true;
                decoder.setMaxTableCapacity(limits.headerTableSize());
            }
            return;
        }
        writeLock.lock();
        try {
            applySettingsLocked(s.values());
            Http2FrameWriter.settingsAck(out);
            flushLocked();
            windowOpened.signalAll();
        } catch (IOException e) {
            throw gone(e);
        } finally {
            writeLock.unlock();
        }
    }

    private void applySettings(List<Http2Frame.Setting> values) throws Http2Exception {
        writeLock.lock();
        try {
            applySettingsLocked(values);
        } finally {
            writeLock.unlock();
        }
    }

    /** The client's settings, in order (a later value of the same one wins). */
    private void applySettingsLocked(List<Http2Frame.Setting> values) throws Http2Exception {
        {
            for (Http2Frame.Setting v : values) {
                switch (v.id()) {
                    case Http2FrameReader.SETTINGS_HEADER_TABLE_SIZE -> {
                        int size = (int) Math.min(v.value(), 64 * 1024);
                        encoder.setMaxTableCapacity(size);
                        encoder.setTableCapacity(Math.min(size, 4096));
                    }
                    case Http2FrameReader.SETTINGS_INITIAL_WINDOW_SIZE -> {
                        int delta = (int) v.value() - peerInitialWindow;
                        for (Http2ServerStream st : streams.values()) {
                            if (st.sendWindow + delta > Http2FrameReader.MAX_WINDOW) {
                                throw Http2Exception.connection(Http2Error.FLOW_CONTROL_ERROR,
                                        "SETTINGS_INITIAL_WINDOW_SIZE takes stream " + st.id + "'s window over 2^31-1");
                            }
                            st.sendWindow += delta;
                        }
                        peerInitialWindow = (int) v.value();
                    }
                    case Http2FrameReader.SETTINGS_MAX_FRAME_SIZE -> peerMaxFrameSize = (int) v.value();
                    case Http2FrameReader.SETTINGS_MAX_HEADER_LIST_SIZE -> peerMaxHeaderList = v.value();
                    default -> {
                        // ENABLE_PUSH (this server never pushes), MAX_CONCURRENT_STREAMS (it opens none), and
                        // unknown ones
                    }
                }
            }
        }
    }

    /** Stream 1, half closed already: the HTTP/1.1 request that asked for the upgrade, its body read whole. */
    private void startUpgradedStream(Upgraded u) throws Http2Exception {
        // the fields a Connection field names are hop-by-hop too (RFC 9110 section 7.6.1): dropped with it, as an
        // HTTP/2 request could not have carried them; but never host, the request's authority (the stream's :authority)
        dev.weft.http.Headers all = u.head().headers();
        List<Map.Entry<String, String>> fields = new ArrayList<>();
        for (Map.Entry<String, String> h : all) {
            switch (h.getKey()) {
                case "connection", "upgrade", "http2-settings", "keep-alive", "transfer-encoding", "content-length" -> {
                }
                default -> {
                    if (h.getKey().equals("host") || !all.lists("connection", h.getKey())) {
                        fields.add(h);
                    }
                }
            }
        }
        dev.weft.http.RequestHead head = new dev.weft.http.RequestHead(u.head().method(), u.head().target(),
                u.head().path(), u.head().query(), dev.weft.http.Headers.of(fields));
        lastStreamId = 1;
        Http2ServerStream s = new Http2ServerStream(this, 1, new Http2Request(head, u.body().length), remote,
                DEFAULT_WINDOW);
        s.remoteClosed = true;
        s.preloaded = u.body();
        startStream(s);
    }

    private void onHeaders(Http2Frame.Headers h) throws Http2Exception {
        if ((h.streamId() & 1) == 0) {
            throw Http2Exception.connection(Http2Error.PROTOCOL_ERROR, "HEADERS on even stream " + h.streamId());
        }
        if (h.endHeaders()) {
            onHeaderBlock(h, h.block());
            return;
        }
        headerBlockStart = h;
        headerBlockStream = h.streamId();
        headerBlock = new java.io.ByteArrayOutputStream(Math.max(256, h.block().length * 2));
        appendBlock(h.block());
    }

    private void onContinuation(Http2Frame.Continuation c) throws Http2Exception {
        limit(continuationRate, Http2Metrics.Hostile.CONTINUATION_FLOOD, "CONTINUATION");
        if (headerBlockStart == null || c.streamId() != headerBlockStream) {
            throw Http2Exception.connection(Http2Error.PROTOCOL_ERROR, headerBlockStart == null
                    ? "CONTINUATION outside a header block" : "CONTINUATION on stream " + c.streamId()
                    + " inside the header block of stream " + headerBlockStream);
        }
        appendBlock(c.block());
        if (c.endHeaders()) {
            Http2Frame.Headers h = headerBlockStart;
            byte[] block = headerBlock.toByteArray();
            headerBlockStart = null;
            headerBlock = null;
            onHeaderBlock(h, block);
        }
    }

    private void appendBlock(byte[] b) {
        if (headerBlock.size() + b.length > limits.maxHeaderListSize()) {
            throw new Hostile(Http2Metrics.Hostile.CONTINUATION_FLOOD, Http2Error.ENHANCE_YOUR_CALM,
                    "a header block over max_header_list_size " + limits.maxHeaderListSize());
        }
        headerBlock.write(b, 0, b.length);
    }

    /** A whole header block of {@code h}'s stream: a request, trailers, or an error. */
    private void onHeaderBlock(Http2Frame.Headers h, byte[] block) throws Http2Exception {
        int id = h.streamId();
        if (block.length > limits.maxHeaderListSize()) {
            throw new Hostile(Http2Metrics.Hostile.CONTINUATION_FLOOD, Http2Error.ENHANCE_YOUR_CALM,
                    "a header block over max_header_list_size " + limits.maxHeaderListSize());
        }
        MetaData meta;
        Http2Exception streamError = null;
        try {
            meta = decoder.decode(ByteBuffer.wrap(block));
        } catch (HpackException.SessionException e) {
            throw Http2Exception.connection(Http2Error.COMPRESSION_ERROR, "HPACK: " + e.getMessage());
        } catch (HpackException.StreamException e) {
            meta = null;
            streamError = Http2Exception.stream(id, Http2Error.PROTOCOL_ERROR, e.getMessage());
        }
        Http2ServerStream existing = streams.get(id);
        if (existing != null && !existing.resetByPeer) {
            onTrailers(existing, h, meta, streamError);
            return;
        }
        if (id <= lastStreamId) {
            if (resetThere.contains(id)) {
                throw Http2Exception.stream(id, Http2Error.STREAM_CLOSED, "HEADERS on stream " + id + ", which the peer reset");
            }
            if (resetHere.contains(id)) {
                return;
            }
            for (int[] gap : skipped) {
                if (gap[0] < id && id < gap[1]) {
                    throw Http2Exception.connection(Http2Error.PROTOCOL_ERROR, "HEADERS on stream " + id
                            + ", lower than stream " + gap[1] + " the client opened before it (RFC 9113 section 5.1.1)");
                }
            }
            throw Http2Exception.connection(Http2Error.STREAM_CLOSED, "HEADERS on closed stream " + id);
        }
        if (id > lastStreamId + 2) {
            skipped.addLast(new int[] {lastStreamId, id});
            if (skipped.size() > SKIPPED_RANGES) {
                skipped.removeFirst();
            }
        }
        lastStreamId = id;
        if (goingAway) {
            return; // after our GOAWAY: not taken (the client may retry it elsewhere)
        }
        if (streamError != null) {
            throw streamError;
        }
        if (h.priority() != null && h.priority().dependsOn() == id) {
            throw Http2Exception.stream(id, Http2Error.PROTOCOL_ERROR, "a stream cannot depend on itself");
        }
        Http2Request request = Http2Request.of(id, meta, h.endStream());
        if (running.get() >= limits.maxConcurrentStreams()) {
            metrics.onRefused();
            resetStream(id, Http2Error.REFUSED_STREAM);
            return;
        }
        Http2ServerStream s = new Http2ServerStream(this, id, request, remote,
                settingsAcked ? limits.initialWindowSize() : Math.max(limits.initialWindowSize(), DEFAULT_WINDOW));
        s.remoteClosed = h.endStream();
        s.noBody = h.endStream();
        if (h.endStream()) {
            s.offer(null, 0, 0, true); // no body will come, whatever its content-length (0) says
        }
        if (request.contentLength() > server.maxBodyBytes() && !requests.streamsBody(request.head())) {
            resetHere(id); // answered 413 at once: the body it still sends is dropped
            s.discard = true;
        }
        startStream(s);
    }

    private void startStream(Http2ServerStream s) throws Http2Exception {
        writeLock.lock();
        try {
            if (goingAway && s.preloaded == null) {
                // a drain's GOAWAY went out since the HEADERS were read (naming an earlier stream): not taken, the
                // client may retry it elsewhere (stream 1 of an Upgrade was answered 101 already: it is served)
                return;
            }
            acceptedStreamId = Math.max(acceptedStreamId, s.id);
            running.incrementAndGet();
            streams.put(s.id, s);
            metrics.onStream();
            s.sendWindow = peerInitialWindow;
            if (openStreams++ == 0) {
                activity.busy();
            }
        } finally {
            writeLock.unlock();
        }
        try {
            s.start();
        } catch (RuntimeException | Error e) {
            streamEnded(s);
            throw Http2Exception.stream(s.id, Http2Error.REFUSED_STREAM, "no thread for the stream: " + e);
        }
    }

    private void onTrailers(Http2ServerStream s, Http2Frame.Headers h, MetaData meta, Http2Exception streamError)
            throws Http2Exception {
        if (s.remoteClosed) {
            throw Http2Exception.connection(Http2Error.STREAM_CLOSED, "HEADERS on half-closed stream " + s.id);
        }
        if (streamError != null) {
            throw streamError;
        }
        if (!h.endStream()) {
            throw Http2Exception.stream(s.id, Http2Error.PROTOCOL_ERROR, "trailers without END_STREAM");
        }
        if (meta instanceof MetaData.Request || meta instanceof MetaData.Response) {
            throw Http2Exception.stream(s.id, Http2Error.PROTOCOL_ERROR, "pseudo-header fields in trailers");
        }
        s.remoteClosed = true;
        s.checkLengthAtEnd();
        s.offer(null, 0, 0, true);
    }

    private void onData(Http2Frame.Data d) throws Http2Exception {
        int id = d.streamId();
        long window = connectionReceiveWindow.addAndGet(-d.flowLength());
        if (window < 0) {
            throw Http2Exception.connection(Http2Error.FLOW_CONTROL_ERROR, "DATA beyond the connection's window");
        }
        if (window < DEFAULT_FRAME_SIZE && window + d.flowLength() >= DEFAULT_FRAME_SIZE) {
            windowCrossed();
        }
        if (d.flowLength() == 0 && !d.endStream()) {
            limit(emptyDataRate, Http2Metrics.Hostile.EMPTY_DATA_FLOOD, "empty DATA");
        }
        Http2ServerStream s = streams.get(id);
        if (s == null || s.discard) {
            if (id > lastStreamId) {
                throw Http2Exception.connection(Http2Error.PROTOCOL_ERROR, "DATA on idle stream " + id);
            }
            credit(null, d.flowLength()); // nobody takes it: the window is given back at once
            if (resetThere.contains(id)) {
                throw Http2Exception.stream(id, Http2Error.STREAM_CLOSED, "DATA on stream " + id + ", which the peer reset");
            }
            if (s == null && !resetHere.contains(id) && !(goingAway && id > acceptedStreamId)) {
                throw Http2Exception.connection(Http2Error.STREAM_CLOSED, "DATA on closed stream " + id);
            }
            return;
        }
        if (s.remoteClosed) {
            throw Http2Exception.connection(Http2Error.STREAM_CLOSED, "DATA on half-closed stream " + id);
        }
        if (s.receiveWindow.addAndGet(-d.flowLength()) < 0) {
            throw Http2Exception.connection(Http2Error.FLOW_CONTROL_ERROR, "DATA beyond stream " + id + "'s window");
        }
        int padding = d.flowLength() - d.data().length;
        if (padding > 0) {
            credit(s, padding);
        }
        s.received += d.data().length;
        if (s.request.contentLength() >= 0 && s.received > s.request.contentLength()) {
            credit(null, d.data().length); // never buffered: the connection's window gets it back before the reset
            throw Http2Exception.stream(id, Http2Error.PROTOCOL_ERROR, "more DATA than content-length");
        }
        if (d.endStream()) {
            s.remoteClosed = true;
            try {
                s.checkLengthAtEnd();
            } catch (Http2Exception e) {
                credit(null, d.data().length);
                throw e;
            }
        }
        s.offer(d.data(), 0, d.data().length, d.endStream());
    }

    private void onReset(Http2Frame.RstStream r) throws Http2Exception {
        limit(resetRate, Http2Metrics.Hostile.RAPID_RESET, "RST_STREAM");
        int id = r.streamId();
        if (id > lastStreamId) {
            throw Http2Exception.connection(Http2Error.PROTOCOL_ERROR, "RST_STREAM on idle stream " + id);
        }
        Http2ServerStream s = streams.get(id);
        if (s != null && !s.resetByPeer) {
            metrics.onResetByPeer();
            s.resetByPeer = true;
            s.discard = true;
            s.cancel();
        }
        if (s != null || !resetHere.contains(id)) {
            remember(resetThere, id);
        }
    }

    /**
     * An increment below this is "small" and counts against {@code window_updates_per_second}: tiny increments are the
     * attack (answers cut into tiny DATA frames, a wake-up per byte). A client that reads a fast stream through a small
     * window sends many larger ones (grpc-java at 16 KiB: half its window each, some 5,000 a second for 19 MiB): those
     * count only against {@link #LARGE_WINDOW_UPDATES} times that bound.
     */
    static final int SMALL_WINDOW_UPDATE = 4096;
    static final int LARGE_WINDOW_UPDATES = 10;

    private void onWindowUpdate(Http2Frame.WindowUpdate w) throws Http2Exception {
        if (w.increment() < SMALL_WINDOW_UPDATE) {
            limit(windowUpdateRate, Http2Metrics.Hostile.WINDOW_UPDATE_FLOOD, "WINDOW_UPDATE (increments under "
                    + SMALL_WINDOW_UPDATE + " bytes)");
        }
        limit(anyWindowUpdateRate, Http2Metrics.Hostile.WINDOW_UPDATE_FLOOD, "WINDOW_UPDATE");
        int id = w.streamId();
        if (id > lastStreamId) {
            throw Http2Exception.connection(Http2Error.PROTOCOL_ERROR, "WINDOW_UPDATE on idle stream " + id);
        }
        writeLock.lock();
        try {
            if (id == 0) {
                if (connectionSendWindow + w.increment() > Http2FrameReader.MAX_WINDOW) {
                    throw Http2Exception.connection(Http2Error.FLOW_CONTROL_ERROR, "the connection's window over 2^31-1");
                }
                connectionSendWindow += w.increment();
            } else {
                Http2ServerStream s = streams.get(id);
                if (s == null) {
                    return; // closed: late updates are allowed
                }
                if (s.sendWindow + w.increment() > Http2FrameReader.MAX_WINDOW) {
                    throw Http2Exception.stream(id, Http2Error.FLOW_CONTROL_ERROR, "stream " + id + "'s window over 2^31-1");
                }
                s.sendWindow += w.increment();
            }
            windowOpened.signalAll();
        } finally {
            writeLock.unlock();
        }
    }

    /** A stream error: RST_STREAM, its thread (if any) interrupted, later frames on it ignored. */
    private void resetStream(int id, Http2Error error) throws Http2Exception {
        if (error != Http2Error.REFUSED_STREAM) {
            // a refusal is this server's choice (no room), not the peer's misbehaviour: a client that opens streams
            // as fast as others end must not be taken for a rapid reset; it costs a HEADERS frame, as a request does
            limit(resetRate, Http2Metrics.Hostile.RAPID_RESET, "RST_STREAM (sent and received)");
        }
        resetHere(id);
        Http2ServerStream s = streams.get(id);
        if (s != null) {
            s.discard = true;
            s.cancel();
        }
        write(o -> Http2FrameWriter.rstStream(o, id, error));
    }

    private void resetHere(int id) {
        remember(resetHere, id);
    }

    /** Bounded: a frame on a stream reset long ago is then a connection error STREAM_CLOSED. */
    private void remember(LinkedHashSet<Integer> set, int id) {
        set.add(id);
        if (set.size() > 2 * limits.maxConcurrentStreams() + 16) {
            set.removeFirst();
        }
    }

    private void limit(Rate r, Http2Metrics.Hostile why, String what) {
        if (!r.allow(System.nanoTime())) {
            throw new Hostile(why, Http2Error.ENHANCE_YOUR_CALM, "more than " + r.perSecond + " " + what
                    + " frames in a second");
        }
    }

    /** A write that does not depend on the windows. */
    private void write(FrameWrite w) throws Http2Exception {
        writeLock.lock();
        try {
            w.write(out);
            flushLocked();
        } catch (IOException e) {
            throw gone(e);
        } finally {
            writeLock.unlock();
        }
    }

    private Gone gone(IOException e) {
        closed = true;
        return new Gone(e);
    }

    /** A write to the peer failed: the connection is over, nothing more is sent (and nothing counted as hostile). */
    private static final class Gone extends RuntimeException {
        Gone(IOException cause) {
            super(cause.getMessage(), cause, false, false);
        }
    }

    @FunctionalInterface
    interface FrameWrite {
        void write(OutputStream out) throws IOException;
    }

    void flushLocked() throws IOException {
        out.flush();
    }

    /**
     * The socket's stream, each write bounded by {@code write_timeout} while a stream is open: the listener's sweep
     * closes a socket stuck longer (a peer that reads nothing). With no stream open the idle timeout bounds it. Every
     * write happens under {@link #writeLock}, as do the changes of {@link #openStreams}.
     */
    private final class TimedOutput extends java.io.FilterOutputStream {
        TimedOutput(OutputStream socketOut) {
            super(socketOut);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            boolean timed = openStreams > 0;
            if (timed) {
                activity.writing(limits.writeTimeout());
            }
            out.write(b, off, len);
            if (timed) {
                activity.busy();
            }
        }

        @Override
        public void write(int b) throws IOException {
            write(new byte[]{(byte) b}, 0, 1);
        }
    }

    // ---- called by streams' threads ----

    /**
     * Bytes of a request body taken by its stream's thread (or discarded by this thread): window credits, given back
     * to the peer once they make half of a window, so that a body never waits on a WINDOW_UPDATE for long.
     */
    void credit(Http2ServerStream s, int n) {
        if (n <= 0) {
            return;
        }
        int streamUpdate = 0;
        if (s != null && !s.remoteClosed) {
            int pending = s.credit.addAndGet(n);
            if (pending >= limits.initialWindowSize() / 2) {
                streamUpdate = s.credit.getAndSet(0);
                s.receiveWindow.addAndGet(streamUpdate);
            }
        }
        int connUpdate = 0;
        int pending = connectionCredit.addAndGet(n);
        // in batches of half the window; at once while the peer may not send a frame, so that what holds it back is
        // only bytes not taken yet (a streamed body's clock does not count that time against its client)
        if (pending >= limits.connectionWindowSize() / 2 || connectionReceiveWindow.get() < DEFAULT_FRAME_SIZE) {
            connUpdate = connectionCredit.getAndSet(0);
            long window = connectionReceiveWindow.addAndGet(connUpdate);
            if (window >= DEFAULT_FRAME_SIZE && window - connUpdate < DEFAULT_FRAME_SIZE) {
                windowCrossed();
            }
        }
        if (streamUpdate == 0 && connUpdate == 0) {
            return;
        }
        writeLock.lock();
        try {
            if (streamUpdate > 0) {
                Http2FrameWriter.windowUpdate(out, s.id, streamUpdate);
            }
            if (connUpdate > 0) {
                Http2FrameWriter.windowUpdate(out, 0, connUpdate);
            }
            flushLocked();
        } catch (IOException e) {
            closeQuietly();
        } finally {
            writeLock.unlock();
        }
    }

    /**
     * Encodes an answer's header block (its head, or its trailers: a {@link MetaData} without a status) with the
     * connection's HPACK encoder and writes it; under the write lock.
     */
    void writeHeadersLocked(int streamId, MetaData head, boolean endStream) throws IOException {
        int size = 64;
        for (org.eclipse.jetty.http.HttpField f : head.getHttpFields()) {
            size += f.getName().length() + (f.getValue() == null ? 0 : f.getValue().length()) + 16;
        }
        ByteBuffer b = ByteBuffer.allocate(size);
        try {
            encoder.encode(b, head);
        } catch (HpackException e) {
            throw new IOException("the answer's header fields cannot be encoded: " + e.getMessage(), e);
        }
        b.flip();
        byte[] block = new byte[b.remaining()];
        b.get(block);
        Http2FrameWriter.headers(out, streamId, endStream, block, peerMaxFrameSize);
    }

    /** The largest header block an answer may send on this connection (see {@link #MAX_ANSWER_HEADER_LIST}). */
    long answerHeaderLimit() {
        return Math.min(MAX_ANSWER_HEADER_LIST, peerMaxHeaderList); // not under the write lock every stream contends for
    }

    OutputStream out() {
        return out;
    }

    Http2Limits limits() {
        return limits;
    }

    long maxBodyBytes() {
        return server.maxBodyBytes();
    }

    java.time.Duration bodyTimeout() {
        return server.bodyTimeout();
    }

    /** Bytes a second a streamed body must average once it has waited for its client longer than body_timeout. */
    long minBodyRate() {
        return server.minBodyRate();
    }

    /**
     * After the connection's receive window crossed one frame, either way: starts or stops the clock of the time the
     * peer cannot send. It reads the window again under the clock's lock, so that crossings by two threads at once
     * leave it as the window is.
     */
    private void windowCrossed() {
        windowClock.lock();
        try {
            boolean blocked = connectionReceiveWindow.get() < DEFAULT_FRAME_SIZE;
            if (blocked && blockedSince == 0) {
                blockedSince = System.nanoTime() | 1;
            } else if (!blocked && blockedSince != 0) {
                blockedTotal += System.nanoTime() - blockedSince;
                blockedSince = 0;
            }
        } finally {
            windowClock.unlock();
        }
    }

    /**
     * Nanoseconds in all, up to now, that the peer could not send a full DATA frame on this connection: bodies buffered
     * for other streams, not yet taken by their readers, held its window. A streamed body's wait is not its client's
     * then (docs/gateway.md, Proxy routes).
     */
    long blockedNanos() {
        windowClock.lock();
        try {
            return blockedTotal + (blockedSince != 0 ? System.nanoTime() - blockedSince : 0);
        } finally {
            windowClock.unlock();
        }
    }

    Requests requests() {
        return requests;
    }

    Http2Metrics metrics() {
        return metrics;
    }

    boolean closed() {
        return closed;
    }

    /** A stream's thread is done: its place is free; after a drain's GOAWAY the last one closes the connection. */
    void streamEnded(Http2ServerStream s) {
        streams.remove(s.id, s);
        releasePlace(s);
        writeLock.lock();
        try {
            if (--openStreams == 0) {
                activity.idle();
                if (goingAway) {
                    try {
                        out.flush();
                        socket.shutdownOutput();
                    } catch (IOException ignored) {
                        // gone already
                    }
                }
            }
        } finally {
            writeLock.unlock();
        }
    }

    /** The stream's place under {@code max_concurrent_streams} is free (once per stream). */
    void releasePlace(Http2ServerStream s) {
        if (s.placeHeld.compareAndSet(true, false)) {
            running.decrementAndGet();
        }
    }

    /** From a stream's thread: it ended before its request did; frames still on their way for it are dropped. */
    void endedEarly(int id) {
        endedEarly.add(id);
    }

    /** The peer stopped reading, or the socket broke: the connection ends (its thread sees the socket closed). */
    void slowReader() {
        metrics.onHostile(Http2Metrics.Hostile.SLOW_READER);
        closeQuietly();
    }

    void closeQuietly() {
        closed = true;
        try {
            socket.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }

    /** Sends RST_STREAM for a stream that answered before its request ended, or gave up; from the stream's thread. */
    void resetFromStream(int id, Http2Error error) {
        writeLock.lock();
        try {
            Http2FrameWriter.rstStream(out, id, error);
            flushLocked();
        } catch (IOException e) {
            closeQuietly();
        } finally {
            writeLock.unlock();
        }
    }

    /** A connection error of a flood kind: GOAWAY ENHANCE_YOUR_CALM, counted as {@link #why}. */
    private static final class Hostile extends RuntimeException {
        final Http2Metrics.Hostile why;
        final Http2Error error;

        Hostile(Http2Metrics.Hostile why, Http2Error error, String message) {
            super(message, null, false, false);
            this.why = why;
            this.error = error;
        }
    }

    /** Frames of one kind per one-second window. */
    static final class Rate {
        final int perSecond;
        private long windowStart;
        private int count;

        Rate(int perSecond) {
            this.perSecond = perSecond;
        }

        boolean allow(long now) {
            if (count == 0 || now - windowStart >= 1_000_000_000L) {
                windowStart = now;
                count = 0;
            }
            return ++count <= perSecond;
        }
    }

    static void log(String message, Throwable t) {
        LOG.log(System.Logger.Level.DEBUG, message, t);
    }
}
