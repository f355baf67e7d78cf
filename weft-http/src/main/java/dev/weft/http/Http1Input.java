package dev.weft.http;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;

/**
 * The read side of one HTTP/1.1 connection: a single buffer over the socket's stream, lines that must end
 * in CRLF, and body reads that take what is buffered first and then go straight to the stream. Not
 * thread-safe: one reader at a time (a connection's own thread).
 *
 * <p>The buffer starts small (a server holds one per open connection for as long as it lives) and grows
 * only while one line does not fit, up to that line's limit.
 */
public final class Http1Input {
    private final InputStream in;
    private byte[] buf;
    private int pos;
    private int lim;
    private long totalRead;
    /** The last line from {@link #nextLine}: {@code buf[lineStart, lineEnd)}, without its CRLF. */
    int lineStart;
    int lineEnd;

    /**
     * @param bufferBytes the initial buffer (grows for a line longer than it)
     */
    public Http1Input(InputStream in, int bufferBytes) {
        this.in = in;
        this.buf = new byte[Math.max(64, bufferBytes)];
    }

    byte[] buffer() {
        return buf;
    }

    /** Bytes read from the stream since this input was made. */
    public long totalRead() {
        return totalRead;
    }

    /** Bytes handed out so far (read from the stream and consumed, not merely buffered). */
    public long consumed() {
        return totalRead - (lim - pos);
    }

    /** Whether bytes are buffered that nobody consumed yet (a pipelined request). */
    public boolean hasBuffered() {
        return pos < lim;
    }

    /**
     * Reads the next line into {@link #lineStart}/{@link #lineEnd}. A line ends with CRLF; a bare LF is
     * refused (400), and so is a line longer than {@code max} bytes with its CRLF.
     *
     * @param eofAtStart what to do when the stream ends before the line's first byte: true returns false,
     *                   false throws {@link EOFException}
     * @param tooLong    the status to throw when the line is longer than {@code max}
     * @param what       names the line in messages ("request line", "header section", ...)
     * @param shownLimit the limit that messages name (the whole head's, where {@code max} is what is left of it)
     * @return false only at the end of the stream before the line's first byte (with {@code eofAtStart})
     */
    boolean nextLine(int max, boolean eofAtStart, int tooLong, String what, int shownLimit) throws IOException {
        int scanned = 0;
        while (true) {
            int limit = Math.min(lim, pos + max);
            for (int i = pos + scanned; i < limit; i++) {
                if (buf[i] == '\n') {
                    if (i == pos || buf[i - 1] != '\r') {
                        throw new HttpCodecException(400, what + ": a line ends in a bare LF (CRLF required)");
                    }
                    lineStart = pos;
                    lineEnd = i - 1;
                    pos = i + 1;
                    return true;
                }
            }
            scanned = limit - pos;
            if (scanned >= max) {
                throw new HttpCodecException(tooLong, what + " over the limit of " + shownLimit + " bytes");
            }
            if (pos > 0 && lim == buf.length) { // make room at the end
                System.arraycopy(buf, pos, buf, 0, lim - pos);
                lim -= pos;
                pos = 0;
            }
            if (lim == buf.length) {
                buf = Arrays.copyOf(buf, (int) Math.min((long) buf.length * 2, (long) max + 1));
            }
            int r = in.read(buf, lim, buf.length - lim);
            if (r < 0) {
                if (eofAtStart && scanned == 0) {
                    return false;
                }
                throw new EOFException("connection closed in the middle of the " + what);
            }
            totalRead += r;
            lim += r;
        }
    }

    /**
     * Reads up to {@code len} bytes: buffered ones first, else straight from the stream.
     *
     * @return the count, or -1 at the end of the stream
     */
    public int read(byte[] dst, int off, int len) throws IOException {
        if (len == 0) {
            return 0;
        }
        if (pos < lim) {
            int k = Math.min(len, lim - pos);
            System.arraycopy(buf, pos, dst, off, k);
            pos += k;
            return k;
        }
        if (len < buf.length) { // a small read: fill the buffer, which may also hold what follows
            pos = 0;
            lim = 0;
            int r = in.read(buf, 0, buf.length);
            if (r < 0) {
                return -1;
            }
            totalRead += r;
            lim = r;
            int k = Math.min(len, r);
            System.arraycopy(buf, 0, dst, off, k);
            pos = k;
            return k;
        }
        int r = in.read(dst, off, len); // straight into the destination: no copy
        if (r > 0) {
            totalRead += r;
        }
        return r;
    }

    /** Reads exactly {@code len} bytes. */
    public void readFully(byte[] dst, int off, int len, String what) throws IOException {
        while (len > 0) {
            int r = read(dst, off, len);
            if (r < 0) {
                throw new EOFException("connection closed in the middle of the " + what);
            }
            off += r;
            len -= r;
        }
    }

    /** Consumes exactly {@code n} bytes without keeping them. */
    public void skip(long n, String what) throws IOException {
        while (n > 0) {
            if (pos == lim) {
                pos = 0;
                lim = 0;
                int r = in.read(buf, 0, buf.length);
                if (r < 0) {
                    throw new EOFException("connection closed in the middle of the " + what);
                }
                totalRead += r;
                lim = r;
            }
            int k = (int) Math.min(n, lim - pos);
            pos += k;
            n -= k;
        }
    }

    /**
     * One read of whatever the peer sends next into the free end of the buffer (for a server that watches
     * for the peer leaving while an answer is pending).
     *
     * @return bytes read, -1 at the end of the stream, 0 when the buffer has no room
     */
    public int readMore() throws IOException {
        if (pos == lim) {
            pos = 0;
            lim = 0;
        }
        if (lim == buf.length) {
            return 0;
        }
        int r = in.read(buf, lim, buf.length - lim);
        if (r > 0) {
            totalRead += r;
            lim += r;
        }
        return r;
    }
}
