package dev.weft.http.h2;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads HTTP/2 frames, one at a time, from a blocking stream (RFC 9113 section 4 and 6). Strict: every rule that
 * a single frame can break is checked here and answered with the {@link Http2Exception} the RFC names (a frame
 * over the maximum size is a connection error whatever its type; its payload is not read). Rules that need the
 * connection's state (stream states, header blocks, flow control) are the caller's. No threads, no sockets:
 * the same reader serves a server and a client.
 */
public final class Http2FrameReader {
    /** The connection preface a client sends first (RFC 9113 section 3.4). */
    public static final byte[] PREFACE = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    /** The smallest and the largest SETTINGS_MAX_FRAME_SIZE (RFC 9113 section 6.5.2). */
    public static final int MIN_MAX_FRAME_SIZE = 16_384;
    public static final int MAX_MAX_FRAME_SIZE = (1 << 24) - 1;
    public static final int MAX_WINDOW = Integer.MAX_VALUE;

    public static final int SETTINGS_HEADER_TABLE_SIZE = 0x1;
    public static final int SETTINGS_ENABLE_PUSH = 0x2;
    public static final int SETTINGS_MAX_CONCURRENT_STREAMS = 0x3;
    public static final int SETTINGS_INITIAL_WINDOW_SIZE = 0x4;
    public static final int SETTINGS_MAX_FRAME_SIZE = 0x5;
    public static final int SETTINGS_MAX_HEADER_LIST_SIZE = 0x6;

    private final InputStream in;
    private final byte[] head = new byte[9];

    public Http2FrameReader(InputStream in) {
        this.in = in;
    }

    /**
     * Reads the client's connection preface.
     *
     * @throws Http2Exception PROTOCOL_ERROR when the bytes are not the preface
     */
    public void readPreface() throws IOException {
        // compared as bytes arrive: a short HTTP/1.1 request on an h2c-only port fails at once, not at the idle timeout
        byte[] got = new byte[PREFACE.length];
        int n = 0;
        while (n < got.length) {
            int r = in.read(got, n, got.length - n);
            if (r < 0) {
                break;
            }
            for (int i = n; i < n + r; i++) {
                if (got[i] != PREFACE[i]) {
                    throw Http2Exception.connection(Http2Error.PROTOCOL_ERROR, "not the HTTP/2 connection preface");
                }
            }
            n += r;
        }
        if (n < got.length) {
            throw Http2Exception.connection(Http2Error.PROTOCOL_ERROR, "not the HTTP/2 connection preface");
        }
    }

    /**
     * Reads the next frame.
     *
     * @param maxFrameSize the SETTINGS_MAX_FRAME_SIZE this side announced
     * @return the frame, or null when the stream ended cleanly between two frames
     * @throws EOFException   when it ended inside a frame
     * @throws Http2Exception when the frame breaks a rule of RFC 9113 section 4 or 6
     */
    public Http2Frame read(int maxFrameSize) throws IOException {
        int n = in.readNBytes(head, 0, 9);
        if (n == 0) {
            return null;
        }
        if (n < 9) {
            throw new EOFException("the connection ended inside a frame header");
        }
        int length = (head[0] & 0xff) << 16 | (head[1] & 0xff) << 8 | head[2] & 0xff;
        int type = head[3] & 0xff;
        int flags = head[4] & 0xff;
        int streamId = int31(head, 5);
        if (length > maxFrameSize) {
            throw Http2Exception.connection(Http2Error.FRAME_SIZE_ERROR,
                    "a frame of " + length + " bytes, over SETTINGS_MAX_FRAME_SIZE " + maxFrameSize);
        }
        byte[] p = in.readNBytes(length);
        if (p.length < length) {
            throw new EOFException("the connection ended inside a frame of " + length + " bytes");
        }
        return switch (type) {
            case Http2Frame.TYPE_DATA -> data(streamId, flags, p);
            case Http2Frame.TYPE_HEADERS -> headers(streamId, flags, p);
            case Http2Frame.TYPE_PRIORITY -> priority(streamId, p);
            case Http2Frame.TYPE_RST_STREAM -> rstStream(streamId, p);
            case Http2Frame.TYPE_SETTINGS -> settings(streamId, flags, p);
            case Http2Frame.TYPE_PUSH_PROMISE -> pushPromise(streamId, flags, p);
            case Http2Frame.TYPE_PING -> ping(streamId, flags, p);
            case Http2Frame.TYPE_GOAWAY -> goAway(streamId, p);
            case Http2Frame.TYPE_WINDOW_UPDATE -> windowUpdate(streamId, p);
            case Http2Frame.TYPE_CONTINUATION -> continuation(streamId, flags, p);
            default -> new Http2Frame.Unknown(type, streamId, length);
        };
    }

    private static Http2Frame data(int streamId, int flags, byte[] p) throws Http2Exception {
        onStream(streamId, "DATA");
        int from = 0;
        int to = p.length;
        if ((flags & Http2Frame.FLAG_PADDED) != 0) {
            int pad = padLength(p, "DATA");
            from = 1;
            to = p.length - pad;
        }
        byte[] data = from == 0 && to == p.length ? p : java.util.Arrays.copyOfRange(p, from, to);
        return new Http2Frame.Data(streamId, (flags & Http2Frame.FLAG_END_STREAM) != 0, data, p.length);
    }

    private static Http2Frame headers(int streamId, int flags, byte[] p) throws Http2Exception {
        onStream(streamId, "HEADERS");
        int from = 0;
        int to = p.length;
        if ((flags & Http2Frame.FLAG_PADDED) != 0) {
            int pad = padLength(p, "HEADERS");
            from = 1;
            to = p.length - pad;
        }
        Http2Frame.Priority priority = null;
        if ((flags & Http2Frame.FLAG_PRIORITY) != 0) {
            if (to - from < 5) {
                throw Http2Exception.connection(Http2Error.FRAME_SIZE_ERROR, "HEADERS too short for its priority fields");
            }
            priority = new Http2Frame.Priority(streamId, int31(p, from), (p[from] & 0x80) != 0, (p[from + 4] & 0xff) + 1);
            from += 5;
        }
        return new Http2Frame.Headers(streamId, (flags & Http2Frame.FLAG_END_STREAM) != 0,
                (flags & Http2Frame.FLAG_END_HEADERS) != 0, priority, java.util.Arrays.copyOfRange(p, from, to));
    }

    private static Http2Frame priority(int streamId, byte[] p) throws Http2Exception {
        onStream(streamId, "PRIORITY");
        if (p.length != 5) {
            throw Http2Exception.stream(streamId, Http2Error.FRAME_SIZE_ERROR, "PRIORITY of " + p.length + " bytes, not 5");
        }
        int dependsOn = int31(p, 0);
        if (dependsOn == streamId) {
            throw Http2Exception.stream(streamId, Http2Error.PROTOCOL_ERROR, "a stream cannot depend on itself");
        }
        return new Http2Frame.Priority(streamId, dependsOn, (p[0] & 0x80) != 0, (p[4] & 0xff) + 1);
    }

    private static Http2Frame rstStream(int streamId, byte[] p) throws Http2Exception {
        onStream(streamId, "RST_STREAM");
        if (p.length != 4) {
            throw Http2Exception.connection(Http2Error.FRAME_SIZE_ERROR, "RST_STREAM of " + p.length + " bytes, not 4");
        }
        int code = int32(p, 0);
        return new Http2Frame.RstStream(streamId, Http2Error.of(code), code);
    }

    private static Http2Frame settings(int streamId, int flags, byte[] p) throws Http2Exception {
        onConnection(streamId, "SETTINGS");
        boolean ack = (flags & Http2Frame.FLAG_ACK) != 0;
        if (ack && p.length != 0) {
            throw Http2Exception.connection(Http2Error.FRAME_SIZE_ERROR, "a SETTINGS acknowledgement with a payload");
        }
        if (p.length % 6 != 0) {
            throw Http2Exception.connection(Http2Error.FRAME_SIZE_ERROR, "SETTINGS of " + p.length + " bytes, not a multiple of 6");
        }
        List<Http2Frame.Setting> values = new ArrayList<>(p.length / 6);
        for (int i = 0; i < p.length; i += 6) {
            int id = (p[i] & 0xff) << 8 | p[i + 1] & 0xff;
            long value = int32(p, i + 2) & 0xffffffffL;
            switch (id) {
                case SETTINGS_ENABLE_PUSH -> {
                    if (value > 1) {
                        throw Http2Exception.connection(Http2Error.PROTOCOL_ERROR, "SETTINGS_ENABLE_PUSH " + value);
                    }
                }
                case SETTINGS_INITIAL_WINDOW_SIZE -> {
                    if (value > MAX_WINDOW) {
                        throw Http2Exception.connection(Http2Error.FLOW_CONTROL_ERROR,
                                "SETTINGS_INITIAL_WINDOW_SIZE " + value + " over 2^31-1");
                    }
                }
                case SETTINGS_MAX_FRAME_SIZE -> {
                    if (value < MIN_MAX_FRAME_SIZE || value > MAX_MAX_FRAME_SIZE) {
                        throw Http2Exception.connection(Http2Error.PROTOCOL_ERROR, "SETTINGS_MAX_FRAME_SIZE " + value);
                    }
                }
                default -> {
                    // known ones take any value; unknown ones are ignored by the caller (RFC 9113 section 6.5.2)
                }
            }
            values.add(new Http2Frame.Setting(id, value));
        }
        return new Http2Frame.Settings(ack, List.copyOf(values));
    }

    private static Http2Frame pushPromise(int streamId, int flags, byte[] p) throws Http2Exception {
        onStream(streamId, "PUSH_PROMISE");
        int from = (flags & Http2Frame.FLAG_PADDED) != 0 ? 1 : 0;
        if (from == 1) {
            padLength(p, "PUSH_PROMISE");
        }
        if (p.length - from < 4) {
            throw Http2Exception.connection(Http2Error.FRAME_SIZE_ERROR, "PUSH_PROMISE too short");
        }
        return new Http2Frame.PushPromise(streamId, int31(p, from));
    }

    private static Http2Frame ping(int streamId, int flags, byte[] p) throws Http2Exception {
        onConnection(streamId, "PING");
        if (p.length != 8) {
            throw Http2Exception.connection(Http2Error.FRAME_SIZE_ERROR, "PING of " + p.length + " bytes, not 8");
        }
        long v = (long) int32(p, 0) << 32 | int32(p, 4) & 0xffffffffL;
        return new Http2Frame.Ping((flags & Http2Frame.FLAG_ACK) != 0, v);
    }

    private static Http2Frame goAway(int streamId, byte[] p) throws Http2Exception {
        onConnection(streamId, "GOAWAY");
        if (p.length < 8) {
            throw Http2Exception.connection(Http2Error.FRAME_SIZE_ERROR, "GOAWAY of " + p.length + " bytes, under 8");
        }
        return new Http2Frame.GoAway(int31(p, 0), Http2Error.of(int32(p, 4)), java.util.Arrays.copyOfRange(p, 8, p.length));
    }

    private static Http2Frame windowUpdate(int streamId, byte[] p) throws Http2Exception {
        if (p.length != 4) {
            throw Http2Exception.connection(Http2Error.FRAME_SIZE_ERROR, "WINDOW_UPDATE of " + p.length + " bytes, not 4");
        }
        int increment = int31(p, 0);
        if (increment == 0) {
            String m = "WINDOW_UPDATE with an increment of 0";
            throw streamId == 0 ? Http2Exception.connection(Http2Error.PROTOCOL_ERROR, m)
                    : Http2Exception.stream(streamId, Http2Error.PROTOCOL_ERROR, m);
        }
        return new Http2Frame.WindowUpdate(streamId, increment);
    }

    private static Http2Frame continuation(int streamId, int flags, byte[] p) throws Http2Exception {
        onStream(streamId, "CONTINUATION");
        return new Http2Frame.Continuation(streamId, (flags & Http2Frame.FLAG_END_HEADERS) != 0, p);
    }

    private static int padLength(byte[] p, String type) throws Http2Exception {
        if (p.length < 1) {
            throw Http2Exception.connection(Http2Error.FRAME_SIZE_ERROR, "a padded " + type + " without its pad length");
        }
        int pad = p[0] & 0xff;
        if (pad >= p.length) {
            throw Http2Exception.connection(Http2Error.PROTOCOL_ERROR,
                    type + " padding of " + pad + " bytes in a payload of " + p.length);
        }
        return pad;
    }

    private static void onStream(int streamId, String type) throws Http2Exception {
        if (streamId == 0) {
            throw Http2Exception.connection(Http2Error.PROTOCOL_ERROR, type + " on stream 0");
        }
    }

    private static void onConnection(int streamId, String type) throws Http2Exception {
        if (streamId != 0) {
            throw Http2Exception.connection(Http2Error.PROTOCOL_ERROR, type + " on stream " + streamId + ", not 0");
        }
    }

    static int int31(byte[] b, int i) {
        return int32(b, i) & 0x7fffffff;
    }

    static int int32(byte[] b, int i) {
        return (b[i] & 0xff) << 24 | (b[i + 1] & 0xff) << 16 | (b[i + 2] & 0xff) << 8 | b[i + 3] & 0xff;
    }
}
