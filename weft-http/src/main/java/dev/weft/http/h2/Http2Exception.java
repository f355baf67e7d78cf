package dev.weft.http.h2;

import java.io.IOException;

/**
 * A peer broke HTTP/2 (RFC 9113 section 5.4): a connection error ({@link #streamId()} 0: GOAWAY and close) or a
 * stream error (RST_STREAM on that stream, the connection goes on). The only exception the codec throws besides
 * the stream's own I/O errors.
 */
public final class Http2Exception extends IOException {
    private final Http2Error error;
    private final int streamId;

    private Http2Exception(Http2Error error, int streamId, String message) {
        super(message);
        this.error = error;
        this.streamId = streamId;
    }

    public static Http2Exception connection(Http2Error error, String message) {
        return new Http2Exception(error, 0, message);
    }

    public static Http2Exception stream(int streamId, Http2Error error, String message) {
        if (streamId == 0) {
            throw new IllegalArgumentException("a stream error needs a stream");
        }
        return new Http2Exception(error, streamId, message);
    }

    public Http2Error error() {
        return error;
    }

    /** The stream to reset, or 0 for a connection error. */
    public int streamId() {
        return streamId;
    }

    public boolean isConnectionError() {
        return streamId == 0;
    }

    /** No stack trace: crafted input can make many of these, and the message says everything. */
    @Override
    public Throwable fillInStackTrace() {
        return this;
    }
}
