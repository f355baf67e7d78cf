package dev.weft.client.policy;

import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.format.ResolverStyle;
import java.time.temporal.ChronoField;
import java.util.Locale;
import java.util.Optional;

/**
 * The {@code Retry-After} header (RFC 9110 section 10.2.3): delta-seconds, or an HTTP-date in any of its
 * three forms (IMF-fixdate, obsolete RFC 850, asctime), always GMT. The wait is bounded: at most
 * {@code max}; a date in the past is zero. A value that is neither (signs, fractions, spaces inside,
 * other zones, impossible dates) gives an empty Optional: the caller waits as it would without it.
 */
public final class RetryAfter {
    /** A sensible bound for callers that have none of their own. */
    public static final Duration DEFAULT_MAX = Duration.ofHours(24);

    private static final DateTimeFormatter IMF_FIXDATE = formatter("EEE, dd MMM uuuu HH:mm:ss 'GMT'");
    private static final DateTimeFormatter ASCTIME = new DateTimeFormatterBuilder().appendPattern("EEE MMM ")
            .padNext(2).appendValue(ChronoField.DAY_OF_MONTH).appendPattern(" HH:mm:ss uuuu")
            .toFormatter(Locale.US).withResolverStyle(ResolverStyle.STRICT);
    private static final DateTimeFormatter RFC_850 = new DateTimeFormatterBuilder().appendPattern("EEEE, dd-MMM-")
            .appendValueReduced(ChronoField.YEAR, 2, 2, 1970).appendPattern(" HH:mm:ss 'GMT'")
            .toFormatter(Locale.US).withResolverStyle(ResolverStyle.STRICT);

    private RetryAfter() {
    }

    private static DateTimeFormatter formatter(String pattern) {
        return DateTimeFormatter.ofPattern(pattern, Locale.US).withResolverStyle(ResolverStyle.STRICT);
    }

    /** How long {@code value} says to wait from {@code now}, at most {@code max}; empty when absent or unreadable. */
    public static Optional<Duration> parse(String value, Instant now, Duration max) {
        if (value == null) {
            return Optional.empty();
        }
        String v = value.strip();
        if (v.isEmpty()) {
            return Optional.empty();
        }
        if (v.chars().allMatch(c -> c >= '0' && c <= '9')) {
            // 1*DIGIT; more digits than a long holds is simply "very long"
            long seconds = v.length() > 18 ? Long.MAX_VALUE : Long.parseLong(v);
            return Optional.of(seconds >= max.toSeconds() ? max : Duration.ofSeconds(seconds));
        }
        for (DateTimeFormatter f : new DateTimeFormatter[]{IMF_FIXDATE, RFC_850, ASCTIME}) {
            Instant at;
            try {
                at = LocalDateTime.parse(v, f).toInstant(ZoneOffset.UTC);
            } catch (DateTimeException e) {
                continue;
            }
            Duration d = Duration.between(now, at);
            return Optional.of(d.isNegative() ? Duration.ZERO : d.compareTo(max) > 0 ? max : d);
        }
        return Optional.empty();
    }
}
