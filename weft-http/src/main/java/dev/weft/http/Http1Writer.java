package dev.weft.http;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

/**
 * The HTTP/1.1 codec's write side, the counterpart of {@link Http1}'s reader: request heads (the client) and
 * response heads (the server and weft-upstream). Every field is checked here before a byte of it is written: a name must
 * be a token and a value may hold no CR, LF or NUL, so that no caller can split a message into two
 * ({@link #checkField}); a refused field throws {@link IllegalArgumentException} and nothing is written. A
 * {@link Headers} remembers that its fields passed, so a constant one is checked once, not on every answer.
 *
 * <p>The response writer is on the server's hot path: it sizes the head first and writes status line, fields and
 * body into one array; each {@link Status} has its status line made once.
 */
public final class Http1Writer {
    private static final byte[] CONTENT_LENGTH = ascii("Content-Length: ");
    /** {@link #requestHead}'s body length for a body sent in chunks. */
    public static final long CHUNKED_BODY = -2;
    private static final byte[] CONNECTION_CLOSE = ascii("Connection: close\r\n");
    private static final byte[] REQUEST_LINE_HOST = ascii(" HTTP/1.1\r\nHost: ");
    private static final byte[] USER_AGENT = ascii("User-Agent: ");

    private Http1Writer() {
    }

    // ---- fields --------------------------------------------------------------------------------------

    /**
     * Refuses a field that would break the message: a name that is not a token (RFC 9110 section 5.6.2), a value
     * with CR, LF or NUL (a header split into two).
     *
     * @throws IllegalArgumentException naming the field
     */
    public static void checkField(String name, String value) {
        checkedWide(name, value);
    }

    /**
     * {@link #checkField}; returns whether the value has a char above U+00FF. Fast for the common field (the answer's
     * hot path): the line-break and NUL scans are the JDK's vectorized {@code indexOf}, the width an OR of the chars.
     */
    static boolean checkedWide(String name, String value) {
        return checkedBits(name, value) > 0xff;
    }

    /** {@link #checkField}; returns the OR of the value's chars (above 0x7f: not ASCII, above 0xff: wide). */
    static int checkedBits(String name, String value) {
        if (name == null || name.isEmpty()) {
            throw new IllegalArgumentException("a header has an empty name");
        }
        if (!Http1.isToken(name)) {
            throw new IllegalArgumentException("header name '" + name + "' is not a token");
        }
        if (value == null) {
            throw new IllegalArgumentException("header '" + name + "' has no value");
        }
        if (value.indexOf('\r') >= 0 || value.indexOf('\n') >= 0 || value.indexOf(0) >= 0) {
            throw new IllegalArgumentException("the value of header '" + name + "' has a line break or NUL");
        }
        return orChars(value);
    }

    /**
     * Whether a request field is one the request writer writes itself or that would break its framing or the
     * connection ({@code Host}, {@code Content-Length}, {@code Transfer-Encoding}, {@code Connection},
     * {@code Keep-Alive}, {@code Upgrade}, {@code TE}); any case. HTTP/2 forbids the same connection-specific ones.
     */
    public static boolean isConnectionField(String name) {
        return switch (name.length()) {
            case 2 -> name.equalsIgnoreCase("te");
            case 4 -> name.equalsIgnoreCase("host");
            case 7 -> name.equalsIgnoreCase("upgrade");
            case 10 -> name.equalsIgnoreCase("connection") || name.equalsIgnoreCase("keep-alive");
            case 14 -> name.equalsIgnoreCase("content-length");
            case 17 -> name.equalsIgnoreCase("transfer-encoding");
            default -> false;
        };
    }

    // ---- requests ------------------------------------------------------------------------------------

    /**
     * A request head: the request line, {@code Host}, the caller's fields in order (without those
     * {@link #isConnectionField} names: the writer writes them itself), {@code User-Agent} when the fields have
     * none, then {@code Content-Length} (the body's, or 0 for a POST, PUT or PATCH without one), and the empty line.
     * Encoded as UTF-8. Each field written is checked (the ones left out are not).
     *
     * @param method           the method, as it goes on the wire
     * @param target           the request-target in origin-form ({@code /path?query})
     * @param host             the {@code Host} value
     * @param fields           the caller's fields, in order
     * @param defaultUserAgent written when {@code fields} have no {@code User-Agent}
     * @param bodyLength       the body's length, -1 when the request has no body, or {@link #CHUNKED_BODY} for a
     *                         body sent in chunks ({@code Transfer-Encoding: chunked}, then {@link #chunk}s and a
     *                         {@link #lastChunk})
     * @throws IllegalArgumentException for a field {@link #checkField} refuses
     */
    public static byte[] requestHead(String method, String target, String host, Headers fields,
                                     String defaultUserAgent, long bodyLength) {
        // Sized first, then written byte by byte into one array: no builder, string or encoder per call. A char
        // above U+007F anywhere (rare: targets and values are ASCII in practice) goes to the UTF-8 writer below.
        int bits = orChars(method) | orChars(target) | orChars(host);
        int n = method.length() + 1 + target.length() + REQUEST_LINE_HOST.length + host.length() + 2;
        boolean userAgent = false;
        List<Map.Entry<String, String>> list = fields.fields(); // random access: no iterator on the hot path
        int count = list.size();
        for (int i = 0; i < count; i++) {
            Map.Entry<String, String> h = list.get(i);
            String name = h.getKey();
            if (isConnectionField(name)) {
                continue;
            }
            bits |= checkedBits(name, h.getValue()); // a name that passed is a token: ASCII
            userAgent |= name.equalsIgnoreCase("user-agent");
            n += name.length() + 2 + h.getValue().length() + 2;
        }
        if (!userAgent) {
            bits |= orChars(defaultUserAgent);
            n += USER_AGENT.length + defaultUserAgent.length() + 2;
        }
        boolean chunked = bodyLength == CHUNKED_BODY;
        long contentLength = bodyLength >= 0 ? bodyLength : !chunked && Method.definesContent(method) ? 0 : -1;
        int digits = contentLength >= 0 ? digits(contentLength) : 0;
        if (contentLength >= 0) {
            n += CONTENT_LENGTH.length + digits + 2;
        } else if (chunked) {
            n += TRANSFER_CHUNKED.length;
        }
        n += 2;
        if (bits > 0x7f) {
            return requestHeadUtf8(method, target, host, fields, defaultUserAgent, bodyLength);
        }
        byte[] out = new byte[n];
        int p = latin1Bytes(out, 0, method);
        out[p++] = ' ';
        p = latin1Bytes(out, p, target);
        p = put(out, p, REQUEST_LINE_HOST);
        p = latin1Bytes(out, p, host);
        out[p++] = '\r';
        out[p++] = '\n';
        for (int i = 0; i < count; i++) {
            Map.Entry<String, String> h = list.get(i);
            if (isConnectionField(h.getKey())) {
                continue;
            }
            p = latin1Bytes(out, p, h.getKey());
            out[p++] = ':';
            out[p++] = ' ';
            p = latin1Bytes(out, p, h.getValue());
            out[p++] = '\r';
            out[p++] = '\n';
        }
        if (!userAgent) {
            p = put(out, p, USER_AGENT);
            p = latin1Bytes(out, p, defaultUserAgent);
            out[p++] = '\r';
            out[p++] = '\n';
        }
        if (contentLength >= 0) {
            p = putDigits(out, put(out, p, CONTENT_LENGTH), contentLength, digits);
            out[p++] = '\r';
            out[p++] = '\n';
        } else if (chunked) {
            p = put(out, p, TRANSFER_CHUNKED);
        }
        out[p++] = '\r';
        out[p++] = '\n';
        assert p == n;
        return out;
    }

    /** {@link #requestHead} for a head with a char above U+007F: encoded as UTF-8 through a string. */
    static byte[] requestHeadUtf8(String method, String target, String host, Headers fields, String defaultUserAgent,
                                  long bodyLength) {
        StringBuilder b = new StringBuilder(160);
        b.append(method).append(' ').append(target).append(" HTTP/1.1\r\nHost: ").append(host).append("\r\n");
        boolean userAgent = false;
        for (Map.Entry<String, String> h : fields) {
            String name = h.getKey();
            if (isConnectionField(name)) {
                continue;
            }
            checkField(name, h.getValue());
            userAgent |= name.equalsIgnoreCase("user-agent");
            b.append(name).append(": ").append(h.getValue()).append("\r\n");
        }
        if (!userAgent) {
            b.append("User-Agent: ").append(defaultUserAgent).append("\r\n");
        }
        if (bodyLength >= 0) {
            b.append("Content-Length: ").append(bodyLength).append("\r\n");
        } else if (bodyLength == CHUNKED_BODY) {
            b.append("Transfer-Encoding: chunked\r\n");
        } else if (Method.definesContent(method)) {
            b.append("Content-Length: 0\r\n");
        }
        b.append("\r\n");
        return b.toString().getBytes(StandardCharsets.UTF_8);
    }

    /** The OR of {@code s}'s chars: above 0x7f when one is not ASCII. */
    private static int orChars(String s) {
        int bits = 0;
        for (int i = 0; i < s.length(); i++) {
            bits |= s.charAt(i);
        }
        return bits;
    }

    // ---- responses -----------------------------------------------------------------------------------

    /**
     * A response head: the status line, the fields in order, {@code Content-Length} and, when the connection
     * closes after it, {@code Connection: close}, then the empty line. Characters are written as ISO-8859-1 (one
     * above U+00FF as {@code ?}).
     *
     * @throws IllegalArgumentException for a field {@link #checkField} refuses
     */
    public static byte[] responseHead(Status status, Headers fields, long contentLength, boolean keepAlive) {
        return response(status, fields, contentLength, keepAlive, null);
    }

    /** Head and body in one array, for a single write; see {@link #responseHead}. */
    public static byte[] response(Status status, Headers fields, byte[] body, boolean keepAlive) {
        return response(status, fields, body.length, keepAlive, body);
    }

    private static byte[] response(Status status, Headers fields, long contentLength, boolean keepAlive, byte[] body) {
        byte[] statusLine = status.http1Line();
        // digits written in place: no string per answer (a negative length, which no caller sends, as the JDK prints it)
        String negative = contentLength < 0 ? Long.toString(contentLength) : null;
        int digits = negative != null ? negative.length() : digits(contentLength);
        // checked once per Headers; a value with a char above U+00FF (rare) makes the values go char by char
        boolean wide = fields.check();
        int n = statusLine.length;
        List<Map.Entry<String, String>> list = fields.fields(); // random access: no iterator on the hot path
        int count = list.size();
        for (int i = 0; i < count; i++) {
            Map.Entry<String, String> h = list.get(i);
            String value = h.getValue(); // a token name: one byte a char
            n += h.getKey().length() + 2 + (wide ? latin1Length(value) : value.length()) + 2;
        }
        n += CONTENT_LENGTH.length + digits + 2;
        if (!keepAlive) {
            n += CONNECTION_CLOSE.length;
        }
        n += 2;
        byte[] out = new byte[n + (body == null ? 0 : body.length)];
        int p = put(out, 0, statusLine);
        for (int i = 0; i < count; i++) {
            Map.Entry<String, String> h = list.get(i);
            p = latin1Bytes(out, p, h.getKey());
            out[p++] = ':';
            out[p++] = ' ';
            p = wide ? latin1(out, p, h.getValue()) : latin1Bytes(out, p, h.getValue());
            out[p++] = '\r';
            out[p++] = '\n';
        }
        p = put(out, p, CONTENT_LENGTH);
        if (negative != null) {
            p = latin1Bytes(out, p, negative);
        } else {
            p = putDigits(out, p, contentLength, digits);
        }
        out[p++] = '\r';
        out[p++] = '\n';
        if (!keepAlive) {
            p = put(out, p, CONNECTION_CLOSE);
        }
        out[p++] = '\r';
        out[p++] = '\n';
        if (body != null) {
            System.arraycopy(body, 0, out, p, body.length);
        }
        return out;
    }

    // ---- chunked answers (a body written as it comes) ------------------------------------------------

    private static final byte[] TRANSFER_CHUNKED = ascii("Transfer-Encoding: chunked\r\n");

    /**
     * The head of an answer whose body follows in chunks (RFC 9112 section 7.1): the status line, the fields in order
     * less those {@link #isConnectionField} names (a {@code Content-Length} beside the chunked coding would frame the
     * body twice), {@code Transfer-Encoding: chunked}, {@code Connection: close} when the connection closes after
     * it, and the empty line. Only for an HTTP/1.1 request (an HTTP/1.0 client does not read chunks).
     *
     * @throws IllegalArgumentException for a field {@link #checkField} refuses
     */
    public static byte[] chunkedResponseHead(Status status, Headers fields, boolean keepAlive) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream(256);
        out.writeBytes(status.http1Line());
        for (Map.Entry<String, String> f : fields) {
            if (isConnectionField(f.getKey())) {
                continue;
            }
            field(out, f.getKey(), f.getValue());
        }
        out.writeBytes(TRANSFER_CHUNKED);
        if (!keepAlive) {
            out.writeBytes(CONNECTION_CLOSE);
        }
        out.write('\r');
        out.write('\n');
        return out.toByteArray();
    }

    /** One chunk: its size in hex, CRLF, the data, CRLF. Never empty (an empty chunk is the last one). */
    public static byte[] chunk(byte[] data) {
        if (data.length == 0) {
            throw new IllegalArgumentException("an empty chunk would end the body");
        }
        byte[] size = ascii(Integer.toHexString(data.length));
        byte[] out = new byte[size.length + 2 + data.length + 2];
        int p = put(out, 0, size);
        out[p++] = '\r';
        out[p++] = '\n';
        System.arraycopy(data, 0, out, p, data.length);
        p += data.length;
        out[p++] = '\r';
        out[p] = '\n';
        return out;
    }

    /**
     * The last chunk and the trailer section: {@code 0}, CRLF, the trailer fields less those a trailer may not carry
     * (RFC 9110 section 6.5.1: framing, routing and the ones that describe the content, here {@link
     * #isConnectionField} ones, {@code Trailer}, {@code Content-Type}, {@code Content-Encoding}, {@code
     * Content-Range}), CRLF.
     *
     * @throws IllegalArgumentException for a field {@link #checkField} refuses
     */
    public static byte[] lastChunk(Headers trailers) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream(64);
        out.write('0');
        out.write('\r');
        out.write('\n');
        for (Map.Entry<String, String> f : trailers) {
            String n = f.getKey();
            if (isConnectionField(n) || n.equalsIgnoreCase("trailer") || n.equalsIgnoreCase("content-type")
                    || n.equalsIgnoreCase("content-encoding") || n.equalsIgnoreCase("content-range")) {
                continue;
            }
            field(out, n, f.getValue());
        }
        out.write('\r');
        out.write('\n');
        return out.toByteArray();
    }

    /** {@code name: value} CRLF, checked, as ISO-8859-1. */
    private static void field(java.io.ByteArrayOutputStream out, String name, String value) {
        checkField(name, value);
        out.writeBytes(name.getBytes(StandardCharsets.ISO_8859_1));
        out.write(':');
        out.write(' ');
        out.writeBytes(value.getBytes(StandardCharsets.ISO_8859_1));
        out.write('\r');
        out.write('\n');
    }

    /** {@code v >= 0} in its {@code digits} decimal digits at {@code out[p]}, written in place: no string. */
    private static int putDigits(byte[] out, int p, long v, int digits) {
        for (int i = p + digits - 1; i >= p; i--) {
            out[i] = (byte) ('0' + v % 10);
            v /= 10;
        }
        return p + digits;
    }

    /** The decimal digits of {@code v >= 0}. */
    private static int digits(long v) {
        int d = 1;
        while (v >= 10) {
            v /= 10;
            d++;
        }
        return d;
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    private static int put(byte[] out, int p, byte[] bytes) {
        System.arraycopy(bytes, 0, out, p, bytes.length);
        return p + bytes.length;
    }

    /** What {@link #latin1} writes: one byte a char, one {@code ?} for a surrogate pair (as the JDK's encoder). */
    private static int latin1Length(String s) {
        int n = s.length();
        for (int i = 0; i < s.length() - 1; i++) {
            if (Character.isHighSurrogate(s.charAt(i)) && Character.isLowSurrogate(s.charAt(i + 1))) {
                n--;
                i++;
            }
        }
        return n;
    }

    /** {@code s}, whose chars are all ISO-8859-1, at {@code out[p]}: a copy of the string's own bytes. */
    @SuppressWarnings("deprecation") // the low byte of each char, which is the char itself in ISO-8859-1
    private static int latin1Bytes(byte[] out, int p, String s) {
        s.getBytes(0, s.length(), out, p);
        return p + s.length();
    }

    /** {@code s} as ISO-8859-1 at {@code out[p]}, as {@code String.getBytes(ISO_8859_1)} encodes it. */
    private static int latin1(byte[] out, int p, String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c <= 0xff) {
                out[p++] = (byte) c;
            } else {
                if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                    i++;
                }
                out[p++] = '?';
            }
        }
        return p;
    }
}
