package dev.weft.server;

import dev.weft.http.Body;
import dev.weft.http.Http1;
import dev.weft.http.Http1Input;
import dev.weft.http.HttpCodecException;
import dev.weft.http.Http1Request;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;

/**
 * Reads HTTP/1.1 requests from one connection with weft-http's strict codec ({@link Http1}): request line
 * and headers at most {@code maxHeadBytes} (else 431, or 414 for the request line alone), at most
 * {@link Http1#MAX_REQUEST_FIELDS} header fields, a body at most the given limit (else 413). Any framing
 * error is an {@link HttpCodecException} with the status to answer; the connection must then be closed.
 * Used by the gateway's server and by weft-upstream.
 */
public final class Http1Reader {
    /**
     * Small on purpose: a server holds one per open connection for as long as the connection lives (the
     * gateway at 4,800 requests in flight held 39 MB of 8 KiB buffers, copied by every young collection
     * while the backends were slow). It grows only while one line of a head does not fit; a body read larger
     * than it bypasses it.
     */
    static final int BUFFER_BYTES = 2048;
    private final Http1Input in;
    private final int maxHeadBytes;

    public Http1Reader(InputStream in, int maxHeadBytes) {
        this.in = new Http1Input(in, BUFFER_BYTES);
        this.maxHeadBytes = maxHeadBytes;
    }

    /** Reads the next request head; null when the peer closed the connection between requests. */
    public Http1Request readHead() throws IOException {
        return Http1.readRequestHead(in, maxHeadBytes, Http1.MAX_REQUEST_FIELDS);
    }

    /**
     * Reads the body that {@code head} announces (Content-Length or chunked).
     *
     * @param keep false to count and discard the bytes (the result is then empty)
     * @throws HttpCodecException 413 over {@code maxBodyBytes}, 400 when malformed
     */
    public Body readBody(Http1Request head, long maxBodyBytes, boolean keep) throws IOException {
        return Http1.readBody(in, head.framing(), maxBodyBytes, keep);
    }

    /** The next body, framed as {@code framing} says, to be read run by run ({@link Http1BodyStream}). */
    Http1.BodyRuns bodyRuns(dev.weft.http.Framing framing, int maxRun) {
        return new Http1.BodyRuns(in, framing, maxRun);
    }

    /** What follows the last request read: bytes buffered here first, then the socket's (a protocol switch). */
    public InputStream rest() {
        return new InputStream() {
            @Override
            public int read() throws IOException {
                byte[] one = new byte[1];
                return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
            }

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                return in.read(b, off, len);
            }
        };
    }

    /** Bytes already read from the socket but not yet consumed (a pipelined request). */
    public boolean hasBuffered() {
        return in.hasBuffered();
    }

    /**
     * Waits up to {@code millis} for the peer to close the connection, buffering anything it sends.
     *
     * @return true when the peer closed it (or reset it), false when the time passed or data arrived
     */
    public boolean peerClosedWithin(Socket socket, int millis) throws IOException {
        socket.setSoTimeout(Math.max(1, millis));
        try {
            return in.readMore() < 0;
        } catch (SocketTimeoutException timeout) {
            return false;
        } catch (IOException reset) {
            return true;
        } finally {
            socket.setSoTimeout(0);
        }
    }
}
