package dev.weft.http;

/**
 * The request line and header fields of an HTTP/1.x request, as {@link Http1#readRequestHead} accepted them.
 *
 * @param method    a token, as sent (methods are case-sensitive)
 * @param target    the request-target as sent: origin-form ({@code /a?b}), absolute-form or {@code *}
 * @param path      the target's path ({@code /} for {@code *} and an absolute-form without a path)
 * @param query     the target's query without {@code ?}, or empty
 * @param http10    whether the request was HTTP/1.0
 * @param headers   the fields in arrival order, values without surrounding whitespace, repeated names keeping
 *                  every value; names in lower case (the HTTP/1.1 reader lowers them, as HTTP/2 sends them, so that
 *                  a request relayed onwards looks the same whichever protocol brought it)
 * @param framing   how the body is delimited
 * @param keepAlive whether the connection may carry another request after this one's answer
 */
public record RequestHead(String method, String target, String path, String query, boolean http10,
                          Headers headers, Framing framing, boolean keepAlive) {

    /** The first value of a header (name in any case), or null. */
    public String header(String name) {
        return headers.first(name);
    }
}
