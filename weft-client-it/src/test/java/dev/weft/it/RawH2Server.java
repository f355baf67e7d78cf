package dev.weft.it;

import dev.weft.core.tls.Pem;
import dev.weft.devtools.TestCerts;

import org.awaitility.core.ConditionTimeoutException;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

import static org.awaitility.Awaitility.await;

/**
 * A hostile HTTP/2 server for tests: real TLS on 127.0.0.1 (the JDK's, ALPN offering only {@code h2}), and no
 * HTTP/2 implementation at all. Each accepted connection runs a {@link Script} on its own thread; the script
 * reads the client's frames and writes whatever bytes it likes, built by hand with the builders below (frame
 * headers and HPACK blocks as raw bytes, so that a server can break every rule a real one keeps).
 *
 * <p>Every frame the client sends is recorded ({@link #received()}) by a reader thread per connection, from the
 * preface until the client closes the connection, whatever the script is doing: a test can assert what the client
 * said back (RST_STREAM CANCEL, GOAWAY, SETTINGS ACK) after its call returned. The server never closes a
 * connection on its own unless the script does ({@link Conn#close()}), the script fails, or the server is closed.
 */
final class RawH2Server implements AutoCloseable {
    /** The client's connection preface (RFC 9113 section 3.4). */
    static final byte[] PREFACE = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
    /** How often the waits below look at what the connections recorded. */
    private static final Duration POLL = Duration.ofMillis(10);

    // Frame types (RFC 9113 section 6).
    static final int DATA = 0x0;
    static final int HEADERS = 0x1;
    static final int PRIORITY = 0x2;
    static final int RST_STREAM = 0x3;
    static final int SETTINGS = 0x4;
    static final int PUSH_PROMISE = 0x5;
    static final int PING = 0x6;
    static final int GOAWAY = 0x7;
    static final int WINDOW_UPDATE = 0x8;
    static final int CONTINUATION = 0x9;

    // Flags.
    static final int END_STREAM = 0x1;
    static final int ACK = 0x1;
    static final int END_HEADERS = 0x4;
    static final int PADDED = 0x8;
    static final int PRIORITY_FLAG = 0x20;

    // Error codes (RFC 9113 section 7).
    static final int NO_ERROR = 0x0;
    static final int PROTOCOL_ERROR = 0x1;
    static final int INTERNAL_ERROR = 0x2;
    static final int FLOW_CONTROL_ERROR = 0x3;
    static final int FRAME_SIZE_ERROR = 0x6;
    static final int REFUSED_STREAM = 0x7;
    static final int CANCEL = 0x8;
    static final int COMPRESSION_ERROR = 0x9;

    // SETTINGS identifiers.
    static final int SETTINGS_HEADER_TABLE_SIZE = 0x1;
    static final int SETTINGS_ENABLE_PUSH = 0x2;
    static final int SETTINGS_MAX_CONCURRENT_STREAMS = 0x3;
    static final int SETTINGS_INITIAL_WINDOW_SIZE = 0x4;
    static final int SETTINGS_MAX_FRAME_SIZE = 0x5;
    static final int SETTINGS_MAX_HEADER_LIST_SIZE = 0x6;

    /** What a connection does, on its own thread, once the TLS handshake chose h2. */
    @FunctionalInterface
    interface Script {
        void run(Conn c) throws Exception;
    }

    /**
     * A frame the client sent.
     *
     * @param connection which accepted connection it came on (1 for the first)
     */
    record Frame(int connection, int type, int flags, int stream, byte[] payload) {
        boolean has(int flag) {
            return (flags & flag) != 0;
        }

        /** The error code of a RST_STREAM (its payload) or a GOAWAY (after the last stream id). */
        int errorCode() {
            int at = type == GOAWAY ? 4 : 0;
            return payload.length < at + 4 ? -1 : readInt(payload, at);
        }

        /** The last stream id of a GOAWAY. */
        int lastStreamId() {
            return readInt(payload, 0) & 0x7fff_ffff;
        }

        boolean isRequest() {
            return type == HEADERS;
        }

        @Override
        public String toString() {
            String p = payload.length <= 16 ? HexFormat.of().formatHex(payload)
                    : HexFormat.of().formatHex(payload, 0, 16) + "...(" + payload.length + " bytes)";
            return "#" + connection + " " + typeName(type) + " flags=0x" + Integer.toHexString(flags) + " stream="
                    + stream + " " + p;
        }
    }

    private final SSLServerSocket server;
    private volatile Script script;
    /**
     * The most DATA bytes a connection's reader takes in per second, on average from its first DATA frame (0: no
     * bound): a server that reads steadily, as fast as it can but never faster than this, whatever its pauses.
     */
    volatile long maxDataBytesPerSecond;
    /**
     * DATA bytes a connection's reader takes in next without the bound of {@link #maxDataBytesPerSecond} (a burst
     * that drains the sockets' buffers); the bound holds again, from then on, once they are read.
     */
    final java.util.concurrent.atomic.AtomicLong unboundedDataBytes = new java.util.concurrent.atomic.AtomicLong();
    /** How long a connection's reader reads nothing after a burst of {@link #unboundedDataBytes}. */
    volatile long pauseAfterBurstNanos;
    private final AtomicInteger accepted = new AtomicInteger();
    private final AtomicInteger open = new AtomicInteger();
    private final List<Frame> received = new CopyOnWriteArrayList<>();
    private final List<Throwable> scriptFailures = new CopyOnWriteArrayList<>();
    private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
    private final Thread acceptor;
    private volatile boolean closed;

    private RawH2Server(SSLServerSocket server, Script script) {
        this.server = server;
        this.script = script;
        this.acceptor = Thread.ofPlatform().daemon().name("raw-h2-accept").start(this::acceptLoop);
    }

    /** A server on an ephemeral port of 127.0.0.1 with the certificate of {@code certs}, running {@code script}. */
    static RawH2Server start(TestCerts certs, Script script) throws IOException {
        SSLContext ctx = Pem.serverContext(certs.cert(), certs.key());
        SSLServerSocket s = (SSLServerSocket) ctx.getServerSocketFactory()
                .createServerSocket(0, 200, InetAddress.getLoopbackAddress());
        SSLParameters p = s.getSSLParameters();
        p.setApplicationProtocols(new String[] {"h2"});
        s.setSSLParameters(p);
        return new RawH2Server(s, script);
    }

    /** The script of connections accepted from now on. */
    void script(Script s) {
        this.script = s;
    }

    int port() {
        return server.getLocalPort();
    }

    String url(String path) {
        return "https://127.0.0.1:" + server.getLocalPort() + path;
    }

    /** Connections accepted so far (TCP accepts, whether or not their handshake went through). */
    int connections() {
        return accepted.get();
    }

    /** Connections not yet over: the script runs, or the client has not closed the connection yet. */
    int openConnections() {
        return open.get();
    }

    /** Every frame the client sent, on every connection, in the order each connection read them. */
    List<Frame> received() {
        return List.copyOf(received);
    }

    /** The HEADERS frames the client sent: one per request it made. */
    List<Frame> requests() {
        return received.stream().filter(Frame::isRequest).toList();
    }

    /** What scripts threw (an IOException once the client has closed is normal for some scripts). */
    List<Throwable> scriptFailures() {
        return List.copyOf(scriptFailures);
    }

    /**
     * The first recorded frame {@code p} accepts, waiting up to {@code wait} for it to arrive; null if none did (the
     * caller's assertion then says which frame it wanted, with the frames seen).
     */
    Frame awaitFrame(Predicate<Frame> p, Duration wait) {
        try {
            return await("a frame the test waits for arrives").dontCatchUncaughtExceptions().atMost(wait)
                    .pollDelay(Duration.ZERO).pollInterval(POLL).until(() -> firstFrame(p), Objects::nonNull);
        } catch (ConditionTimeoutException e) {
            return null;
        }
    }

    private Frame firstFrame(Predicate<Frame> p) {
        for (Frame f : received) {
            if (p.test(f)) {
                return f;
            }
        }
        return null;
    }

    /** Waits until no connection thread runs any more (the client closed them all); whether that happened. */
    boolean awaitAllClosed(Duration wait) {
        try {
            await("every connection of the raw server is over").dontCatchUncaughtExceptions().atMost(wait)
                    .pollDelay(Duration.ZERO).pollInterval(POLL).until(() -> open.get() == 0);
            return true;
        } catch (ConditionTimeoutException e) {
            return false;
        }
    }

    @Override
    public void close() {
        closed = true;
        try {
            server.close();
        } catch (IOException ignored) {
            // closing is all we wanted
        }
        for (Socket s : sockets) {
            closeQuietly(s);
        }
        try {
            acceptor.join(TimeUnit.SECONDS.toMillis(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void acceptLoop() {
        while (!closed) {
            Socket s;
            try {
                s = server.accept();
            } catch (IOException e) {
                if (closed) {
                    return;
                }
                continue;
            }
            int n = accepted.incrementAndGet();
            sockets.add(s);
            open.incrementAndGet();
            Script sc = script;
            Thread.ofPlatform().daemon().name("raw-h2-conn-" + n).start(() -> serve(n, (SSLSocket) s, sc));
        }
    }

    private void serve(int n, SSLSocket s, Script sc) {
        try {
            s.setSoTimeout(60_000); // a safety net only: close() or the client's close ends every read first
            s.startHandshake();
            Conn c = new Conn(n, s);
            try {
                sc.run(c);
                c.reader.join(); // until the client closes the connection (or the server is closed)
            } catch (Throwable t) {
                scriptFailures.add(t);
                // What the client said before it went away (a GOAWAY, say) is still recorded, if it said it soon.
                c.reader.join(TimeUnit.SECONDS.toMillis(1));
            }
        } catch (IOException | RuntimeException e) {
            // the client went away during the handshake
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            sockets.remove(s);
            closeQuietly(s);
            open.decrementAndGet();
        }
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // closing is all we wanted
        }
    }

    /** In a connection's inbox: the client's preface arrived and was the preface. */
    private static final Object PREFACE_READ = new Object();

    /**
     * One accepted connection, as its script sees it. A reader thread of its own reads the client's preface and
     * frames from the start and records every frame, whatever the script does (a script blocked in a write, or
     * one whose write failed because the client closed first, still has what the client said recorded); the
     * script's reads take them in order from its inbox.
     */
    final class Conn {
        private final int index;
        private final SSLSocket socket;
        private final OutputStream out;
        private final java.util.concurrent.LinkedBlockingQueue<Object> inbox = new java.util.concurrent.LinkedBlockingQueue<>();
        private final Thread reader;

        private Conn(int index, SSLSocket socket) throws IOException {
            this.index = index;
            this.socket = socket;
            this.out = socket.getOutputStream();
            DataInputStream in = new DataInputStream(new java.io.BufferedInputStream(socket.getInputStream()));
            this.reader = Thread.ofPlatform().daemon().name("raw-h2-read-" + index).start(() -> readLoop(in));
        }

        private void readLoop(DataInputStream in) {
            long dataBytes = 0;
            long firstData = 0;
            try {
                byte[] p = new byte[PREFACE.length];
                in.readFully(p);
                if (!Arrays.equals(p, PREFACE)) {
                    throw new IOException("not the HTTP/2 client preface: " + HexFormat.of().formatHex(p));
                }
                inbox.add(PREFACE_READ);
                while (true) {
                    byte[] h = new byte[9];
                    in.readFully(h);
                    int length = (h[0] & 0xff) << 16 | (h[1] & 0xff) << 8 | (h[2] & 0xff);
                    byte[] payload = new byte[length];
                    in.readFully(payload);
                    Frame f = new Frame(index, h[3] & 0xff, h[4] & 0xff, readInt(h, 5) & 0x7fff_ffff, payload);
                    received.add(f);
                    inbox.add(f);
                    long rate = maxDataBytesPerSecond;
                    if (rate > 0 && f.type() == DATA) {
                        long now = System.nanoTime();
                        if (unboundedDataBytes.get() > 0) { // a burst: the bound runs again after it and its pause
                            if (unboundedDataBytes.addAndGet(-length) <= 0) {
                                parkUntil(now + pauseAfterBurstNanos);
                            }
                            dataBytes = 0;
                            continue;
                        }
                        if (dataBytes == 0) {
                            firstData = now;
                        }
                        dataBytes += length;
                        // ahead of the rate: wait until on it (a late wake-up is made up by reading on at once)
                        long due = firstData + (long) (dataBytes * 1e9 / rate);
                        parkUntil(due);
                    }
                }
            } catch (IOException e) {
                inbox.add(e); // EOF: the client closed; SocketException: it reset, or the server closed
            }
        }

        /** Waits until nanoTime {@code due} or the server's close (a rate of 1: it stopped reading). */
        private void parkUntil(long due) {
            long left;
            while ((left = due - System.nanoTime()) > 0 && !closed) {
                java.util.concurrent.locks.LockSupport.parkNanos(Math.min(left, 50_000_000));
            }
        }

        /** 1 for the first connection the server accepted, 2 for the next... */
        int index() {
            return index;
        }

        /** The protocol ALPN chose ("h2" unless the client did not offer it). */
        String alpn() {
            return socket.getApplicationProtocol();
        }

        private Object next() throws IOException {
            Object o;
            try {
                o = inbox.poll(60, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new java.io.InterruptedIOException("interrupted while reading");
            }
            if (o == null) {
                throw new java.net.SocketTimeoutException("nothing from the client for 60 s");
            }
            if (o instanceof IOException e) {
                inbox.add(e); // every later read fails the same way
                throw e;
            }
            return o;
        }

        /** Waits for the client's 24-byte preface; fails if what came was not the preface. */
        void preface() throws IOException {
            Object o = next();
            if (o != PREFACE_READ) {
                throw new IOException("a frame before the preface: " + o);
            }
        }

        /** The next frame the client sent (recorded already). */
        Frame read() throws IOException {
            Object o = next();
            if (o == PREFACE_READ) {
                o = next();
            }
            return (Frame) o;
        }

        /** Reads frames until one that {@code p} accepts, and returns it. */
        Frame readUntil(Predicate<Frame> p) throws IOException {
            while (true) {
                Frame f = read();
                if (p.test(f)) {
                    return f;
                }
            }
        }

        /** Reads frames until the client's next request (a HEADERS frame); its stream id. */
        int awaitRequest() throws IOException {
            return readUntil(Frame::isRequest).stream();
        }

        /** The usual opening: waits for the preface, sends an empty SETTINGS, waits for a request; its stream id. */
        int open() throws IOException {
            preface();
            write(settings());
            return awaitRequest();
        }

        /**
         * Writes {@code frames} (raw bytes, any number of frames or parts of frames) in one write, so that the
         * client has them all before it can react to the first (and close the connection under the rest).
         */
        void write(byte[]... frames) throws IOException {
            byte[] b = concat(frames);
            synchronized (this) { // a script may write from more than one thread
                out.write(b);
                out.flush();
            }
        }

        /** Closes the connection (TLS close_notify, then TCP FIN); the reader stops with it. */
        void close() throws IOException {
            socket.close();
        }
    }

    // ---- frames as raw bytes ----------------------------------------------------------------------------------

    /** A frame: 9-byte header (24-bit length, type, flags, 31-bit stream id) and {@code payload}. */
    static byte[] frame(int type, int flags, int stream, byte[] payload) {
        byte[] f = new byte[9 + payload.length];
        f[0] = (byte) (payload.length >>> 16);
        f[1] = (byte) (payload.length >>> 8);
        f[2] = (byte) payload.length;
        f[3] = (byte) type;
        f[4] = (byte) flags;
        writeInt(f, 5, stream);
        System.arraycopy(payload, 0, f, 9, payload.length);
        return f;
    }

    /** SETTINGS with (identifier, value) pairs. */
    static byte[] settings(int... idValue) {
        byte[] p = new byte[idValue.length / 2 * 6];
        for (int i = 0; i + 1 < idValue.length; i += 2) {
            int at = i / 2 * 6;
            p[at] = (byte) (idValue[i] >>> 8);
            p[at + 1] = (byte) idValue[i];
            writeInt(p, at + 2, idValue[i + 1]);
        }
        return frame(SETTINGS, 0, 0, p);
    }

    static byte[] settingsAck() {
        return frame(SETTINGS, ACK, 0, new byte[0]);
    }

    /** HEADERS with a whole header block (END_HEADERS set) and the given extra flags (END_STREAM). */
    static byte[] headers(int stream, int flags, byte[] block) {
        return frame(HEADERS, flags | END_HEADERS, stream, block);
    }

    static byte[] data(int stream, int flags, byte[] bytes) {
        return frame(DATA, flags, stream, bytes);
    }

    static byte[] data(int stream, int flags, String text) {
        return data(stream, flags, text.getBytes(StandardCharsets.UTF_8));
    }

    static byte[] rstStream(int stream, int error) {
        byte[] p = new byte[4];
        writeInt(p, 0, error);
        return frame(RST_STREAM, 0, stream, p);
    }

    static byte[] goaway(int lastStreamId, int error) {
        byte[] p = new byte[8];
        writeInt(p, 0, lastStreamId);
        writeInt(p, 4, error);
        return frame(GOAWAY, 0, 0, p);
    }

    static byte[] windowUpdate(int stream, int increment) {
        byte[] p = new byte[4];
        writeInt(p, 0, increment);
        return frame(WINDOW_UPDATE, 0, stream, p);
    }

    static byte[] ping(int flags, long opaque) {
        byte[] p = new byte[8];
        writeInt(p, 0, (int) (opaque >>> 32));
        writeInt(p, 4, (int) opaque);
        return frame(PING, flags, 0, p);
    }

    /** PUSH_PROMISE on {@code stream} promising {@code promised}, with a whole header block. */
    static byte[] pushPromise(int stream, int promised, byte[] block) {
        byte[] p = new byte[4 + block.length];
        writeInt(p, 0, promised);
        System.arraycopy(block, 0, p, 4, block.length);
        return frame(PUSH_PROMISE, END_HEADERS, stream, p);
    }

    static byte[] continuation(int stream, int flags, byte[] fragment) {
        return frame(CONTINUATION, flags, stream, fragment);
    }

    // ---- HPACK by hand (RFC 7541), no Huffman, no dynamic table -------------------------------------------------

    /** Indexed field 8 of the static table: {@code :status 200}. */
    static final byte[] STATUS_200 = {(byte) 0x88};

    /** A literal header field without indexing, new name (RFC 7541 section 6.2.2): 0x00, name, value. */
    static byte[] literal(String name, String value) {
        return literal(name.getBytes(StandardCharsets.ISO_8859_1), value.getBytes(StandardCharsets.ISO_8859_1));
    }

    static byte[] literal(byte[] name, byte[] value) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        b.write(0x00);
        writeString(b, name);
        writeString(b, value);
        return b.toByteArray();
    }

    /** {@code :status} with any three characters, as a literal. */
    static byte[] status(String code) {
        return literal(":status", code);
    }

    /** A header block: the fields one after the other. */
    static byte[] block(byte[]... fields) {
        return concat(fields);
    }

    static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            b.writeBytes(p);
        }
        return b.toByteArray();
    }

    /** A string literal: H bit 0, its length as an integer with a 7-bit prefix (RFC 7541 section 5.1), bytes. */
    private static void writeString(ByteArrayOutputStream b, byte[] s) {
        int n = s.length;
        if (n < 127) {
            b.write(n);
        } else {
            b.write(127);
            n -= 127;
            while (n >= 128) {
                b.write((n & 0x7f) | 0x80);
                n >>>= 7;
            }
            b.write(n);
        }
        b.writeBytes(s);
    }

    static int readInt(byte[] b, int at) {
        return (b[at] & 0xff) << 24 | (b[at + 1] & 0xff) << 16 | (b[at + 2] & 0xff) << 8 | (b[at + 3] & 0xff);
    }

    private static void writeInt(byte[] b, int at, int v) {
        b[at] = (byte) (v >>> 24);
        b[at + 1] = (byte) (v >>> 16);
        b[at + 2] = (byte) (v >>> 8);
        b[at + 3] = (byte) v;
    }

    static String typeName(int type) {
        return switch (type) {
            case DATA -> "DATA";
            case HEADERS -> "HEADERS";
            case PRIORITY -> "PRIORITY";
            case RST_STREAM -> "RST_STREAM";
            case SETTINGS -> "SETTINGS";
            case PUSH_PROMISE -> "PUSH_PROMISE";
            case PING -> "PING";
            case GOAWAY -> "GOAWAY";
            case WINDOW_UPDATE -> "WINDOW_UPDATE";
            case CONTINUATION -> "CONTINUATION";
            default -> "type-0x" + Integer.toHexString(type);
        };
    }

    /** The frames of {@code connection} the client sent, for messages. */
    String describe(int connection) {
        List<String> out = new ArrayList<>();
        for (Frame f : received) {
            if (f.connection() == connection) {
                out.add(f.toString());
            }
        }
        return String.join("\n  ", out);
    }
}
