package dev.weft.http.h2;

/**
 * One HTTP/2 frame as {@link Http2FrameReader} accepted it (RFC 9113 section 6): the frame-local rules (lengths,
 * stream id zero or not, padding, setting values) already hold. Padding is removed; {@link Data#flowLength()} keeps
 * the length that counts against flow control.
 */
public sealed interface Http2Frame {
    int TYPE_DATA = 0x0;
    int TYPE_HEADERS = 0x1;
    int TYPE_PRIORITY = 0x2;
    int TYPE_RST_STREAM = 0x3;
    int TYPE_SETTINGS = 0x4;
    int TYPE_PUSH_PROMISE = 0x5;
    int TYPE_PING = 0x6;
    int TYPE_GOAWAY = 0x7;
    int TYPE_WINDOW_UPDATE = 0x8;
    int TYPE_CONTINUATION = 0x9;

    int FLAG_END_STREAM = 0x1;
    int FLAG_ACK = 0x1;
    int FLAG_END_HEADERS = 0x4;
    int FLAG_PADDED = 0x8;
    int FLAG_PRIORITY = 0x20;

    /** The frame's stream, 0 for the connection. */
    int streamId();

    /** @param flowLength the whole payload's length, padding included (what flow control counts) */
    record Data(int streamId, boolean endStream, byte[] data, int flowLength) implements Http2Frame {
    }

    /** A HEADERS frame; {@code priority} null when it carries none. */
    record Headers(int streamId, boolean endStream, boolean endHeaders, Priority priority, byte[] block)
            implements Http2Frame {
    }

    /** The priority fields of a HEADERS or PRIORITY frame (deprecated by RFC 9113, still parsed and checked). */
    record Priority(int streamId, int dependsOn, boolean exclusive, int weight) implements Http2Frame {
    }

    record RstStream(int streamId, Http2Error error, int code) implements Http2Frame {
    }

    /** @param values the settings in the order sent (a later value of the same identifier wins) */
    record Settings(boolean ack, java.util.List<Setting> values) implements Http2Frame {
        @Override
        public int streamId() {
            return 0;
        }
    }

    record Setting(int id, long value) {
    }

    record PushPromise(int streamId, int promisedStreamId) implements Http2Frame {
    }

    record Ping(boolean ack, long payload) implements Http2Frame {
        @Override
        public int streamId() {
            return 0;
        }
    }

    record GoAway(int lastStreamId, Http2Error error, byte[] debug) implements Http2Frame {
        @Override
        public int streamId() {
            return 0;
        }
    }

    record WindowUpdate(int streamId, int increment) implements Http2Frame {
    }

    record Continuation(int streamId, boolean endHeaders, byte[] block) implements Http2Frame {
    }

    /** A frame of a type this codec does not know: to be ignored (RFC 9113 section 5.5), unless inside a header block. */
    record Unknown(int type, int streamId, int length) implements Http2Frame {
    }
}
