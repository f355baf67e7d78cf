package dev.weft.core.http;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Reads HTTP/1.1 requests from one connection, with its own buffer (no lock per byte), within limits:
 * request line and headers at most {@code maxHeadBytes} (else 431), a body at most {@code maxBodyBytes}
 * (else 413). Used by the gateway's server and by weft-sim.
 */
public final class Http1Reader {
    private final InputStream in;
    private final int maxHeadBytes;
    /**
     * Small on purpose: a server holds one per open connection for as long as the connection lives (the
     * gateway at 4,800 requests in flight held 39 MB of 8 KiB buffers, copied by every young collection
     * while the backends were slow). A head is parsed line by line, so it may be longer than the buffer;
     * a body read larger than the buffer bypasses it.
     */
    static final int BUFFER_BYTES = 2048;
    private final byte[] buf = new byte[BUFFER_BYTES];
    private int pos;
    private int lim;

    public Http1Reader(InputStream in, int maxHeadBytes) {
        this.in = in;
        this.maxHeadBytes = maxHeadBytes;
    }

    /** Reads the next request head; null when the peer closed the connection between requests. */
    public RequestHead readHead() throws IOException, HttpParseException {
        int[] budget = {maxHeadBytes};
        String line = readLine(budget, true);
        while (line != null && line.isEmpty()) { // tolerate stray CRLF between requests
            line = readLine(budget, true);
        }
        if (line == null) {
            return null;
        }
        int s1 = line.indexOf(' ');
        int s2 = line.lastIndexOf(' ');
        if (s1 <= 0 || s2 <= s1 + 1 || !line.startsWith("HTTP/1.", s2 + 1)) {
            throw new HttpParseException(400, "malformed request line");
        }
        String method = line.substring(0, s1);
        String target = line.substring(s1 + 1, s2);
        boolean http10 = line.endsWith("HTTP/1.0");
        List<Map.Entry<String, String>> headers = new ArrayList<>(12);
        while (true) {
            String h = readLine(budget, false);
            if (h.isEmpty()) {
                break;
            }
            int colon = h.indexOf(':');
            if (colon <= 0) {
                throw new HttpParseException(400, "malformed header line");
            }
            headers.add(Map.entry(h.substring(0, colon).strip().toLowerCase(Locale.ROOT), h.substring(colon + 1).strip()));
        }
        int q = target.indexOf('?');
        String path = q < 0 ? target : target.substring(0, q);
        String query = q < 0 ? "" : target.substring(q + 1);
        if (path.startsWith("http://") || path.startsWith("https://")) { // absolute form
            int slash = path.indexOf('/', path.indexOf("//") + 2);
            path = slash < 0 ? "/" : path.substring(slash);
        }
        return new RequestHead(method, target, path, query, http10, List.copyOf(headers));
    }

    /**
     * Reads the body that {@code head} announces (Content-Length or chunked).
     *
     * @param keep false to count and discard the bytes (the result is then empty)
     * @return the body, or an empty array when discarded
     * @throws HttpParseException 413 over {@code maxBodyBytes}, 400 when malformed
     */
    public Body readBody(RequestHead head, long maxBodyBytes, boolean keep) throws IOException, HttpParseException {
        String te = head.header("transfer-encoding");
        if (te != null && te.toLowerCase(Locale.ROOT).contains("chunked")) {
            return readChunked(maxBodyBytes, keep);
        }
        String cl = head.header("content-length");
        if (cl == null) {
            return Body.EMPTY;
        }
        long n;
        try {
            n = Long.parseLong(cl.strip());
        } catch (NumberFormatException e) {
            throw new HttpParseException(400, "malformed Content-Length");
        }
        if (n < 0) {
            throw new HttpParseException(400, "malformed Content-Length");
        }
        if (n > maxBodyBytes) {
            throw new HttpParseException(413, "request body of " + n + " bytes is over the limit of " + maxBodyBytes);
        }
        if (!keep) {
            skip(n);
            return new Body(new byte[0], n);
        }
        byte[] b = new byte[(int) n];
        readFully(b, 0, b.length);
        return new Body(b, n);
    }

    /** A request body: its bytes (empty when discarded) and its length. */
    public record Body(byte[] bytes, long length) {
        public static final Body EMPTY = new Body(new byte[0], 0);
    }

    private Body readChunked(long max, boolean keep) throws IOException, HttpParseException {
        java.io.ByteArrayOutputStream out = keep ? new java.io.ByteArrayOutputStream() : null;
        long total = 0;
        int[] budget = {maxHeadBytes};
        while (true) {
            String sizeLine = readLine(budget, false);
            int semi = sizeLine.indexOf(';');
            long size;
            try {
                size = Long.parseLong((semi < 0 ? sizeLine : sizeLine.substring(0, semi)).strip(), 16);
            } catch (NumberFormatException e) {
                throw new HttpParseException(400, "malformed chunk size");
            }
            if (size < 0) {
                throw new HttpParseException(400, "malformed chunk size");
            }
            if (size == 0) {
                while (!readLine(budget, false).isEmpty()) {
                    // trailers are read and dropped
                }
                return new Body(keep ? out.toByteArray() : new byte[0], total);
            }
            total += size;
            if (total > max) {
                throw new HttpParseException(413, "request body is over the limit of " + max + " bytes");
            }
            if (keep) {
                byte[] chunk = new byte[(int) size];
                readFully(chunk, 0, chunk.length);
                out.write(chunk, 0, chunk.length);
            } else {
                skip(size);
            }
            readLine(budget, false); // CRLF after the chunk
        }
    }

    /** Bytes already read from the socket but not yet consumed (a pipelined request). */
    public boolean hasBuffered() {
        return pos < lim;
    }

    /**
     * Waits up to {@code millis} for the peer to close the connection, buffering anything it sends.
     *
     * @return true when the peer closed it (or reset it), false when the time passed or data arrived
     */
    public boolean peerClosedWithin(Socket socket, int millis) throws IOException {
        if (lim == buf.length) {
            return false; // no room to buffer more: cannot watch
        }
        if (pos == lim) {
            pos = 0;
            lim = 0;
        }
        socket.setSoTimeout(Math.max(1, millis));
        try {
            int n = in.read(buf, lim, buf.length - lim);
            if (n < 0) {
                return true;
            }
            lim += n;
            return false;
        } catch (SocketTimeoutException timeout) {
            return false;
        } catch (IOException reset) {
            return true;
        } finally {
            socket.setSoTimeout(0);
        }
    }

    private String readLine(int[] budget, boolean eofAllowed) throws IOException, HttpParseException {
        StringBuilder sb = new StringBuilder(64);
        while (true) {
            if (pos == lim && !fill()) {
                if (eofAllowed && sb.isEmpty()) {
                    return null;
                }
                throw new EOFException("connection closed mid-request");
            }
            int c = buf[pos++] & 0xff;
            if (--budget[0] < 0) {
                throw new HttpParseException(431, "request line and headers over " + maxHeadBytes + " bytes");
            }
            if (c == '\n') {
                int n = sb.length();
                if (n > 0 && sb.charAt(n - 1) == '\r') {
                    sb.setLength(n - 1);
                }
                return sb.toString();
            }
            sb.append((char) c);
        }
    }

    private boolean fill() throws IOException {
        int n = in.read(buf, 0, buf.length);
        if (n <= 0) {
            return false;
        }
        pos = 0;
        lim = n;
        return true;
    }

    private void readFully(byte[] b, int off, int len) throws IOException {
        while (len > 0) {
            if (pos == lim && len >= buf.length) {
                int n = in.read(b, off, len); // straight into the body: no copy, fewer reads
                if (n <= 0) {
                    throw new EOFException("connection closed mid-body");
                }
                off += n;
                len -= n;
                continue;
            }
            if (pos == lim && !fill()) {
                throw new EOFException("connection closed mid-body");
            }
            int take = Math.min(len, lim - pos);
            System.arraycopy(buf, pos, b, off, take);
            pos += take;
            off += take;
            len -= take;
        }
    }

    private void skip(long n) throws IOException {
        long left = n;
        while (left > 0) {
            if (pos == lim && !fill()) {
                throw new EOFException("connection closed mid-body");
            }
            int take = (int) Math.min(left, lim - pos);
            pos += take;
            left -= take;
        }
    }
}
