package dev.weft.server.http2;

import dev.weft.http.h2.Http2Frame;
import dev.weft.http.h2.Http2FrameReader;
import dev.weft.http.h2.Http2FrameWriter;

import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A raw HTTP/2 client for hostile tests: writes any frame (weft-http's writer), and reads the server's frames on a
 * virtual thread of its own into a queue (so that a flood is never held up by a server waiting for its reader).
 */
final class RawH2 implements AutoCloseable {
    /** The end of the connection, as an item of the queue. */
    record Closed(String why) {
    }

    final Socket socket;
    private final OutputStream out;
    final BlockingQueue<Object> frames = new LinkedBlockingQueue<>(100_000);
    private final Thread reader;

    RawH2(InetSocketAddress address, boolean read) throws IOException {
        socket = new Socket();
        socket.connect(address, 5000);
        socket.setTcpNoDelay(true);
        out = new BufferedOutputStream(socket.getOutputStream(), 64 * 1024);
        Http2FrameReader r = new Http2FrameReader(socket.getInputStream());
        reader = read ? Thread.ofVirtual().start(() -> {
            try {
                while (true) {
                    Http2Frame f = r.read(Http2FrameReader.MAX_MAX_FRAME_SIZE);
                    if (f == null) {
                        frames.offer(new Closed("end of stream"));
                        return;
                    }
                    frames.offer(f);
                }
            } catch (IOException e) {
                frames.offer(new Closed(e.toString()));
            }
        }) : null;
    }

    /** Connects and sends the preface and an empty SETTINGS frame. */
    static RawH2 open(InetSocketAddress address) throws IOException {
        RawH2 c = new RawH2(address, true);
        c.raw(Http2FrameReader.PREFACE);
        c.settings(List.of());
        c.flush();
        return c;
    }

    void raw(byte[] b) throws IOException {
        out.write(b);
    }

    void flush() throws IOException {
        out.flush();
    }

    void frame(int type, int flags, int stream, byte[] payload) throws IOException {
        Http2FrameWriter.frame(out, type, flags, stream, payload, 0, payload.length);
    }

    void settings(List<Http2Frame.Setting> values) throws IOException {
        Http2FrameWriter.settings(out, values);
    }

    /** HEADERS with END_HEADERS. */
    void headers(int stream, boolean endStream, byte[] block) throws IOException {
        frame(Http2Frame.TYPE_HEADERS, Http2Frame.FLAG_END_HEADERS | (endStream ? Http2Frame.FLAG_END_STREAM : 0),
                stream, block);
    }

    void rst(int stream, int code) throws IOException {
        frame(Http2Frame.TYPE_RST_STREAM, 0, stream, new byte[]{0, 0, 0, (byte) code});
    }

    /** The next frame of the given type (others are skipped), or null when the connection ended or time ran out. */
    <T extends Http2Frame> T await(Class<T> type, Duration timeout) throws InterruptedException {
        long until = System.nanoTime() + timeout.toNanos();
        while (true) {
            long left = until - System.nanoTime();
            Object o = frames.poll(Math.max(0, left), TimeUnit.NANOSECONDS);
            if (o == null || o instanceof Closed) {
                if (o instanceof Closed) {
                    frames.offer(o); // later waits see the end too
                }
                return null;
            }
            if (type.isInstance(o)) {
                return type.cast(o);
            }
        }
    }

    /** Whether the connection's end has been read (frames before it may still wait in the queue). */
    boolean closed() {
        return frames.stream().anyMatch(o -> o instanceof Closed);
    }

    /** Waits up to {@code timeout} for the connection's end, without taking frames off the queue. */
    void awaitClosed(Duration timeout) throws InterruptedException {
        long until = System.nanoTime() + timeout.toNanos();
        while (!closed() && System.nanoTime() - until < 0) {
            Thread.sleep(10);
        }
    }

    /** Waits for the connection's end; the frames seen until then. */
    List<Object> awaitClose(Duration timeout) throws InterruptedException {
        List<Object> seen = new ArrayList<>();
        long until = System.nanoTime() + timeout.toNanos();
        while (true) {
            long left = until - System.nanoTime();
            Object o = frames.poll(Math.max(0, left), TimeUnit.NANOSECONDS);
            if (o == null) {
                throw new AssertionError("the connection was not closed within " + timeout + "; seen " + seen.size()
                        + " frames: " + (seen.size() <= 8 ? seen : seen.subList(0, 4) + " ... " + seen.subList(seen.size() - 4, seen.size())));
            }
            seen.add(o);
            if (o instanceof Closed) {
                return seen;
            }
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
        if (reader != null) {
            reader.interrupt();
        }
    }

    // ---- HPACK without Huffman or indexing, enough for requests ----

    /** A request block: {@code :method}, {@code :scheme http}, {@code :path}, {@code :authority}, then {@code extra} name/value pairs. */
    static byte[] request(String method, String path, String... extra) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        literal(b, 2, method); // :method
        b.write(0x86); // :scheme http
        literal(b, 4, path); // :path
        literal(b, 1, "127.0.0.1"); // :authority
        for (int i = 0; i < extra.length; i += 2) {
            literalNewName(b, extra[i], extra[i + 1]);
        }
        return b.toByteArray();
    }

    /** Literal header field without indexing, indexed name (RFC 7541 section 6.2.2). */
    static void literal(ByteArrayOutputStream b, int nameIndex, String value) {
        integer(b, 0x00, 4, nameIndex);
        string(b, value);
    }

    static void literalNewName(ByteArrayOutputStream b, String name, String value) {
        b.write(0x00);
        string(b, name);
        string(b, value);
    }

    /** Literal header field with incremental indexing, new name (section 6.2.1): it enters the dynamic table. */
    static void indexedLiteral(ByteArrayOutputStream b, String name, String value) {
        b.write(0x40);
        string(b, name);
        string(b, value);
    }

    static void string(ByteArrayOutputStream b, String s) {
        byte[] v = s.getBytes(StandardCharsets.ISO_8859_1);
        integer(b, 0x00, 7, v.length);
        b.writeBytes(v);
    }

    static void integer(ByteArrayOutputStream b, int flags, int prefixBits, int value) {
        int max = (1 << prefixBits) - 1;
        if (value < max) {
            b.write(flags | value);
            return;
        }
        b.write(flags | max);
        value -= max;
        while (value >= 128) {
            b.write(value % 128 + 128);
            value /= 128;
        }
        b.write(value);
    }
}
