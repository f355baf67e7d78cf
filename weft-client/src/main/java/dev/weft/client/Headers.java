package dev.weft.client;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** HTTP header fields in order; names compare case-insensitively. Immutable. */
public final class Headers {
    public static final Headers EMPTY = new Headers(List.of());

    private final List<Map.Entry<String, String>> fields;

    private Headers(List<Map.Entry<String, String>> fields) {
        this.fields = fields;
    }

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
        return new Headers(List.copyOf(fields));
    }

    /** The first value of {@code name}, or null. */
    public String first(String name) {
        for (Map.Entry<String, String> f : fields) {
            if (f.getKey().equalsIgnoreCase(name)) {
                return f.getValue();
            }
        }
        return null;
    }

    public List<Map.Entry<String, String>> fields() {
        return fields;
    }

    public Headers with(String name, String value) {
        List<Map.Entry<String, String>> l = new ArrayList<>(fields);
        l.add(Map.entry(name, value));
        return new Headers(Collections.unmodifiableList(l));
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
