package dev.weft.config;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/** Collects config problems so that one check reports all of them, not just the first. */
public final class Problems {
    /** Reporting stops after this many; the rest are summed up in one line. */
    public static final int MAX = 100;

    private final List<ConfigException.Problem> list = new ArrayList<>();
    private int dropped;

    public void add(ConfigNode where, String message) {
        add(where.location(), message);
    }

    public void add(String location, String message) {
        if (list.size() < MAX) {
            list.add(new ConfigException.Problem(location, message));
        } else {
            dropped++;
        }
    }

    public void addAll(ConfigException e) {
        e.problems().forEach(p -> add(p.location(), p.message()));
    }

    /** Problems added so far (including those past {@link #MAX}). */
    public int size() {
        return list.size() + dropped;
    }

    public boolean isEmpty() {
        return list.isEmpty();
    }

    /** The file part of {@code file:line:column}. */
    private static String file(String location) {
        return location.replaceFirst(":\\d+:\\d+$", "");
    }

    /** Line (fromEnd 2) or column (fromEnd 1) of {@code file:line:column}; 0 when absent. */
    private static long position(String location, int fromEnd) {
        String[] parts = location.split(":");
        if (parts.length < 3) {
            return 0;
        }
        try {
            return Long.parseLong(parts[parts.length - fromEnd]);
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    public void throwIfAny() throws ConfigException {
        if (!list.isEmpty()) {
            List<ConfigException.Problem> all = new ArrayList<>(list);
            all.sort(Comparator.comparing((ConfigException.Problem p) -> file(p.location()))
                    .thenComparingLong(p -> position(p.location(), 2))
                    .thenComparingLong(p -> position(p.location(), 1)));
            if (dropped > 0) {
                all.add(new ConfigException.Problem("...", dropped + " more problems not shown"));
            }
            throw new ConfigException(all);
        }
    }
}
