package dev.weft.http;

import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The request line and header fields of an HTTP/1.x request, as {@link Http1#readRequestHead} accepted them.
 *
 * @param method    a token, as sent (methods are case-sensitive)
 * @param target    the request-target as sent: origin-form ({@code /a?b}), absolute-form or {@code *}
 * @param path      the target's path ({@code /} for {@code *} and an absolute-form without a path)
 * @param query     the target's query without {@code ?}, or empty
 * @param http10    whether the request was HTTP/1.0
 * @param headers   lower-cased names to values (surrounding whitespace removed), in arrival order; repeated
 *                  names keep every value
 * @param framing   how the body is delimited
 * @param keepAlive whether the connection may carry another request after this one's answer
 */
public record RequestHead(String method, String target, String path, String query, boolean http10,
                          List<Map.Entry<String, String>> headers, Framing framing, boolean keepAlive) {

    /** The first value of a header (name in any case), or null. */
    public String header(String name) {
        String n = name.toLowerCase(Locale.ROOT);
        for (Map.Entry<String, String> h : headers) {
            if (h.getKey().equals(n)) {
                return h.getValue();
            }
        }
        return null;
    }
}
