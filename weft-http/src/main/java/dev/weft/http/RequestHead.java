package dev.weft.http;

/**
 * The request line and header fields of a request, whichever protocol brought it: what HTTP/1.1 and HTTP/2 have in
 * common. How the body is framed and whether the connection stays open belong to the HTTP/1.1 codec
 * ({@link Http1Request}); HTTP/2 frames each stream on its own.
 *
 * @param method  a token, as sent (methods are case-sensitive)
 * @param target  the request-target as sent: origin-form ({@code /a?b}), absolute-form or {@code *}
 * @param path    the target's path ({@code /} for {@code *} and an absolute-form without a path)
 * @param query   the target's query without {@code ?}, or empty
 * @param headers the fields in arrival order, values without surrounding whitespace, repeated names keeping
 *                every value; names in lower case (the HTTP/1.1 reader lowers them, as HTTP/2 sends them, so that
 *                a request relayed onwards looks the same whichever protocol brought it)
 */
public record RequestHead(String method, String target, String path, String query, Headers headers) {

    /** The first value of a header (name in any case), or null. */
    public String header(String name) {
        return headers.first(name);
    }
}
