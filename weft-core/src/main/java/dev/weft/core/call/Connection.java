package dev.weft.core.call;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * One HTTP/1.1 client connection: writes a request, reads the answer's head and body from a single
 * buffer. Blocking, meant for a virtual thread; it is used by one exchange at a time (the pool hands it
 * out), and {@link #abort()} may be called from any thread to wake a blocked read or write.
 *
 * <p>Why our own and not Apache HttpClient: in `weft lab system-a` at 1 s the gateway holds 14,400
 * pooled connections and 14,400 calls parked in reads. Apache kept ~16 KiB of buffers and a few dozen
 * objects per connection and per exchange, and its ~25-frame call chain is copied to the heap each time
 * a virtual thread parks; the gateway spent a third of its CPU in GC. This class keeps one small read
 * buffer per connection and parks a few frames deep.
 */
final class Connection {
    /** Initial read buffer; grows for a long head (up to {@link #MAX_HEAD_BYTES}). */
    static final int BUFFER_BYTES = 2048;
    /** Longest response head (status line and headers) accepted. */
    static final int MAX_HEAD_BYTES = 64 * 1024;
    /** Most header fields accepted in one response head. */
    static final int MAX_HEADERS = 256;

    /** The answer's head and how its body is framed. */
    record Head(int status, Headers headers, long contentLength, boolean chunked, boolean keepAlive) {
        static final long UNTIL_CLOSE = -2;
        static final long NONE = -1;
    }

    /** The peer broke HTTP/1.1. */
    static final class ProtocolException extends IOException {
        ProtocolException(String message) {
            super(message);
        }
    }

    /** The peer closed the connection (or reset it) before the whole answer arrived. */
    static final class ClosedException extends IOException {
        final boolean nothingReceived;

        ClosedException(String message, boolean nothingReceived) {
            super(message);
            this.nothingReceived = nothingReceived;
        }
    }

    private final Socket socket;
    private final Socket raw;
    private final InputStream in;
    private final OutputStream out;
    private byte[] buf = new byte[BUFFER_BYTES];
    private int pos;
    private int lim;
    /** Bytes read for the current answer so far. */
    private long received;
    private volatile boolean closed;
    /** When it went back to the pool, {@link System#nanoTime()}. */
    long idleSince;
    /** Whether it served an exchange before the current one (a reused connection may have gone stale). */
    boolean reused;

    /**
     * @param socket the socket to talk on (a TLS socket for https)
     * @param raw    the TCP socket underneath; closing it is what {@link #abort()} does
     */
    Connection(Socket socket, Socket raw) throws IOException {
        this.socket = socket;
        this.raw = raw;
        this.in = socket.getInputStream();
        this.out = socket.getOutputStream();
    }

    boolean isClosed() {
        return closed;
    }

    /** Closes the TCP socket: a read or write blocked on it fails at once. Safe from any thread. */
    void abort() {
        closed = true;
        try {
            raw.close();
        } catch (IOException ignored) {
            // closing is all we wanted
        }
    }

    void close() {
        closed = true;
        try {
            socket.close();
        } catch (IOException ignored) {
            // nothing to save
        } finally {
            abort();
        }
    }

    /** Sends a request: the head and body are written together when the body is small. */
    void send(byte[] head, byte[] body) throws IOException {
        received = 0;
        try {
            if (body == null || body.length == 0) {
                out.write(head);
            } else if (body.length <= 16 * 1024) {
                byte[] all = Arrays.copyOf(head, head.length + body.length);
                System.arraycopy(body, 0, all, head.length, body.length);
                out.write(all);
            } else {
                out.write(head);
                out.write(body);
            }
            out.flush();
        } catch (java.net.SocketException e) {
            throw new ClosedException("connection lost while sending the request: " + e.getMessage(), true);
        }
    }

    /**
     * Reads the answer's head, skipping interim (1xx) answers.
     *
     * @param headRequest whether the request was HEAD (its answer has no body whatever it declares)
     */
    Head readHead(boolean headRequest) throws IOException {
        int headBytes = 0;
        while (true) {
            String statusLine = readLine(MAX_HEAD_BYTES - headBytes);
            headBytes += statusLine.length() + 2;
            if (statusLine.length() < 12 || !statusLine.startsWith("HTTP/1.") || statusLine.charAt(8) != ' '
                    || statusLine.length() > 12 && statusLine.charAt(12) != ' ') {
                throw new ProtocolException("not an HTTP/1.x status line: '" + printable(statusLine) + "'");
            }
            char minor = statusLine.charAt(7);
            int status = parseStatus(statusLine);
            List<Map.Entry<String, String>> fields = new ArrayList<>(8);
            long contentLength = Head.NONE;
            boolean chunked = false;
            boolean otherCoding = false;
            boolean close = minor == '0';
            while (true) {
                String line = readLine(MAX_HEAD_BYTES - headBytes);
                headBytes += line.length() + 2;
                if (line.isEmpty()) {
                    break;
                }
                if (fields.size() == MAX_HEADERS) {
                    throw new ProtocolException("more than " + MAX_HEADERS + " header fields");
                }
                int colon = line.indexOf(':');
                if (colon <= 0 || line.charAt(0) == ' ' || line.charAt(0) == '\t'
                        || line.charAt(colon - 1) == ' ' || line.charAt(colon - 1) == '\t') {
                    throw new ProtocolException("malformed header line: '" + printable(line) + "'");
                }
                String name = line.substring(0, colon);
                String value = line.substring(colon + 1).strip();
                fields.add(Map.entry(name, value));
                if (name.equalsIgnoreCase("content-length")) {
                    long n = parseLength(value);
                    if (contentLength != Head.NONE && contentLength != n) {
                        throw new ProtocolException("two different Content-Length values");
                    }
                    contentLength = n;
                } else if (name.equalsIgnoreCase("transfer-encoding")) {
                    String last = value.substring(value.lastIndexOf(',') + 1).strip();
                    chunked = last.equalsIgnoreCase("chunked");
                    otherCoding = !chunked;
                } else if (name.equalsIgnoreCase("connection")) {
                    for (String token : value.split(",")) {
                        String t = token.strip().toLowerCase(Locale.ROOT);
                        if (t.equals("close")) {
                            close = true;
                        } else if (t.equals("keep-alive") && minor == '0') {
                            close = false;
                        }
                    }
                }
            }
            if (status >= 100 && status < 200) {
                if (status == 101) {
                    throw new ProtocolException("answered 101 Switching Protocols to a request that asked for none");
                }
                continue; // an interim answer: the real one follows
            }
            Headers headers = Headers.of(fields);
            if (headRequest || status == 204 || status == 304) {
                return new Head(status, headers, 0, false, !close);
            }
            if (chunked) {
                // with Transfer-Encoding, Content-Length is ignored; a peer that sent both may be confused
                return new Head(status, headers, Head.NONE, true, !close && contentLength == Head.NONE);
            }
            if (otherCoding || contentLength == Head.NONE) {
                return new Head(status, headers, Head.UNTIL_CLOSE, false, false);
            }
            return new Head(status, headers, contentLength, false, !close);
        }
    }

    /**
     * Reads the body as {@code head} frames it, at most {@code max} bytes.
     *
     * @return the body, or null when it is longer than {@code max} (the connection must then be closed)
     */
    byte[] readBody(Head head, long max) throws IOException {
        if (head.chunked()) {
            return readChunked(max);
        }
        if (head.contentLength() == Head.UNTIL_CLOSE) {
            return readUntilClose(max);
        }
        long n = head.contentLength();
        if (n > max) {
            return null;
        }
        byte[] body = new byte[(int) n];
        readFully(body, 0, (int) n);
        return body;
    }

    private byte[] readChunked(long max) throws IOException {
        byte[] body = new byte[0];
        int size = 0;
        while (true) {
            String line = readLine(1024);
            int semi = line.indexOf(';');
            String hex = (semi >= 0 ? line.substring(0, semi) : line).strip();
            long chunk;
            try {
                chunk = hex.isEmpty() || hex.length() > 15 ? -1 : Long.parseLong(hex, 16);
            } catch (NumberFormatException e) {
                chunk = -1;
            }
            if (chunk < 0) {
                throw new ProtocolException("bad chunk size line: '" + printable(line) + "'");
            }
            if (chunk == 0) {
                int trailerBytes = 0;
                while (true) { // trailer fields, ignored
                    String t = readLine(MAX_HEAD_BYTES - trailerBytes);
                    trailerBytes += t.length() + 2;
                    if (t.isEmpty()) {
                        return body.length == size ? body : Arrays.copyOf(body, size);
                    }
                }
            }
            if (size + chunk > max) {
                return null;
            }
            if (size + chunk > body.length) {
                body = Arrays.copyOf(body, (int) Math.min(max, Math.max(size + chunk, 2L * body.length)));
            }
            readFully(body, size, (int) chunk);
            size += (int) chunk;
            if (!readLine(2).isEmpty()) {
                throw new ProtocolException("chunk data not followed by CRLF");
            }
        }
    }

    private byte[] readUntilClose(long max) throws IOException {
        byte[] body = new byte[(int) Math.min(max + 1, 1024)];
        int size = 0;
        while (true) {
            if (size == body.length) {
                if (size > max) {
                    return null;
                }
                body = Arrays.copyOf(body, (int) Math.min(max + 1, 2L * body.length));
            }
            int r = read(body, size, body.length - size);
            if (r < 0) {
                return size == body.length ? body : Arrays.copyOf(body, size);
            }
            size += r;
            if (size > max) {
                return null;
            }
        }
    }

    /** Reads exactly {@code n} bytes into {@code dst}: first what is buffered, then straight from the socket. */
    private void readFully(byte[] dst, int off, int n) throws IOException {
        while (n > 0) {
            int r = read(dst, off, n);
            if (r < 0) {
                throw new ClosedException("closed the connection in the middle of the body", false);
            }
            off += r;
            n -= r;
        }
    }

    private int read(byte[] dst, int off, int n) throws IOException {
        if (pos < lim) {
            int k = Math.min(n, lim - pos);
            System.arraycopy(buf, pos, dst, off, k);
            pos += k;
            return k;
        }
        int r = socketRead(dst, off, n);
        if (r > 0) {
            received += r;
        }
        return r;
    }

    /** A line without its CRLF (a bare LF is accepted), of at most {@code max} bytes. */
    private String readLine(int max) throws IOException {
        int scanned = 0;
        while (true) {
            for (int i = pos + scanned; i < lim; i++) {
                if (buf[i] == '\n') {
                    int end = i > pos && buf[i - 1] == '\r' ? i - 1 : i;
                    if (end - pos > max) {
                        throw new ProtocolException("response head longer than " + MAX_HEAD_BYTES + " bytes");
                    }
                    String line = new String(buf, pos, end - pos, StandardCharsets.ISO_8859_1);
                    pos = i + 1;
                    return line;
                }
            }
            scanned = lim - pos;
            if (scanned > max) {
                throw new ProtocolException("response head longer than " + MAX_HEAD_BYTES + " bytes");
            }
            if (pos > 0) { // make room at the end
                System.arraycopy(buf, pos, buf, 0, lim - pos);
                lim -= pos;
                pos = 0;
            }
            if (lim == buf.length) {
                buf = Arrays.copyOf(buf, Math.min(buf.length * 2, MAX_HEAD_BYTES + 2));
            }
            int r = socketRead(buf, lim, buf.length - lim);
            if (r < 0) {
                boolean nothing = received == 0;
                throw new ClosedException(nothing ? "closed the connection without answering"
                        : "closed the connection before the whole answer", nothing);
            }
            received += r;
            lim += r;
        }
    }

    private int socketRead(byte[] dst, int off, int n) throws IOException {
        try {
            return in.read(dst, off, n);
        } catch (java.net.SocketException e) {
            if (closed) {
                throw e; // our own abort; the exchange knows why
            }
            boolean nothing = received == 0;
            throw new ClosedException("connection reset" + (nothing ? " before any answer" : " during the answer")
                    + ": " + e.getMessage(), nothing);
        } catch (EOFException e) {
            return -1;
        }
    }

    private static int parseStatus(String statusLine) throws ProtocolException {
        int s = 0;
        for (int i = 9; i < 12; i++) {
            char c = statusLine.charAt(i);
            if (c < '0' || c > '9') {
                throw new ProtocolException("bad status code in '" + printable(statusLine) + "'");
            }
            s = s * 10 + (c - '0');
        }
        if (s < 100) {
            throw new ProtocolException("bad status code in '" + printable(statusLine) + "'");
        }
        return s;
    }

    private static long parseLength(String v) throws ProtocolException {
        if (v.isEmpty() || v.length() > 18) {
            throw new ProtocolException("bad Content-Length '" + printable(v) + "'");
        }
        long n = 0;
        for (int i = 0; i < v.length(); i++) {
            char c = v.charAt(i);
            if (c < '0' || c > '9') {
                throw new ProtocolException("bad Content-Length '" + printable(v) + "'");
            }
            n = n * 10 + (c - '0');
        }
        return n;
    }

    private static String printable(String s) {
        String t = s.length() > 80 ? s.substring(0, 80) + "..." : s;
        StringBuilder b = new StringBuilder(t.length());
        for (int i = 0; i < t.length(); i++) {
            char c = t.charAt(i);
            b.append(c < 0x20 || c > 0x7e ? '?' : c);
        }
        return b.toString();
    }
}
