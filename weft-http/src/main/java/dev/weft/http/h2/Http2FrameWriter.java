package dev.weft.http.h2;

import java.io.IOException;
import java.io.OutputStream;
import java.util.List;

/**
 * Writes HTTP/2 frames (RFC 9113 section 6) to a stream; no flushing, no locking (the caller holds the one lock
 * per connection that keeps frames, and a header block's HEADERS and CONTINUATION frames, together).
 */
public final class Http2FrameWriter {
    private Http2FrameWriter() {
    }

    /** Any frame: the 9-byte header, then {@code payload[off, off + len)}. */
    public static void frame(OutputStream out, int type, int flags, int streamId, byte[] payload, int off, int len)
            throws IOException {
        if (len < 0 || len > Http2FrameReader.MAX_MAX_FRAME_SIZE) {
            throw new IllegalArgumentException("a frame payload of " + len + " bytes");
        }
        byte[] h = {(byte) (len >>> 16), (byte) (len >>> 8), (byte) len, (byte) type, (byte) flags,
                (byte) (streamId >>> 24 & 0x7f), (byte) (streamId >>> 16), (byte) (streamId >>> 8), (byte) streamId};
        out.write(h);
        if (len > 0) {
            out.write(payload, off, len);
        }
    }

    public static void data(OutputStream out, int streamId, boolean endStream, byte[] data, int off, int len)
            throws IOException {
        frame(out, Http2Frame.TYPE_DATA, endStream ? Http2Frame.FLAG_END_STREAM : 0, streamId, data, off, len);
    }

    /** A header block as one HEADERS frame and as many CONTINUATION frames as {@code maxFrameSize} asks for. */
    public static void headers(OutputStream out, int streamId, boolean endStream, byte[] block, int maxFrameSize)
            throws IOException {
        int first = Math.min(block.length, maxFrameSize);
        int flags = (endStream ? Http2Frame.FLAG_END_STREAM : 0) | (first == block.length ? Http2Frame.FLAG_END_HEADERS : 0);
        frame(out, Http2Frame.TYPE_HEADERS, flags, streamId, block, 0, first);
        for (int off = first; off < block.length; ) {
            int n = Math.min(block.length - off, maxFrameSize);
            frame(out, Http2Frame.TYPE_CONTINUATION, off + n == block.length ? Http2Frame.FLAG_END_HEADERS : 0,
                    streamId, block, off, n);
            off += n;
        }
    }

    public static void rstStream(OutputStream out, int streamId, Http2Error error) throws IOException {
        frame(out, Http2Frame.TYPE_RST_STREAM, 0, streamId, int32(error.code()), 0, 4);
    }

    public static void settings(OutputStream out, List<Http2Frame.Setting> values) throws IOException {
        byte[] p = new byte[values.size() * 6];
        int i = 0;
        for (Http2Frame.Setting s : values) {
            p[i] = (byte) (s.id() >>> 8);
            p[i + 1] = (byte) s.id();
            System.arraycopy(int32((int) s.value()), 0, p, i + 2, 4);
            i += 6;
        }
        frame(out, Http2Frame.TYPE_SETTINGS, 0, 0, p, 0, p.length);
    }

    public static void settingsAck(OutputStream out) throws IOException {
        frame(out, Http2Frame.TYPE_SETTINGS, Http2Frame.FLAG_ACK, 0, new byte[0], 0, 0);
    }

    public static void ping(OutputStream out, boolean ack, long payload) throws IOException {
        byte[] p = new byte[8];
        System.arraycopy(int32((int) (payload >>> 32)), 0, p, 0, 4);
        System.arraycopy(int32((int) payload), 0, p, 4, 4);
        frame(out, Http2Frame.TYPE_PING, ack ? Http2Frame.FLAG_ACK : 0, 0, p, 0, 8);
    }

    public static void goAway(OutputStream out, int lastStreamId, Http2Error error, String debug) throws IOException {
        byte[] d = debug == null ? new byte[0] : debug.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        byte[] p = new byte[8 + d.length];
        System.arraycopy(int32(lastStreamId & 0x7fffffff), 0, p, 0, 4);
        System.arraycopy(int32(error.code()), 0, p, 4, 4);
        System.arraycopy(d, 0, p, 8, d.length);
        frame(out, Http2Frame.TYPE_GOAWAY, 0, 0, p, 0, p.length);
    }

    public static void windowUpdate(OutputStream out, int streamId, int increment) throws IOException {
        if (increment < 1) {
            throw new IllegalArgumentException("a window increment of " + increment);
        }
        frame(out, Http2Frame.TYPE_WINDOW_UPDATE, 0, streamId, int32(increment), 0, 4);
    }

    static byte[] int32(int v) {
        return new byte[]{(byte) (v >>> 24), (byte) (v >>> 16), (byte) (v >>> 8), (byte) v};
    }
}
