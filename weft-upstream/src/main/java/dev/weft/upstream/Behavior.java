package dev.weft.upstream;

import dev.weft.core.Durations;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What the simulator does for one request, from the path's defaults (the {@code --config} file)
 * overlaid with the query parameters:
 *
 * <table>
 *   <tr><td>latency</td><td>wait before answering: {@code 200ms}, {@code uniform:10ms..1s},
 *       {@code lognormal:p50=100ms,p99=1s}, {@code seq:2s,0ms}; default 0</td></tr>
 *   <tr><td>status</td><td>status code, or {@code seq:503,200} in turn; default 200</td></tr>
 *   <tr><td>bytes</td><td>pad the JSON body to exactly this many bytes (at most 64 MiB)</td></tr>
 *   <tr><td>items</td><td>number of items in the body, 0..10000; default 3</td></tr>
 *   <tr><td>fail</td><td>share of requests answered 503 instead, 0..1; default 0</td></tr>
 *   <tr><td>fault</td><td>{@code hang} (never answer), {@code reset} (TCP RST), {@code close} (close
 *       without answering), {@code drip} (headers, then the body one byte per {@code drip})</td></tr>
 *   <tr><td>drip</td><td>interval between body bytes with fault=drip; default 1s</td></tr>
 *   <tr><td>hang</td><td>how long fault=hang holds the connection before closing it; default 10m</td></tr>
 *   <tr><td>retry_after</td><td>send {@code Retry-After: N} (seconds) with the answer</td></tr>
 * </table>
 * Unknown query parameters are ignored (callers add their own).
 */
public record Behavior(Latency latency, List<Integer> statuses, long bytes, int items, double fail, Fault fault,
                       Duration drip, Duration hang, Long retryAfterSeconds, byte[] fixedBody) {

    public enum Fault { NONE, HANG, RESET, CLOSE, DRIP }

    public static final long MAX_BYTES = 64L * 1024 * 1024;
    public static final int MAX_ITEMS = 10_000;
    public static final Set<String> PARAMETERS =
            Set.of("latency", "status", "bytes", "items", "fail", "fault", "drip", "hang", "retry_after");
    public static final Behavior DEFAULT = new Behavior(new Latency.Fixed(Duration.ZERO), List.of(200), -1, 3, 0,
            Fault.NONE, Duration.ofSeconds(1), Duration.ofMinutes(10), null, null);

    /** The status for the {@code turn}-th request with this path and query. */
    public int status(long turn) {
        return statuses.get((int) (turn % statuses.size()));
    }

    /** This behaviour with {@code params} (names from {@link #PARAMETERS}; others ignored) applied on top. */
    public Behavior with(Map<String, String> params) {
        Latency latency = this.latency;
        List<Integer> statuses = this.statuses;
        long bytes = this.bytes;
        int items = this.items;
        double fail = this.fail;
        Fault fault = this.fault;
        Duration drip = this.drip;
        Duration hang = this.hang;
        Long retryAfter = this.retryAfterSeconds;
        for (Map.Entry<String, String> e : params.entrySet()) {
            String v = e.getValue();
            switch (e.getKey()) {
                case "latency" -> latency = Latency.parse(v);
                case "status" -> statuses = parseStatuses(v);
                case "bytes" -> bytes = parseLong("bytes", v, 0, MAX_BYTES);
                case "items" -> items = (int) parseLong("items", v, 0, MAX_ITEMS);
                case "fail" -> fail = parseShare(v);
                case "fault" -> fault = parseFault(v);
                case "drip" -> drip = parseDuration("drip", v, Duration.ofMillis(1), Duration.ofMinutes(1));
                case "hang" -> hang = parseDuration("hang", v, Duration.ZERO, Latency.MAX);
                case "retry_after" -> retryAfter = parseLong("retry_after", v, 0, 86_400);
                default -> {
                    // not ours
                }
            }
        }
        return new Behavior(latency, statuses, bytes, items, fail, fault, drip, hang, retryAfter, fixedBody);
    }

    public Behavior withFixedBody(byte[] body) {
        return new Behavior(latency, statuses, bytes, items, fail, fault, drip, hang, retryAfterSeconds, body);
    }

    private static List<Integer> parseStatuses(String v) {
        String t = v.strip();
        List<Integer> out = new ArrayList<>();
        String list = t.startsWith("seq:") ? t.substring(4) : t;
        String[] parts = list.split(",");
        if (!t.startsWith("seq:") && parts.length > 1) {
            throw new BadParameterException("status", "expected a status such as 503, or seq:503,200 for a sequence");
        }
        for (String p : parts) {
            out.add((int) parseLong("status", p, 100, 599));
        }
        if (out.size() > 1000) {
            throw new BadParameterException("status", "a sequence may hold at most 1000 statuses");
        }
        return List.copyOf(out);
    }

    private static long parseLong(String name, String v, long min, long max) {
        try {
            long n = Long.parseLong(v.strip());
            if (n < min || n > max) {
                throw new BadParameterException(name, "expected a whole number from " + min + " to " + max
                        + ", got " + n);
            }
            return n;
        } catch (NumberFormatException e) {
            throw new BadParameterException(name, "expected a whole number from " + min + " to " + max + ", got '"
                    + v + "'");
        }
    }

    private static double parseShare(String v) {
        try {
            double d = Double.parseDouble(v.strip());
            if (!(d >= 0 && d <= 1)) {
                throw new BadParameterException("fail", "expected a share from 0 to 1, got " + v);
            }
            return d;
        } catch (NumberFormatException e) {
            throw new BadParameterException("fail", "expected a share from 0 to 1 such as 0.1, got '" + v + "'");
        }
    }

    private static Fault parseFault(String v) {
        return switch (v.strip()) {
            case "", "none" -> Fault.NONE;
            case "hang" -> Fault.HANG;
            case "reset" -> Fault.RESET;
            case "close" -> Fault.CLOSE;
            case "drip" -> Fault.DRIP;
            default -> throw new BadParameterException("fault", "expected hang, reset, close or drip, got '" + v + "'");
        };
    }

    private static Duration parseDuration(String name, String v, Duration min, Duration max) {
        Duration d;
        try {
            d = Durations.parse(v);
        } catch (IllegalArgumentException e) {
            throw new BadParameterException(name, e.getMessage());
        }
        if (d.compareTo(min) < 0 || d.compareTo(max) > 0) {
            throw new BadParameterException(name, "expected a duration from " + Durations.format(min) + " to "
                    + Durations.format(max) + ", got " + v);
        }
        return d;
    }
}
