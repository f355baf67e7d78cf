package dev.weft.core.http;

import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The request line and headers of an HTTP/1.1 request.
 *
 * @param headers lower-cased names to values, in arrival order; repeated names keep every value
 */
public record RequestHead(String method, String target, String path, String query, boolean http10,
                          List<Map.Entry<String, String>> headers) {

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

    /** Whether the connection stays open after the answer. */
    public boolean keepAlive() {
        String c = header("connection");
        return http10 ? "keep-alive".equalsIgnoreCase(c) : !"close".equalsIgnoreCase(c);
    }
}
