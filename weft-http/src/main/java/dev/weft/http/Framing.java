package dev.weft.http;

/**
 * How a message's body is delimited (RFC 9112 section 6).
 *
 * @param kind   the framing
 * @param length the body's length for {@link Kind#LENGTH}, else -1
 */
public record Framing(Kind kind, long length) {
    public enum Kind {
        /** No body. */
        NONE,
        /** {@code Content-Length} bytes. */
        LENGTH,
        /** {@code Transfer-Encoding: chunked}. */
        CHUNKED,
        /** Until the peer closes the connection (responses only). */
        UNTIL_CLOSE
    }

    public static final Framing NONE = new Framing(Kind.NONE, -1);
    public static final Framing CHUNKED = new Framing(Kind.CHUNKED, -1);
    public static final Framing UNTIL_CLOSE = new Framing(Kind.UNTIL_CLOSE, -1);

    public static Framing length(long n) {
        return new Framing(Kind.LENGTH, n);
    }
}
