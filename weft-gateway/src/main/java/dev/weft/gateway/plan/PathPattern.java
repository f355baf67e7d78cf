package dev.weft.gateway.plan;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** A route path such as {@code /orders/{id}/items}: literal segments and named single-segment captures. */
public final class PathPattern {
    private final String source;
    private final String[] segments; // literal, or null for a capture
    private final String[] names;

    private PathPattern(String source, String[] segments, String[] names) {
        this.source = source;
        this.segments = segments;
        this.names = names;
    }

    public static PathPattern parse(String path) {
        if (!path.startsWith("/")) {
            throw new IllegalArgumentException("a route path starts with /, got '" + path + "'");
        }
        String[] parts = split(path);
        String[] segs = new String[parts.length];
        String[] names = new String[parts.length];
        List<String> seen = new ArrayList<>();
        for (int i = 0; i < parts.length; i++) {
            String p = parts[i];
            if (p.startsWith("{") && p.endsWith("}")) {
                String n = p.substring(1, p.length() - 1);
                if (!n.matches("[A-Za-z_][A-Za-z0-9_-]*")) {
                    throw new IllegalArgumentException("path parameter '" + p + "' needs a name of letters, digits, _ or -");
                }
                if (seen.contains(n)) {
                    throw new IllegalArgumentException("path parameter {" + n + "} appears twice");
                }
                seen.add(n);
                names[i] = n;
            } else if (p.contains("{") || p.contains("}")) {
                throw new IllegalArgumentException("a path parameter takes a whole segment, got '" + p + "'");
            } else {
                segs[i] = p;
            }
        }
        return new PathPattern(path, segs, names);
    }

    private static String[] split(String path) {
        String p = path.length() > 1 && path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
        return p.equals("/") ? new String[0] : p.substring(1).split("/", -1);
    }

    /**
     * The captured values, percent-decoded, or null when the path does not match (an empty capture or a
     * malformed escape in one does not match).
     */
    public Map<String, String> match(String path) {
        String[] parts = split(path);
        if (parts.length != segments.length) {
            return null;
        }
        Map<String, String> out = null;
        for (int i = 0; i < parts.length; i++) {
            if (segments[i] != null) {
                if (!segments[i].equals(parts[i])) {
                    return null;
                }
            } else {
                if (parts[i].isEmpty()) {
                    return null;
                }
                if (out == null) {
                    out = new LinkedHashMap<>();
                }
                String value = decode(parts[i]);
                if (value == null) {
                    return null;
                }
                out.put(names[i], value);
            }
        }
        return out == null ? Map.of() : out;
    }

    /**
     * A path segment with its percent-escapes decoded (as UTF-8); {@code +} is a plus in a path, not a space.
     * Null when an escape is malformed ({@code %zz}, or cut short).
     */
    static String decode(String segment) {
        if (segment.indexOf('%') < 0) {
            return segment;
        }
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream(segment.length());
        for (int i = 0; i < segment.length(); i++) {
            if (segment.charAt(i) != '%') {
                int end = segment.indexOf('%', i);
                end = end < 0 ? segment.length() : end;
                out.writeBytes(segment.substring(i, end).getBytes(java.nio.charset.StandardCharsets.UTF_8));
                i = end - 1;
                continue;
            }
            int hi = i + 2 < segment.length() ? Character.digit(segment.charAt(i + 1), 16) : -1;
            int lo = hi < 0 ? -1 : Character.digit(segment.charAt(i + 2), 16);
            if (lo < 0) {
                return null;
            }
            out.write(hi << 4 | lo);
            i += 2;
        }
        return out.toString(java.nio.charset.StandardCharsets.UTF_8);
    }

    public List<String> parameterNames() {
        List<String> out = new ArrayList<>();
        for (String n : names) {
            if (n != null) {
                out.add(n);
            }
        }
        return out;
    }

    @Override
    public String toString() {
        return source;
    }
}
