package dev.weft.gateway.plan;

import com.fasterxml.jackson.databind.JsonNode;

import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * A text with placeholders: {@code http://b/users/{path.id}?page={query.page}}. A placeholder is a
 * reference ({@link Ref}): {@code path.NAME}, {@code query.NAME}, {@code header.NAME}, {@code item[.PATH]}
 * (inside {@code foreach}), or {@code CALL.body[.PATH]} / {@code CALL.status} for an earlier call.
 * {@code {{} } and {@code }}} write literal braces. Parsed once at load; rendering is a loop over parts.
 */
public final class Template {
    private final String source;
    private final List<Object> parts; // String literal or Ref
    /**
     * When the template is a URL whose scheme and authority are written out before any placeholder
     * ({@code http://b:9001/users/{path.id}}): that origin ({@code http://b:9001}), parsed once; else null.
     */
    private final URI origin;

    private Template(String source, List<Object> parts) {
        this.source = source;
        this.parts = parts;
        this.origin = originOf(parts);
    }

    private static URI originOf(List<Object> parts) {
        if (parts.isEmpty() || !(parts.getFirst() instanceof String lit)) {
            return null;
        }
        int scheme = lit.indexOf("://");
        if (scheme <= 0) {
            return null;
        }
        int slash = lit.indexOf('/', scheme + 3);
        if (slash < 0) {
            return null; // the path (or the authority's end) comes from a placeholder
        }
        String prefix = lit.substring(0, slash);
        if (prefix.indexOf('?') >= 0 || prefix.indexOf('#') >= 0) {
            return null;
        }
        try {
            URI o = new URI(prefix);
            return o.getScheme() != null && o.getHost() != null && o.getRawPath().isEmpty() && o.getRawQuery() == null
                    ? o : null;
        } catch (URISyntaxException e) {
            return null; // the whole URL is parsed per call, which names the problem
        }
    }

    /** @throws IllegalArgumentException naming the column (0-based offset) of the problem */
    public static Template parse(String text) {
        List<Object> parts = new ArrayList<>();
        StringBuilder lit = new StringBuilder();
        int i = 0;
        while (i < text.length()) {
            char c = text.charAt(i);
            if (c == '{' && i + 1 < text.length() && text.charAt(i + 1) == '{') {
                lit.append('{');
                i += 2;
            } else if (c == '}' && i + 1 < text.length() && text.charAt(i + 1) == '}') {
                lit.append('}');
                i += 2;
            } else if (c == '{') {
                int end = text.indexOf('}', i);
                if (end < 0) {
                    throw new IllegalArgumentException("placeholder at offset " + i + " has no closing }");
                }
                if (!lit.isEmpty()) {
                    parts.add(lit.toString());
                    lit.setLength(0);
                }
                parts.add(Ref.parse(text.substring(i + 1, end).strip()));
                i = end + 1;
            } else {
                lit.append(c);
                i++;
            }
        }
        if (!lit.isEmpty()) {
            parts.add(lit.toString());
        }
        return new Template(text, List.copyOf(parts));
    }

    /** The references in this template. */
    public List<Ref> refs() {
        List<Ref> out = new ArrayList<>();
        for (Object p : parts) {
            if (p instanceof Ref r) {
                out.add(r);
            }
        }
        return out;
    }

    /** The names of earlier calls this template reads. */
    public Set<String> callsUsed() {
        Set<String> out = new LinkedHashSet<>();
        for (Ref r : refs()) {
            if (r.isCall()) {
                out.add(r.root());
            }
        }
        return out;
    }

    /** When the whole template is one placeholder, that reference (a body leaf keeps its JSON type). */
    public Ref single() {
        return parts.size() == 1 && parts.getFirst() instanceof Ref r ? r : null;
    }

    /**
     * Renders with values from {@code scope}; {@code urlEncode} percent-encodes placeholder values (for
     * URLs), literals are kept as written.
     *
     * @throws Scope.MissingValueException when a value is absent or not JSON where JSON is needed
     */
    public String render(Scope scope, boolean urlEncode) {
        StringBuilder sb = new StringBuilder(source.length() + 32);
        boolean inQuery = false;
        for (Object p : parts) {
            if (p instanceof String s) {
                sb.append(s);
                inQuery |= s.indexOf('?') >= 0;
            } else {
                String v = asText(scope.resolve((Ref) p), (Ref) p);
                if (urlEncode && !inQuery && dotSegment(v)) {
                    // encoded or not, '..' in a path is a step up for a backend that resolves it (or decodes %2F first)
                    throw Scope.MissingValueException.refused("{" + p + "} is '" + dev.weft.http.Http1.printable(v)
                            + "', which holds a dot-segment ('.' or '..'): refused in a URL's path");
                }
                sb.append(urlEncode ? encode(v) : v);
            }
        }
        return sb.toString();
    }

    /** Whether {@code v}, split at '/' and '\\', has a piece that is '.' or '..'. */
    static boolean dotSegment(String v) {
        int start = 0;
        for (int i = 0; i <= v.length(); i++) {
            if (i == v.length() || v.charAt(i) == '/' || v.charAt(i) == '\\') {
                int n = i - start;
                if ((n == 1 || n == 2) && v.charAt(start) == '.' && (n == 1 || v.charAt(start + 1) == '.')) {
                    return true;
                }
                start = i + 1;
            }
        }
        return false;
    }

    /**
     * {@code rendered} (this template rendered) as a URI, as {@link URI#create} parses it. When the template's origin is
     * written out ({@link #originOf}), only the part after it (the path, query and fragment, which placeholders may
     * fill) is parsed, with the same checks, and joined to the origin parsed at load: the host is not parsed again
     * for every call. A part that starts with {@code //} would be read as an authority: that URL is parsed whole.
     *
     * @throws IllegalArgumentException when the URL is not a valid URI
     */
    public URI toUri(String rendered) {
        URI o = origin;
        if (o != null) {
            String text = o.toString(); // the origin as written (URI keeps its source text)
            int at = text.length();
            if (rendered.length() > at + 1 && rendered.charAt(at) == '/' && rendered.charAt(at + 1) != '/'
                    && rendered.startsWith(text)) {
                try {
                    return o.resolve(URI.create(rendered.substring(at)));
                } catch (IllegalArgumentException e) {
                    // parsed whole below, so that the error names the URL and its index as it always did
                }
            }
        }
        return URI.create(rendered);
    }

    /** The origin parsed at load ({@link #toUri}), or null when the URL is parsed whole each time. */
    URI origin() {
        return origin;
    }

    public String source() {
        return source;
    }

    static String asText(JsonNode n, Ref ref) {
        if (n == null || n.isMissingNode() || n.isNull()) {
            throw Scope.MissingValueException.missing("{" + ref + "} has no value");
        }
        return n.isValueNode() ? n.asText() : n.toString();
    }

    /** Percent-encodes everything but RFC 3986 unreserved characters. */
    static String encode(String v) {
        byte[] bytes = v.getBytes(StandardCharsets.UTF_8);
        StringBuilder sb = new StringBuilder(bytes.length + 8);
        for (byte b : bytes) {
            int c = b & 0xff;
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.'
                    || c == '_' || c == '~') {
                sb.append((char) c);
            } else {
                percent(sb, c);
            }
        }
        return sb.toString();
    }

    /** Appends the percent-encoding of the byte {@code b} (0-255), in upper-case hex: {@code %7C}. */
    static void percent(StringBuilder sb, int b) {
        sb.append('%').append(Character.toUpperCase(Character.forDigit(b >> 4, 16)))
                .append(Character.toUpperCase(Character.forDigit(b & 15, 16)));
    }

    @Override
    public String toString() {
        return source;
    }

    /**
     * One reference: a root ({@code path}, {@code query}, {@code header}, {@code item} or a call name),
     * for calls a part ({@code body} or {@code status}), and a path of field names and array indexes.
     */
    public record Ref(String root, String part, List<String> path) {
        public static final Set<String> REQUEST_ROOTS = Set.of("path", "query", "header");

        static Ref parse(String expr) {
            if (expr.isEmpty()) {
                throw new IllegalArgumentException("empty placeholder {}");
            }
            String[] segs = expr.split("\\.", -1);
            for (String s : segs) {
                if (s.isEmpty()) {
                    throw new IllegalArgumentException("placeholder {" + expr + "} has an empty segment");
                }
            }
            String root = segs[0];
            if (REQUEST_ROOTS.contains(root)) {
                if (segs.length != 2) {
                    throw new IllegalArgumentException("expected {" + root + ".NAME}, got {" + expr + "}");
                }
                return new Ref(root, null, List.of(segs[1]));
            }
            if (root.equals("item")) {
                return new Ref(root, null, List.of(segs).subList(1, segs.length));
            }
            if (segs.length < 2 || !(segs[1].equals("body") || segs[1].equals("status"))) {
                throw new IllegalArgumentException("expected {path.X}, {query.X}, {header.X}, {item...}, "
                        + "{CALL.body...} or {CALL.status}, got {" + expr + "}");
            }
            if (segs[1].equals("status") && segs.length > 2) {
                throw new IllegalArgumentException("{CALL.status} takes no path, got {" + expr + "}");
            }
            return new Ref(root, segs[1], List.of(segs).subList(2, segs.length));
        }

        public boolean isCall() {
            return part != null;
        }

        @Override
        public String toString() {
            StringBuilder sb = new StringBuilder(root);
            if (part != null) {
                sb.append('.').append(part);
            }
            for (String p : path) {
                sb.append('.').append(p);
            }
            return sb.toString();
        }
    }
}
