package dev.weft.dispatch.config;

import dev.weft.config.ConfigException;
import dev.weft.config.ConfigNode;
import dev.weft.config.Problems;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Reads an endpoint's {@code rate_limit: N/s} (or {@code N/min}, {@code N/h}) and {@code burst: N}. */
final class RateLimits {
    static final double MAX_PER_SECOND = 100_000;
    static final double MIN_PER_SECOND = 1.0 / 3600;
    static final int MAX_BURST = 100_000;
    private static final Pattern RATE = Pattern.compile("\\s*(\\d+(?:\\.\\d+)?)\\s*/\\s*(s|min|h)\\s*");

    private RateLimits() {
    }

    /** The limit, or null without {@code rate_limit}; problems are added to {@code problems}. */
    static EndpointConfig.RateLimit read(ConfigNode rate, ConfigNode burst, Problems problems) {
        try {
            if (rate == null) {
                if (burst != null) {
                    throw burst.error("'burst' needs 'rate_limit' (such as rate_limit: 40/s)");
                }
                return null;
            }
            double perSecond = perSecond(rate);
            int b = burst != null ? (int) burst.integer(1, MAX_BURST) : defaultBurst(perSecond);
            return new EndpointConfig.RateLimit(perSecond, b);
        } catch (ConfigException e) {
            problems.addAll(e);
            return null;
        }
    }

    /** 10% of a second's worth, at least 1. */
    static int defaultBurst(double perSecond) {
        return (int) Math.max(1, Math.ceil(perSecond / 10));
    }

    private static double perSecond(ConfigNode n) throws ConfigException {
        Matcher m = RATE.matcher(n.text());
        if (!m.matches()) {
            throw n.error("a rate limit is N/s, N/min or N/h (such as 40/s), got '" + n.text() + "'");
        }
        double v = Double.parseDouble(m.group(1)) / switch (m.group(2)) {
            case "s" -> 1;
            case "min" -> 60;
            default -> 3600;
        };
        if (v < MIN_PER_SECOND - 1e-12 || v > MAX_PER_SECOND) {
            throw n.error("a rate limit from 1/h to 100000/s, got '" + n.text() + "'");
        }
        return v;
    }
}
