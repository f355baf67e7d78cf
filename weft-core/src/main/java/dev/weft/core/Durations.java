package dev.weft.core;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Durations as people write them in configs and URLs: {@code 250ms}, {@code 1.5s}, {@code 2m},
 * {@code 1h}, {@code 500us}, {@code 0}. A unit is required for every value but zero.
 */
public final class Durations {
    private static final Pattern FORM = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*(ns|us|µs|ms|s|m|h|d)");

    private Durations() {
    }

    /**
     * Parses one duration.
     *
     * @throws IllegalArgumentException with a message that shows the expected form
     */
    public static Duration parse(String text) {
        if (text == null) {
            throw new IllegalArgumentException("expected a duration such as 250ms, 1.5s or 2m, got nothing");
        }
        String t = text.strip();
        if (t.equals("0")) {
            return Duration.ZERO;
        }
        Matcher m = FORM.matcher(t);
        if (!m.matches()) {
            throw new IllegalArgumentException("expected a duration such as 250ms, 1.5s or 2m, got '" + text + "'");
        }
        double value = Double.parseDouble(m.group(1));
        double nanosPerUnit = switch (m.group(2)) {
            case "ns" -> 1;
            case "us", "µs" -> 1e3;
            case "ms" -> 1e6;
            case "s" -> 1e9;
            case "m" -> 60e9;
            case "h" -> 3600e9;
            case "d" -> 86400e9;
            default -> throw new AssertionError(m.group(2));
        };
        double nanos = value * nanosPerUnit;
        if (nanos > Long.MAX_VALUE / 2.0) {
            throw new IllegalArgumentException("duration '" + text + "' is too long");
        }
        return Duration.ofNanos(Math.round(nanos));
    }

    /** A short human form: {@code 0}, {@code 850us}, {@code 250ms}, {@code 1.5s}, {@code 2m}. */
    public static String format(Duration d) {
        long nanos = d.toNanos();
        if (nanos == 0) {
            return "0";
        }
        if (nanos % 60_000_000_000L == 0) {
            return nanos / 60_000_000_000L + "m";
        }
        if (nanos >= 1_000_000_000L) {
            return trim(nanos / 1e9) + "s";
        }
        if (nanos >= 1_000_000L) {
            return trim(nanos / 1e6) + "ms";
        }
        if (nanos >= 1_000L) {
            return trim(nanos / 1e3) + "us";
        }
        return nanos + "ns";
    }

    private static String trim(double v) {
        String s = String.format(java.util.Locale.ROOT, "%.3f", v);
        s = s.replaceAll("0+$", "");
        return s.endsWith(".") ? s.substring(0, s.length() - 1) : s;
    }
}
