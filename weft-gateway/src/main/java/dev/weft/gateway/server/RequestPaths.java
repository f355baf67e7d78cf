package dev.weft.gateway.server;

/**
 * What the gateway refuses in a request's path and query (400) before it routes: anything a backend could read as
 * another path than the one the gateway routed on, and anything that is not a URI's path at all. The gateway routes
 * on the path as sent and relays it as sent; this keeps the two the same path at the backend too (docs/gateway.md,
 * "Paths the gateway refuses").
 *
 * <p>A path is refused when it has:
 * <ul>
 *   <li>a character RFC 3986 does not allow in a path (anything but unreserved, sub-delims, {@code :}, {@code @},
 *       {@code /} and percent-encodings): a space, {@code \}, {@code [}, {@code |}, {@code {}, a byte over 0x7E;</li>
 *   <li>a {@code ;}: Tomcat, Jetty and Spring drop a segment's {@code ;parameters} before they route, so
 *       {@code /b/admin;x/1} is {@code /b/admin/1} to them, past a route on that path;</li>
 *   <li>a {@code %} not followed by two hex digits, an encoded NUL ({@code %00}), or an encoded {@code /} or
 *       {@code \} ({@code %2F}, {@code %5C}), which some backends decode before they route;</li>
 *   <li>a percent-encoded unreserved character ({@code %2e}, {@code %61}): RFC 3986 section 2.3 says such a path is the
 *       same as the one with the character itself, so a backend may route {@code /b/%61dmin} as {@code /b/admin};</li>
 *   <li>a dot-segment, {@code .} or {@code ..}, or an empty segment ({@code //}) before the last: a backend that
 *       resolves them (RFC 3986 section 5.2.4) serves a path outside the route's.</li>
 * </ul>
 * A query is refused only for a {@code %} not followed by two hex digits or an encoded NUL; a character a URI does not
 * allow in a query is percent-encoded where a proxy route passes the query on ({@code ProxyRoute.backendUri}).
 */
final class RequestPaths {
    private RequestPaths() {
    }

    /** Why {@code path} and {@code query} (raw, as sent) are refused, or null when they are not. */
    static String problem(String path, String query) {
        if (path.equals("*")) {
            return null; // OPTIONS *: no route takes it
        }
        String p = chars(path, false);
        if (p != null) {
            return "the path " + p;
        }
        String q = query == null ? null : chars(query, true);
        if (q != null) {
            return "the query " + q;
        }
        return segments(path);
    }

    private static String chars(String s, boolean query) {
        int n = s.length();
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            if (c == '%') {
                if (i + 2 >= n || hex(s.charAt(i + 1)) < 0 || hex(s.charAt(i + 2)) < 0) {
                    return "has a '%' at character " + (i + 1) + " not followed by two hex digits";
                }
                int b = hex(s.charAt(i + 1)) * 16 + hex(s.charAt(i + 2));
                if (b == 0) {
                    return "has an encoded NUL (%00)";
                }
                if (!query && (b == '/' || b == '\\')) {
                    return "has an encoded '" + (char) b + "' (" + s.substring(i, i + 3)
                            + "), which some backends decode before they route";
                }
                if (!query && unreserved((char) b)) {
                    return "has a percent-encoded '" + (char) b + "' (" + s.substring(i, i + 3)
                            + "): send the character itself (RFC 3986 section 2.3)";
                }
                i += 2;
            } else if (!query && c == ';') {
                return "has a ';' at character " + (i + 1) + ": segment parameters, which some backends drop before"
                        + " they route";
            } else if (!query && !pchar(c) && c != '/') {
                return "has a character a URI does not allow there at character " + (i + 1) + " ("
                        + (c < 0x20 || c > 0x7E ? String.format("0x%02X", (int) c) : "'" + c + "'")
                        + "): percent-encode it";
            }
        }
        return null;
    }

    /** Dot-segments, and empty segments but the last. */
    private static String segments(String path) {
        int n = path.length();
        int i = path.startsWith("/") ? 1 : 0;
        while (true) {
            int end = path.indexOf('/', i);
            String segment = path.substring(i, end < 0 ? n : end);
            if (segment.equals(".") || segment.equals("..")) {
                return "the path has a dot-segment ('" + segment + "'): send the path it stands for";
            }
            if (end < 0) {
                return null; // the last segment may be empty: a trailing '/'
            }
            if (segment.isEmpty()) {
                return "the path has an empty segment ('//')";
            }
            i = end + 1;
        }
    }

    private static boolean unreserved(char c) {
        return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.'
                || c == '_' || c == '~';
    }

    private static boolean pchar(char c) {
        if (unreserved(c)) {
            return true;
        }
        return switch (c) {
            case '!', '$', '&', '\'', '(', ')', '*', '+', ',', ';', '=', ':', '@' -> true;
            default -> false;
        };
    }

    private static int hex(char c) {
        if (c >= '0' && c <= '9') {
            return c - '0';
        }
        if (c >= 'a' && c <= 'f') {
            return c - 'a' + 10;
        }
        if (c >= 'A' && c <= 'F') {
            return c - 'A' + 10;
        }
        return -1;
    }
}
