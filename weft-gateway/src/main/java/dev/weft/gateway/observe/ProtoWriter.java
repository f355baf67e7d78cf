package dev.weft.gateway.observe;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The protobuf wire format, written forward into one growable buffer: a field's tag, then a varint, 8 or 4
 * bytes, or a length and that many bytes. A nested message's length is reserved as one byte by {@link #begin}
 * and the message moved up by {@link #end} only in the rare case it is longer than 127 bytes, so that a message
 * is written in one pass. Not thread-safe.
 */
final class ProtoWriter {
    private byte[] buf;
    private int pos;

    ProtoWriter(int capacity) {
        buf = new byte[capacity];
    }

    /** Forgets what was written; the buffer is kept. */
    void reset() {
        pos = 0;
    }

    /** What was written: the buffer itself when it is exactly full, else a copy of its length. */
    byte[] exact() {
        return pos == buf.length ? buf : toByteArray();
    }

    /** What was written, in a new array of its length. */
    byte[] toByteArray() {
        return Arrays.copyOf(buf, pos);
    }

    void tag(int field, int wireType) {
        varint((field << 3) | wireType);
    }

    void varint(long v) {
        ensure(10);
        while ((v & ~0x7FL) != 0) {
            buf[pos++] = (byte) ((v & 0x7F) | 0x80);
            v >>>= 7;
        }
        buf[pos++] = (byte) v;
    }

    /** A varint field, left out when 0 (the proto3 default). */
    void uint(int field, long v) {
        if (v != 0) {
            tag(field, 0);
            varint(v);
        }
    }

    /** A varint field written even when 0 (a member of a oneof). */
    void int64(int field, long v) {
        tag(field, 0);
        varint(v);
    }

    void fixed64(int field, long v) {
        tag(field, 1);
        ensure(8);
        for (int i = 0; i < 8; i++) {
            buf[pos++] = (byte) (v >>> (8 * i));
        }
    }

    void fixed32(int field, int v) {
        tag(field, 5);
        ensure(4);
        for (int i = 0; i < 4; i++) {
            buf[pos++] = (byte) (v >>> (8 * i));
        }
    }

    /** A bytes field of 8 bytes: a span id, big-endian as in its hex form. */
    void id8(int field, long id) {
        tag(field, 2);
        varint(8);
        be64(id);
    }

    /** A bytes field of 16 bytes: a trace id. */
    void id16(int field, long hi, long lo) {
        tag(field, 2);
        varint(16);
        be64(hi);
        be64(lo);
    }

    private void be64(long v) {
        ensure(8);
        for (int i = 7; i >= 0; i--) {
            buf[pos++] = (byte) (v >>> (8 * i));
        }
    }

    /** A string field, left out when null or empty (the proto3 default). */
    void string(int field, String s) {
        if (s != null && !s.isEmpty()) {
            utf8(field, s);
        }
    }

    /** A string field written even when empty (a member of a oneof: an AnyValue's string_value). */
    void utf8(int field, String s) {
        tag(field, 2);
        int n = s.length();
        // ASCII, the usual case, is written straight from the chars; anything else through its UTF-8 bytes
        ensure(5 + n);
        int lengthAt = pos;
        int p = pos + varintSize(n);
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            if (c >= 0x80) {
                byte[] b = s.getBytes(StandardCharsets.UTF_8);
                pos = lengthAt;
                varint(b.length);
                bytes(b, 0, b.length);
                return;
            }
            buf[p + i] = (byte) c;
        }
        varint(n);
        pos += n;
    }

    /** Raw bytes: {@code b[from..from+n)}. */
    void bytes(byte[] b, int from, int n) {
        ensure(n);
        System.arraycopy(b, from, buf, pos, n);
        pos += n;
    }

    /** Starts a nested message of {@code field}: its tag, and one byte reserved for its length. */
    int begin(int field) {
        tag(field, 2);
        ensure(1);
        return pos++;
    }

    /** Ends the message {@link #begin} started at {@code lengthAt}: writes its length, moving it up if need be. */
    void end(int lengthAt) {
        int len = pos - lengthAt - 1;
        if (len < 0x80) {
            buf[lengthAt] = (byte) len;
            return;
        }
        int extra = varintSize(len) - 1;
        ensure(extra);
        System.arraycopy(buf, lengthAt + 1, buf, lengthAt + 1 + extra, len);
        pos += extra;
        int p = lengthAt;
        long v = len;
        while ((v & ~0x7FL) != 0) {
            buf[p++] = (byte) ((v & 0x7F) | 0x80);
            v >>>= 7;
        }
        buf[p] = (byte) v;
    }

    static int varintSize(long v) {
        int n = 1;
        while ((v & ~0x7FL) != 0) {
            v >>>= 7;
            n++;
        }
        return n;
    }

    private void ensure(int n) {
        if (pos + n > buf.length) {
            buf = Arrays.copyOf(buf, Math.max(buf.length * 2, pos + n));
        }
    }
}
