package dev.weft.http;

import java.io.IOException;

/**
 * Bytes that break HTTP/1.1 (or a limit). A server answers {@link #status()} and closes the connection; a
 * client fails the call as a protocol error. The only exception the codec throws besides the stream's own
 * I/O errors ({@link java.io.EOFException} when the peer closed mid-message).
 */
public class HttpCodecException extends IOException {
    private final int status;

    /**
     * @param status what a server answers: 400 malformed, 413 body over the limit, 414 request line over the
     *               limit, 431 head over the limit, 501 unknown transfer coding, 505 not HTTP/1.x
     */
    public HttpCodecException(int status, String message) {
        super(message);
        this.status = status;
    }

    public int status() {
        return status;
    }

    /** No stack trace: crafted input can make many of these, and the message says everything. */
    @Override
    public Throwable fillInStackTrace() {
        return this;
    }

    /** A body longer than the reader's limit (status 413). */
    public static final class BodyTooLarge extends HttpCodecException {
        public BodyTooLarge(String message) {
            super(413, message);
        }
    }
}
