package dev.weft.config;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Byte sizes as people write them: {@code 512}, {@code 64KiB}, {@code 10MiB}, {@code 1GB}. */
public final class Sizes {
    private static final Pattern FORM = Pattern.compile("(\\d+)\\s*([kmg]i?b?|b)?", Pattern.CASE_INSENSITIVE);

    private Sizes() {
    }

    public static long parse(String text) {
        Matcher m = FORM.matcher(text.strip());
        if (!m.matches()) {
            throw new IllegalArgumentException("expected a size such as 512, 64KiB or 10MiB, got '" + text + "'");
        }
        long v = Long.parseLong(m.group(1));
        String unit = m.group(2) == null ? "b" : m.group(2).toLowerCase(Locale.ROOT);
        long mult = switch (unit) {
            case "b" -> 1;
            case "k", "kib", "ki" -> 1L << 10;
            case "kb" -> 1000;
            case "m", "mib", "mi" -> 1L << 20;
            case "mb" -> 1000_000;
            case "g", "gib", "gi" -> 1L << 30;
            case "gb" -> 1000_000_000;
            default -> throw new IllegalArgumentException("unknown size unit '" + m.group(2) + "'");
        };
        if (v > Long.MAX_VALUE / mult) {
            throw new IllegalArgumentException("size '" + text + "' is too large");
        }
        return v * mult;
    }
}
