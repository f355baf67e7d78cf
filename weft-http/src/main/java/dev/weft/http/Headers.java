package dev.weft.http;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * HTTP header fields in order, immutable. Names compare case-insensitively ({@link #first}, {@link #without}); the
 * names themselves keep the case they came with or were given, and are written so: a name's case on the wire is its
 * sender's. A repeated name keeps every field.
 *
 * <p>Fields are checked where they are written ({@link Http1Writer#checkField}: a token name, no CR, LF or NUL in a
 * value), once: a {@code Headers} remembers how many of its fields passed, so a constant set of fields (the JSON
 * content type of every answer) is checked the first time it is written, not on every answer.
 */
public final class Headers implements Iterable<Map.Entry<String, String>> {
    public static final Headers EMPTY = new Headers(List.of());

    private final List<Map.Entry<String, String>> fields;
    /**
     * What checking found, in one int so that no thread sees half of it: how many leading fields passed
     * {@link Http1Writer#checkField} (shifted left by one), and in bit 0 whether one of their values has a char above
     * U+00FF (then the writer may not copy a value's low bytes: U+010A would become LF). A cache of a pure function
     * of immutable fields: a thread that sees a stale value merely checks again.
     */
    private int checks;

    private Headers(List<Map.Entry<String, String>> fields) {
        this.fields = fields;
    }

    private Headers(List<Map.Entry<String, String>> fields, int checks) {
        this.fields = fields;
        this.checks = checks;
    }

    /** Names and values in pairs: {@code of("Content-Type", "text/plain", "X-Id", "1")}. */
    public static Headers of(String... namesAndValues) {
        if (namesAndValues.length % 2 != 0) {
            throw new IllegalArgumentException("names and values must come in pairs");
        }
        List<Map.Entry<String, String>> l = new ArrayList<>(namesAndValues.length / 2);
        for (int i = 0; i < namesAndValues.length; i += 2) {
            l.add(Map.entry(namesAndValues[i], namesAndValues[i + 1]));
        }
        return new Headers(Collections.unmodifiableList(l));
    }

    public static Headers of(List<Map.Entry<String, String>> fields) {
        return fields.isEmpty() ? EMPTY : new Headers(List.copyOf(fields));
    }

    /** Fields the reader accepted (so already checked by its stricter rules), without a copy. */
    static Headers read(List<Map.Entry<String, String>> fields) {
        return new Headers(Collections.unmodifiableList(fields), fields.size() << 1); // ISO-8859-1 strings: not wide
    }

    /** The first value of {@code name} (any case), or null. */
    public String first(String name) {
        for (Map.Entry<String, String> f : fields) {
            if (f.getKey().equalsIgnoreCase(name)) {
                return f.getValue();
            }
        }
        return null;
    }

    /**
     * Every value of {@code name} (any case) joined with ", ", as RFC 9110 section 5.3 combines a list field sent in
     * several lines; null when there is none.
     */
    public String joined(String name) {
        StringBuilder s = null;
        for (Map.Entry<String, String> f : fields) {
            if (f.getKey().equalsIgnoreCase(name)) {
                s = s == null ? new StringBuilder(f.getValue()) : s.append(", ").append(f.getValue());
            }
        }
        return s == null ? null : s.toString();
    }

    /**
     * Whether the list field {@code name} (every line of it) has the element {@code token}, any case, its parameters
     * ({@code ;q=...}) aside: {@code TE: trailers}, {@code Accept: text/event-stream}.
     */
    public boolean lists(String name, String token) {
        String all = joined(name);
        if (all == null) {
            return false;
        }
        for (String element : all.split(",")) {
            int semi = element.indexOf(';');
            if ((semi < 0 ? element : element.substring(0, semi)).strip().equalsIgnoreCase(token)) {
                return true;
            }
        }
        return false;
    }

    /** The fields in order (unmodifiable). */
    public List<Map.Entry<String, String>> fields() {
        return fields;
    }

    @Override
    public Iterator<Map.Entry<String, String>> iterator() {
        return fields.iterator();
    }

    /** These fields and one more at the end. */
    public Headers with(String name, String value) {
        List<Map.Entry<String, String>> l = new ArrayList<>(fields.size() + 1);
        l.addAll(fields);
        l.add(Map.entry(name, value));
        return new Headers(Collections.unmodifiableList(l), checks); // the same fields before the new one
    }

    /** These headers without any field named {@code name} (any case). */
    public Headers without(String name) {
        if (first(name) == null) {
            return this;
        }
        List<Map.Entry<String, String>> l = new ArrayList<>(fields.size());
        for (Map.Entry<String, String> f : fields) {
            if (!f.getKey().equalsIgnoreCase(name)) {
                l.add(f);
            }
        }
        return new Headers(Collections.unmodifiableList(l));
    }

    public int size() {
        return fields.size();
    }

    public boolean isEmpty() {
        return fields.isEmpty();
    }

    /**
     * Checks the fields not checked yet ({@link Http1Writer#checkField}) and remembers that they passed.
     *
     * @return whether a value has a char above U+00FF
     * @throws IllegalArgumentException for the first field that does not pass
     */
    boolean check() {
        int c = checks;
        int n = fields.size();
        boolean wide = (c & 1) != 0;
        for (int i = c >>> 1; i < n; i++) {
            Map.Entry<String, String> f = fields.get(i);
            wide |= Http1Writer.checkedWide(f.getKey(), f.getValue());
        }
        checks = n << 1 | (wide ? 1 : 0);
        return wide;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Headers h && fields.equals(h.fields);
    }

    @Override
    public int hashCode() {
        return fields.hashCode();
    }

    /** {@code {name: value, ...}}, names in lower case. */
    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("{");
        for (Map.Entry<String, String> f : fields) {
            if (sb.length() > 1) {
                sb.append(", ");
            }
            sb.append(f.getKey().toLowerCase(Locale.ROOT)).append(": ").append(f.getValue());
        }
        return sb.append('}').toString();
    }
}
