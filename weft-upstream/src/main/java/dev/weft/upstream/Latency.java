package dev.weft.upstream;

import dev.weft.core.Durations;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * How long the simulator waits before it answers:
 * <ul>
 *   <li>{@code 200ms} — always that long;</li>
 *   <li>{@code uniform:10ms..1s} — uniformly between the two;</li>
 *   <li>{@code lognormal:p50=100ms,p99=1s} — log-normal with that median and 99th percentile;</li>
 *   <li>{@code seq:2s,0ms} — the values in turn, per path and query (for tests that need a slow first
 *       call and a fast second one).</li>
 * </ul>
 * Every sample is capped at {@link #MAX}.
 */
public sealed interface Latency {
    Duration MAX = Duration.ofMinutes(10);
    double Z99 = 2.3263478740408408;

    /** A sample; {@code turn} counts the requests with the same path and query (for {@code seq:}). */
    Duration sample(long turn);

    record Fixed(Duration value) implements Latency {
        public Duration sample(long turn) {
            return value;
        }
    }

    record Uniform(Duration low, Duration high) implements Latency {
        public Duration sample(long turn) {
            long lo = low.toNanos();
            long hi = high.toNanos();
            return Duration.ofNanos(lo == hi ? lo : ThreadLocalRandom.current().nextLong(lo, hi + 1));
        }
    }

    record LogNormal(Duration p50, Duration p99) implements Latency {
        public Duration sample(long turn) {
            double mu = Math.log(p50.toNanos());
            double sigma = (Math.log(p99.toNanos()) - mu) / Z99;
            double v = Math.exp(mu + sigma * ThreadLocalRandom.current().nextGaussian());
            return Duration.ofNanos((long) Math.min(v, MAX.toNanos()));
        }
    }

    record Sequence(List<Duration> values) implements Latency {
        public Duration sample(long turn) {
            return values.get((int) (turn % values.size()));
        }
    }

    /** Parses the forms above; the message of the exception names the parameter. */
    static Latency parse(String text) {
        String t = text.strip();
        try {
            if (t.startsWith("uniform:")) {
                String[] p = t.substring(8).split("\\.\\.", -1);
                if (p.length != 2) {
                    throw new IllegalArgumentException("expected uniform:LOW..HIGH such as uniform:10ms..1s");
                }
                Duration lo = capped(Durations.parse(p[0]));
                Duration hi = capped(Durations.parse(p[1]));
                if (hi.compareTo(lo) < 0) {
                    throw new IllegalArgumentException("uniform: the high end " + p[1] + " is below the low end "
                            + p[0]);
                }
                return new Uniform(lo, hi);
            }
            if (t.startsWith("lognormal:")) {
                Duration p50 = null;
                Duration p99 = null;
                for (String part : t.substring(10).split(",")) {
                    String[] kv = part.split("=", 2);
                    if (kv.length == 2 && kv[0].strip().equals("p50")) {
                        p50 = Durations.parse(kv[1]);
                    } else if (kv.length == 2 && kv[0].strip().equals("p99")) {
                        p99 = Durations.parse(kv[1]);
                    } else {
                        throw new IllegalArgumentException("expected lognormal:p50=D,p99=D such as "
                                + "lognormal:p50=100ms,p99=1s");
                    }
                }
                if (p50 == null || p99 == null || p50.isZero() || p99.compareTo(p50) < 0) {
                    throw new IllegalArgumentException("expected lognormal:p50=D,p99=D with 0 < p50 <= p99");
                }
                return new LogNormal(capped(p50), capped(p99));
            }
            if (t.startsWith("seq:")) {
                List<Duration> values = new ArrayList<>();
                for (String part : t.substring(4).split(",")) {
                    values.add(capped(Durations.parse(part)));
                }
                if (values.isEmpty() || values.size() > 1000) {
                    throw new IllegalArgumentException("expected seq: with 1 to 1000 durations");
                }
                return new Sequence(List.copyOf(values));
            }
            return new Fixed(capped(Durations.parse(t)));
        } catch (IllegalArgumentException e) {
            throw new BadParameterException("latency", e.getMessage()
                    + " (forms: 200ms, uniform:10ms..1s, lognormal:p50=100ms,p99=1s, seq:2s,0ms)");
        }
    }

    private static Duration capped(Duration d) {
        if (d.compareTo(MAX) > 0) {
            throw new IllegalArgumentException("latency " + Durations.format(d) + " is over the maximum of "
                    + Durations.format(MAX));
        }
        return d;
    }
}
