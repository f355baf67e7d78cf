package dev.weft.http;

import java.io.EOFException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * The HTTP/1.1 codec's read rules (RFC 9112), one set for the server, the client and weft-upstream. Strict where
 * the RFC says MUST and where lenient parsing lets a request be smuggled past a proxy in front:
 *
 * <ul>
 *   <li>lines end in CRLF (a bare LF or a CR elsewhere is refused);</li>
 *   <li>request line exactly {@code token SP target SP HTTP/1.d}; the target is visible ASCII without
 *       {@code #}, in origin-form, absolute-form, or {@code *} for OPTIONS; another major version is 505;</li>
 *   <li>field names are tokens followed at once by {@code :} (no whitespace before the colon); no obs-fold
 *       (a line starting with SP or HTAB); values hold no control characters (NUL, CR, LF, DEL, ...);</li>
 *   <li>{@code Content-Length} is {@code 1*DIGIT}; repeated fields must agree; a comma list is refused;</li>
 *   <li>{@code Transfer-Encoding} together with {@code Content-Length} is refused; in a request it must be
 *       exactly {@code chunked} (chunked not last or twice: 400; any other coding: 501), and HTTP/1.0
 *       requests may not carry it;</li>
 *   <li>an HTTP/1.1 request has exactly one {@code Host}, of URI host characters;</li>
 *   <li>chunk sizes are {@code 1*HEXDIG} (no sign, prefix or spaces; at most 15 digits), optionally followed by
 *       extensions after {@code ;}; chunk data is followed by exactly CRLF; the size lines and extensions
 *       may add at most 16 KiB over the data they frame (the defence Go added for CVE-2023-39326);</li>
 *   <li>limits: the head (request line, fields) at most {@code maxHeadBytes} (414 for the request line
 *       alone, else 431), at most {@code maxFields} fields, the body at most {@code maxBodyBytes} (413).</li>
 * </ul>
 * A response is read by the same field rules; its framing follows RFC 9112 section 6.3 (HEAD, 1xx, 204 and
 * 304 have no body; a final {@code chunked}; else {@code Content-Length}; else until close), with both
 * {@code Transfer-Encoding} and {@code Content-Length} refused as the smuggling sign the RFC calls it.
 */
public final class Http1 {
    /** Default most header fields in a request head. */
    public static final int MAX_REQUEST_FIELDS = 100;
    /** Default most header fields in a response head. */
    public static final int MAX_RESPONSE_FIELDS = 256;
    /** Longest chunk-size line (size and extensions). */
    static final int MAX_CHUNK_LINE = 4096;
    /** Longest trailer section (read, checked and dropped). */
    static final int MAX_TRAILER_BYTES = 16 * 1024;
    /** How much chunk-size lines may add over the data they frame. */
    static final long CHUNK_OVERHEAD_ALLOWANCE = 16 * 1024;

    private static final boolean[] TCHAR = new boolean[256];
    private static final boolean[] FIELD_VALUE = new boolean[256];
    private static final boolean[] TARGET = new boolean[256];
    private static final boolean[] HOST = new boolean[256];

    static {
        alphanumericAnd(TCHAR, "!#$%&'*+-.^_`|~");
        FIELD_VALUE['\t'] = true;
        for (int c = 0x20; c <= 0x7e; c++) {
            FIELD_VALUE[c] = true;
        }
        for (int c = 0x80; c <= 0xff; c++) {
            FIELD_VALUE[c] = true; // obs-text
        }
        for (int c = 0x21; c <= 0x7e; c++) {
            TARGET[c] = c != '#';
        }
        alphanumericAnd(HOST, "-._~!$&'()*+,;=%:[]"); // reg-name, IP literal, port
    }

    private Http1() {
    }

    /** {@link #TCHAR} as two 64-bit masks (chars 0-63, 64-127): no table load per char of a name being written. */
    private static final long TCHAR_LOW = mask(0);
    private static final long TCHAR_HIGH = mask(64);

    private static long mask(int from) {
        long m = 0;
        for (int c = from; c < from + 64; c++) {
            if (TCHAR[c]) {
                m |= 1L << (c - from);
            }
        }
        return m;
    }

    /** Whether {@code s} is a token (RFC 9110 section 5.6.2): a method or a field name. */
    public static boolean isToken(String s) {
        int n = s.length();
        if (n == 0) {
            return false;
        }
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            long bit = c < 64 ? TCHAR_LOW >>> c : c < 128 ? TCHAR_HIGH >>> (c - 64) : 0;
            if ((bit & 1) == 0) {
                return false;
            }
        }
        return true;
    }

    /** Whether {@code s} may be a request-target as this codec reads one: visible ASCII, no '#'. */
    public static boolean isTargetText(String s) {
        return !s.isEmpty() && all(s, TARGET);
    }

    /** Whether {@code s} holds only the characters a Host value (reg-name, IP literal, port) may hold. */
    public static boolean isHostValue(String s) {
        return all(s, HOST);
    }

    /** Whether {@code s} may be a field value: visible characters, space, tab, obs-text; no CR, LF or NUL. */
    public static boolean isFieldValue(String s) {
        return all(s, FIELD_VALUE);
    }

    private static boolean all(String s, boolean[] table) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c > 0xff || !table[c]) {
                return false;
            }
        }
        return true;
    }

    private static void alphanumericAnd(boolean[] table, String others) {
        for (int c = '0'; c <= '9'; c++) {
            table[c] = true;
        }
        for (int c = 'a'; c <= 'z'; c++) {
            table[c] = true;
            table[c - 32] = true;
        }
        for (char c : others.toCharArray()) {
            table[c] = true;
        }
    }

    // ---- requests ------------------------------------------------------------------------------------

    /**
     * Reads the next request head. Empty lines before the request line are skipped (RFC 9112 section 2.2),
     * within the head's byte limit.
     *
     * @return the head, or null when the peer closed the connection before sending a byte of it
     * @throws HttpCodecException with the status to answer (then close the connection)
     * @throws EOFException       when the peer closed the connection in the middle of the head
     */
    public static Http1Request readRequestHead(Http1Input in, int maxHeadBytes, int maxFields) throws IOException {
        int budget = maxHeadBytes;
        while (true) {
            if (!in.nextLine(budget, true, 414, "request line", maxHeadBytes)) {
                return null;
            }
            budget -= in.lineEnd - in.lineStart + 2;
            if (in.lineEnd > in.lineStart) {
                break;
            }
        }
        byte[] b = in.buffer();
        int s = in.lineStart;
        int e = in.lineEnd;
        int i = s;
        while (i < e && TCHAR[b[i] & 0xff]) {
            i++;
        }
        if (i == s || i == e || b[i] != ' ') {
            throw new HttpCodecException(400, "malformed request line: the method is not a token followed by one space");
        }
        String method = method(b, s, i);
        int t = ++i;
        while (i < e && TARGET[b[i] & 0xff]) {
            i++;
        }
        if (i == t || i == e || b[i] != ' ') {
            throw new HttpCodecException(400,
                    "malformed request line: the target holds a space, a control character or '#', or is missing");
        }
        String target = new String(b, t, i - t, StandardCharsets.ISO_8859_1);
        i++;
        int minor = version(b, i, e, true);

        Fields f = readFields(in, budget, maxFields, true, 431, "header section", maxHeadBytes);

        String path;
        String query;
        char first = target.charAt(0);
        if (first == '/') {
            int q = target.indexOf('?');
            path = q < 0 ? target : target.substring(0, q);
            query = q < 0 ? "" : target.substring(q + 1);
        } else if (target.equals("*")) {
            if (!method.equals("OPTIONS")) {
                throw new HttpCodecException(400, "the target '*' is only for OPTIONS");
            }
            path = "*";
            query = "";
        } else if (startsWithIgnoreCase(target, "http://") || startsWithIgnoreCase(target, "https://")) {
            int authority = target.indexOf("//") + 2;
            int slash = target.indexOf('/', authority);
            int q = target.indexOf('?', authority);
            if (slash < 0 || (q >= 0 && q < slash)) {
                path = "/";
                query = q < 0 ? "" : target.substring(q + 1);
            } else {
                path = q < 0 ? target.substring(slash) : target.substring(slash, q);
                query = q < 0 ? "" : target.substring(q + 1);
            }
            if (authority == target.length() || target.charAt(authority) == '/' || target.charAt(authority) == '?') {
                throw new HttpCodecException(400, "absolute-form target without a host");
            }
        } else {
            throw new HttpCodecException(400, "the target is not in origin-form ('/path'), absolute-form or '*'");
        }

        if (minor >= 1 && f.hosts == 0) {
            throw new HttpCodecException(400, "an HTTP/1.1 request must carry a Host header");
        }
        if (f.hosts > 1) {
            throw new HttpCodecException(400, "more than one Host header");
        }
        Framing framing;
        if (f.transferEncoding) {
            if (f.contentLength != NONE) {
                throw new HttpCodecException(400, "both Transfer-Encoding and Content-Length");
            }
            if (minor == 0) {
                throw new HttpCodecException(400, "Transfer-Encoding in an HTTP/1.0 request");
            }
            if (f.codingError != null) {
                throw new HttpCodecException(400, f.codingError);
            }
            if (f.unknownCoding != null) {
                throw new HttpCodecException(501, "transfer coding '" + printable(f.unknownCoding)
                        + "' is not implemented (only chunked)");
            }
            framing = Framing.CHUNKED;
        } else if (f.contentLength != NONE) {
            framing = Framing.length(f.contentLength);
        } else {
            framing = Framing.NONE;
        }
        boolean keepAlive = minor >= 1 ? !f.close : f.keepAlive && !f.close;
        return new Http1Request(new RequestHead(method, target, path, query, Headers.read(f.list)), framing, keepAlive,
                minor == 0);
    }

    /**
     * Reads the body that a request head announces.
     *
     * @param keep false to count and discard the bytes (the result's array is then empty)
     * @throws HttpCodecException.BodyTooLarge over {@code maxBodyBytes}
     * @throws HttpCodecException              400 for malformed chunked framing
     */
    public static Body readBody(Http1Input in, Framing framing, long maxBodyBytes, boolean keep) throws IOException {
        return switch (framing.kind()) {
            case NONE -> Body.EMPTY;
            case LENGTH -> readLength(in, framing.length(), maxBodyBytes, keep);
            case CHUNKED -> readChunked(in, maxBodyBytes, keep);
            case UNTIL_CLOSE -> readUntilClose(in, maxBodyBytes, keep);
        };
    }

    // ---- responses -----------------------------------------------------------------------------------

    /**
     * Reads a response head, skipping interim (1xx) answers.
     *
     * @param headRequest whether the request was HEAD (its answer has no body, whatever it declares)
     * @throws HttpCodecException when the bytes are not a valid HTTP/1.x response head, or are over a limit
     * @throws EOFException       when the peer closed the connection before the whole head arrived
     */
    public static Http1Response readResponseHead(Http1Input in, boolean headRequest, int maxHeadBytes, int maxFields)
            throws IOException {
        int budget = maxHeadBytes;
        while (true) {
            in.nextLine(budget, false, 400, "response head", maxHeadBytes);
            budget -= in.lineEnd - in.lineStart + 2;
            byte[] b = in.buffer();
            int s = in.lineStart;
            int e = in.lineEnd;
            if (e - s < 12 || b[s + 8] != ' ' || (e - s > 12 && b[s + 12] != ' ')) {
                throw new HttpCodecException(400, "not an HTTP/1.x status line: '"
                        + printable(new String(b, s, e - s, StandardCharsets.ISO_8859_1)) + "'");
            }
            int minor = version(b, s, s + 8, false);
            int status = 0;
            for (int i = s + 9; i < s + 12; i++) {
                int d = b[i] - '0';
                if (d < 0 || d > 9) {
                    throw new HttpCodecException(400, "the status code is not three digits");
                }
                status = status * 10 + d;
            }
            if (status < 100) {
                throw new HttpCodecException(400, "status code " + status + " is below 100");
            }
            for (int i = s + 13; i < e; i++) {
                if (!FIELD_VALUE[b[i] & 0xff]) {
                    throw new HttpCodecException(400, "a control character in the reason phrase");
                }
            }
            Fields f = readFields(in, budget, maxFields, false, 400, "response head", maxHeadBytes);
            budget = f.budgetLeft;
            if (status < 200) {
                if (status == 101) {
                    throw new HttpCodecException(400, "answered 101 Switching Protocols to a request that asked for none");
                }
                continue; // an interim answer: the real one follows
            }
            boolean close = minor == 0 ? !f.keepAlive || f.close : f.close;
            ResponseHead head = new ResponseHead(status, Headers.read(f.list));
            if (headRequest || status == 204 || status == 304) {
                return new Http1Response(head, Framing.NONE, !close);
            }
            if (f.transferEncoding && f.contentLength != NONE) {
                throw new HttpCodecException(400, "both Transfer-Encoding and Content-Length");
            }
            if (f.transferEncoding) {
                if (f.codingError != null) {
                    throw new HttpCodecException(400, f.codingError);
                }
                // a final chunked frames the body (other codings before it are the caller's to decode);
                // without it the body runs until the connection closes (RFC 9112 section 6.3)
                return f.lastIsChunked ? new Http1Response(head, Framing.CHUNKED, !close)
                        : new Http1Response(head, Framing.UNTIL_CLOSE, false);
            }
            if (f.contentLength != NONE) {
                return new Http1Response(head, Framing.length(f.contentLength), !close);
            }
            return new Http1Response(head, Framing.UNTIL_CLOSE, false);
        }
    }

    // ---- fields --------------------------------------------------------------------------------------

    private static final long NONE = -1;

    /** The fields of one head and what the codec needs of them. */
    private static final class Fields {
        final List<Map.Entry<String, String>> list = new ArrayList<>(12);
        long contentLength = NONE;
        boolean transferEncoding;
        /** Set when a Transfer-Encoding list is malformed (empty element, chunked twice or not last). */
        String codingError;
        /** The first coding other than chunked. */
        String unknownCoding;
        boolean chunkedSeen;
        boolean lastIsChunked;
        int hosts;
        boolean close;
        boolean keepAlive;
        int budgetLeft;
    }

    private static Fields readFields(Http1Input in, int budget, int maxFields, boolean request, int tooLong,
                                     String what, int shownLimit) throws IOException {
        Fields f = new Fields();
        while (true) {
            in.nextLine(budget, false, tooLong, what, shownLimit);
            budget -= in.lineEnd - in.lineStart + 2;
            byte[] b = in.buffer();
            int s = in.lineStart;
            int e = in.lineEnd;
            if (s == e) {
                f.budgetLeft = budget;
                return f;
            }
            if (f.list.size() == maxFields) {
                throw new HttpCodecException(tooLong == 400 ? 400 : 431, "more than " + maxFields + " header fields");
            }
            if (b[s] == ' ' || b[s] == '\t') {
                throw new HttpCodecException(400, "obsolete line folding (a field line starting with whitespace)");
            }
            int i = s;
            while (i < e && TCHAR[b[i] & 0xff]) {
                i++;
            }
            if (i == s || i == e || b[i] != ':') {
                throw new HttpCodecException(400, "malformed header field: the name is not a token followed at once by ':'");
            }
            int nameEnd = i;
            int v = i + 1;
            while (v < e && (b[v] == ' ' || b[v] == '\t')) {
                v++;
            }
            int ve = e;
            while (ve > v && (b[ve - 1] == ' ' || b[ve - 1] == '\t')) {
                ve--;
            }
            for (int k = v; k < ve; k++) {
                if (!FIELD_VALUE[b[k] & 0xff]) {
                    throw new HttpCodecException(400, "a control character in the value of header '"
                            + new String(b, s, nameEnd - s, StandardCharsets.ISO_8859_1) + "'");
                }
            }
            String name = request ? lowerName(b, s, nameEnd) : new String(b, s, nameEnd - s, StandardCharsets.ISO_8859_1);
            String value = new String(b, v, ve - v, StandardCharsets.ISO_8859_1);
            f.list.add(Map.entry(name, value));
            int len = nameEnd - s;
            if (len == 14 && regionIs(b, s, "content-length")) {
                long n = contentLength(b, v, ve);
                if (f.contentLength != NONE && f.contentLength != n) {
                    throw new HttpCodecException(400, "two different Content-Length values");
                }
                f.contentLength = n;
            } else if (len == 17 && regionIs(b, s, "transfer-encoding")) {
                f.transferEncoding = true;
                codings(f, value);
            } else if (len == 4 && regionIs(b, s, "host")) {
                f.hosts++;
                for (int k = v; k < ve; k++) {
                    if (!HOST[b[k] & 0xff]) {
                        throw new HttpCodecException(400, "the Host header holds a character no host name has");
                    }
                }
            } else if (len == 10 && regionIs(b, s, "connection")) {
                for (String token : value.split(",")) {
                    String t = token.strip();
                    if (t.equalsIgnoreCase("close")) {
                        f.close = true;
                    } else if (t.equalsIgnoreCase("keep-alive")) {
                        f.keepAlive = true;
                    }
                }
            }
        }
    }

    private static void codings(Fields f, String value) {
        int start = 0;
        while (start <= value.length()) {
            int comma = value.indexOf(',', start);
            int end = comma < 0 ? value.length() : comma;
            String coding = value.substring(start, end).strip();
            if (coding.isEmpty()) {
                f.codingError = "an empty element in Transfer-Encoding";
            } else if (coding.equalsIgnoreCase("chunked")) {
                if (f.chunkedSeen) {
                    f.codingError = "chunked twice in Transfer-Encoding";
                }
                f.chunkedSeen = true;
                f.lastIsChunked = true;
            } else {
                if (f.chunkedSeen) {
                    f.codingError = "chunked is not the final transfer coding";
                }
                if (f.unknownCoding == null) {
                    f.unknownCoding = coding;
                }
                f.lastIsChunked = false;
            }
            if (comma < 0) {
                return;
            }
            start = comma + 1;
        }
    }

    private static long contentLength(byte[] b, int from, int to) throws HttpCodecException {
        if (from == to) {
            throw new HttpCodecException(400, "an empty Content-Length");
        }
        long n = 0;
        for (int i = from; i < to; i++) {
            int d = b[i] - '0';
            if (d < 0 || d > 9) {
                throw new HttpCodecException(400, "Content-Length is not digits only: '"
                        + printable(new String(b, from, to - from, StandardCharsets.ISO_8859_1)) + "'");
            }
            if (n > (Long.MAX_VALUE - 9) / 10) {
                throw new HttpCodecException.BodyTooLarge("Content-Length of more than 19 digits");
            }
            n = n * 10 + d;
        }
        return n;
    }

    /** {@code HTTP/1.d} at {@code b[i, e)}; returns d. */
    private static int version(byte[] b, int i, int e, boolean request) throws HttpCodecException {
        if (e - i != 8 || b[i] != 'H' || b[i + 1] != 'T' || b[i + 2] != 'T' || b[i + 3] != 'P' || b[i + 4] != '/'
                || b[i + 6] != '.' || !digit(b[i + 5]) || !digit(b[i + 7])) {
            throw new HttpCodecException(400, request ? "malformed request line: the version is not HTTP/d.d"
                    : "not an HTTP/1.x status line");
        }
        if (b[i + 5] != '1') {
            throw new HttpCodecException(505, "HTTP/" + (char) b[i + 5] + "." + (char) b[i + 7] + " is not supported (HTTP/1.x only)");
        }
        return b[i + 7] - '0';
    }

    // ---- bodies --------------------------------------------------------------------------------------

    private static Body readLength(Http1Input in, long n, long max, boolean keep) throws IOException {
        if (n > max) {
            throw new HttpCodecException.BodyTooLarge("a body of " + n + " bytes is over the limit of " + max);
        }
        if (!keep) {
            in.skip(n, "body");
            return new Body(Body.EMPTY.bytes(), n);
        }
        byte[] body = readGrowing(in, new byte[(int) Math.min(n, BODY_STEP)], 0, (int) n, n, "body");
        return new Body(body, n);
    }

    /** A body's buffer grows by at most this much ahead of the bytes that arrived. */
    static final int BODY_STEP = 16 * 1024;

    /**
     * Reads {@code size} bytes into {@code body} at {@code at}, growing it as they arrive (to at most {@code max}):
     * a peer that declares a large body (a {@code Content-Length}, a chunk size) and then sends little holds a buffer
     * of about what it sent, not of what it declared. A buffer allocated at the declared size let 16,000 connections
     * that each declared 1 MiB and sent nothing hold 16 GB.
     */
    private static byte[] readGrowing(Http1Input in, byte[] body, int at, int size, long max, String what)
            throws IOException {
        int pos = at;
        int end = at + size;
        while (pos < end) {
            int step = Math.min(end - pos, BODY_STEP);
            if (pos + step > body.length) {
                body = Arrays.copyOf(body, (int) Math.min(max, Math.max(pos + step, 2L * body.length)));
            }
            in.readFully(body, pos, step, what);
            pos += step;
        }
        return body;
    }

    private static Body readChunked(Http1Input in, long max, boolean keep) throws IOException {
        byte[] body = keep ? new byte[256] : null;
        Chunks chunks = new Chunks();
        while (true) {
            long size = chunks.nextSize(in);
            if (size == 0) {
                chunks.trailers(in).list.clear(); // read, checked and dropped
                return new Body(keep ? Arrays.copyOf(body, (int) chunks.total) : Body.EMPTY.bytes(), chunks.total);
            }
            if (chunks.total + size > max) {
                throw new HttpCodecException.BodyTooLarge("a chunked body over the limit of " + max + " bytes");
            }
            if (keep) {
                body = readGrowing(in, body, (int) chunks.total, (int) size, max, "chunk");
            } else {
                in.skip(size, "chunk");
            }
            chunks.total += size;
            chunks.endOfData(in);
        }
    }

    /** The framing of a chunked body as it is read: the data so far and what the size lines added to it. */
    private static final class Chunks {
        long total;
        long overhead;
        private final byte[] crlf = new byte[2];

        /** Reads a chunk-size line: the chunk's size, 0 for the last chunk. */
        long nextSize(Http1Input in) throws IOException {
            in.nextLine(MAX_CHUNK_LINE, false, 400, "chunk size line", MAX_CHUNK_LINE);
            overhead += in.lineEnd - in.lineStart + 2;
            if (overhead > CHUNK_OVERHEAD_ALLOWANCE + total) {
                throw new HttpCodecException(400, "chunk size lines and extensions far larger than the data they frame");
            }
            return chunkSize(in.buffer(), in.lineStart, in.lineEnd);
        }

        /** The CRLF after a chunk's data. */
        void endOfData(Http1Input in) throws IOException {
            in.readFully(crlf, 0, 2, "chunk");
            if (crlf[0] != '\r' || crlf[1] != '\n') {
                throw new HttpCodecException(400, "chunk data not followed by CRLF");
            }
        }

        /** The trailer section after the last chunk, checked as a head's fields are. */
        Fields trailers(Http1Input in) throws IOException {
            return readFields(in, MAX_TRAILER_BYTES, MAX_REQUEST_FIELDS, false, 400, "trailer section",
                    MAX_TRAILER_BYTES);
        }
    }

    /**
     * A body read run by run as it arrives, for a relay that passes it on as it comes (an event stream), with the
     * checks {@link #readBody} makes: each {@link #next} hands over what one read of the connection gave (at most
     * {@code maxRun} bytes, never past the body's end), so the caller holds one run, not the body. A chunked body's
     * trailer fields are kept ({@link #trailers}).
     */
    public static final class BodyRuns {
        private final Http1Input in;
        private final Framing framing;
        private final int maxRun;
        private final Chunks chunks = new Chunks();
        /** Bytes left of the body (LENGTH) or of the current chunk (CHUNKED); unused for UNTIL_CLOSE. */
        private long left;
        private boolean started;
        private boolean done;
        private Headers trailers = Headers.EMPTY;
        private byte[] scratch;

        /**
         * @param framing how the body is delimited (NONE: an empty body)
         * @param maxRun  the most one run holds
         */
        public BodyRuns(Http1Input in, Framing framing, int maxRun) {
            if (maxRun <= 0) {
                throw new IllegalArgumentException("maxRun " + maxRun);
            }
            this.in = in;
            this.framing = framing;
            this.maxRun = maxRun;
            this.left = framing.kind() == Framing.Kind.LENGTH ? framing.length() : 0;
        }

        /**
         * The next run, waiting for it; null at the end of the body.
         *
         * @throws HttpCodecException for malformed chunked framing
         * @throws java.io.EOFException when the connection closed before the body's end
         */
        public byte[] next() throws IOException {
            if (done) {
                return null;
            }
            switch (framing.kind()) {
                case NONE -> {
                    done = true;
                    return null;
                }
                case LENGTH -> {
                    if (left == 0) {
                        done = true;
                        return null;
                    }
                    return read(left, "body");
                }
                case UNTIL_CLOSE -> {
                    int r = in.read(scratch(), 0, maxRun);
                    if (r < 0) {
                        done = true;
                        return null;
                    }
                    return Arrays.copyOf(scratch, r);
                }
                default -> {
                    if (left == 0) {
                        if (started) {
                            chunks.endOfData(in);
                        }
                        started = true;
                        long size = chunks.nextSize(in);
                        if (size == 0) {
                            trailers = Headers.read(chunks.trailers(in).list);
                            done = true;
                            return null;
                        }
                        left = size;
                        chunks.total += size;
                    }
                    return read(left, "chunk");
                }
            }
        }

        /** Up to {@code min(left, maxRun)} bytes, as one read gives them. */
        private byte[] read(long most, String what) throws IOException {
            int r = in.read(scratch(), 0, (int) Math.min(most, maxRun));
            if (r < 0) {
                throw new java.io.EOFException("connection closed in the middle of the " + what);
            }
            left -= r;
            return Arrays.copyOf(scratch, r);
        }

        /** One buffer per body that reads land in: a run is then exactly what came (an event is small). */
        private byte[] scratch() {
            if (scratch == null) {
                scratch = new byte[maxRun];
            }
            return scratch;
        }

        /** Whether the body has ended (then the connection may carry the next message). */
        public boolean ended() {
            return done;
        }

        /** A chunked body's trailer fields, once {@link #next} returned null (else empty). */
        public Headers trailers() {
            return trailers;
        }
    }

    private static long chunkSize(byte[] b, int s, int e) throws HttpCodecException {
        long size = 0;
        int i = s;
        while (i < e) {
            int c = b[i];
            int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                    : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
            if (d < 0) {
                break;
            }
            if (i - s == 15) {
                throw new HttpCodecException(400, "a chunk size of more than 15 hex digits");
            }
            size = size * 16 + d;
            i++;
        }
        if (i == s) {
            throw new HttpCodecException(400, "a chunk size line that does not start with a hex digit");
        }
        if (i < e) {
            while (i < e && (b[i] == ' ' || b[i] == '\t')) {
                i++;
            }
            if (i == e || b[i] != ';') {
                throw new HttpCodecException(400, "a chunk size followed by something other than ';' extensions");
            }
            for (; i < e; i++) {
                if (!FIELD_VALUE[b[i] & 0xff]) {
                    throw new HttpCodecException(400, "a control character in a chunk extension");
                }
            }
        }
        return size;
    }

    private static Body readUntilClose(Http1Input in, long max, boolean keep) throws IOException {
        byte[] body = new byte[(int) Math.min(max + 1, 1024)];
        long size = 0;
        while (true) {
            if (keep && size == body.length) {
                body = Arrays.copyOf(body, (int) Math.min(max + 1, 2L * body.length));
            }
            int r = keep ? in.read(body, (int) size, body.length - (int) size) : in.read(body, 0, body.length);
            if (r < 0) {
                return new Body(keep ? Arrays.copyOf(body, (int) size) : Body.EMPTY.bytes(), size);
            }
            size += r;
            if (size > max) {
                throw new HttpCodecException.BodyTooLarge("a body over the limit of " + max + " bytes");
            }
        }
    }

    // ---- small helpers -------------------------------------------------------------------------------

    private static boolean digit(byte c) {
        return c >= '0' && c <= '9';
    }

    /** Whether {@code b[s..]} is {@code lower} in any case (ASCII). */
    private static boolean regionIs(byte[] b, int s, String lower) {
        for (int i = 0; i < lower.length(); i++) {
            int c = b[s + i];
            if (c >= 'A' && c <= 'Z') {
                c += 32;
            }
            if (c != lower.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    private static String lowerName(byte[] b, int s, int e) {
        byte[] n = null;
        for (int i = s; i < e; i++) {
            if (b[i] >= 'A' && b[i] <= 'Z') {
                if (n == null) {
                    n = Arrays.copyOfRange(b, s, e);
                }
                n[i - s] += 32;
            }
        }
        return n == null ? new String(b, s, e - s, StandardCharsets.ISO_8859_1)
                : new String(n, StandardCharsets.ISO_8859_1);
    }

    private static String method(byte[] b, int s, int e) {
        int n = e - s;
        if (n == 3 && b[s] == 'G' && b[s + 1] == 'E' && b[s + 2] == 'T') {
            return "GET";
        }
        if (n == 4 && b[s] == 'P' && b[s + 1] == 'O' && b[s + 2] == 'S' && b[s + 3] == 'T') {
            return "POST";
        }
        return new String(b, s, n, StandardCharsets.ISO_8859_1);
    }

    private static boolean startsWithIgnoreCase(String s, String prefix) {
        return s.regionMatches(true, 0, prefix, 0, prefix.length());
    }

    /** The string with control and non-ASCII characters as '?', cut at 80 characters, for messages. */
    public static String printable(String s) {
        String t = s.length() > 80 ? s.substring(0, 80) + "..." : s;
        StringBuilder sb = new StringBuilder(t.length());
        for (int i = 0; i < t.length(); i++) {
            char c = t.charAt(i);
            sb.append(c < 0x20 || c > 0x7e ? '?' : c);
        }
        return sb.toString();
    }
}
