package dev.weft.gateway.config;

import dev.weft.config.ConfigException;
import dev.weft.config.ConfigNode;
import dev.weft.config.Problems;
import dev.weft.client.DestinationConfig;
import dev.weft.client.DestinationLimits;
import dev.weft.client.TlsOptions;
import dev.weft.core.tls.Pem;
import dev.weft.client.policy.BreakerPolicy;
import dev.weft.client.policy.HedgePolicy;
import dev.weft.client.policy.RetryPolicy;
import dev.weft.server.ServerLimits;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;

/**
 * Readers of the core types from YAML, shared by every config that declares them (the gateway's today):
 * destinations and their policies, and an inbound server's limits. A problem is recorded in the
 * {@link Problems} given (so that every problem of a file is reported at once, each with file:line:column)
 * and the base value is kept.
 */
public final class CoreReaders {
    private final Problems problems;

    public CoreReaders(Problems problems) {
        this.problems = problems;
    }

    /**
     * One destination's keys ({@code max_in_flight}, {@code max_wait}, {@code max_connections},
     * {@code max_connecting}, {@code max_streams}, {@code min_idle}, {@code connect_timeout}, {@code max_body},
     * {@code retry}, {@code hedge}, {@code breaker}, {@code ca}, {@code insecure_skip_verify}, {@code http2}) over
     * {@code base}.
     */
    public DestinationConfig destination(ConfigNode node, DestinationConfig base) {
        return destination(node, base, true);
    }

    /**
     * The keys every destination gets by default: as {@link #destination}, but {@code insecure_skip_verify}
     * is refused there (it may only switch off the checks of one named destination).
     */
    public DestinationConfig destinationDefaults(ConfigNode node, DestinationConfig base) {
        return destination(node, base, false);
    }

    private DestinationConfig destination(ConfigNode node, DestinationConfig base, boolean one) {
        Map<String, ConfigNode> d = entries(node, Set.of("max_in_flight", "max_wait", "max_connections",
                "max_connecting", "max_streams", "min_idle", "connect_timeout", "max_body", "retry", "hedge", "breaker",
                "ca", "insecure_skip_verify", "http2"));
        // Each key on its own: a bad one is reported and the others are still read (weft check names every problem).
        DestinationLimits[] l = {base.limits()};
        limit(d, "max_in_flight", n -> l[0] = l[0].withMaxInFlight((int) n.integer(1, 100_000)));
        limit(d, "max_connections", n -> l[0] = l[0].withMaxConnections((int) n.integer(1, 100_000)));
        limit(d, "max_wait", n -> l[0] = l[0].withMaxWait(n.duration()));
        limit(d, "connect_timeout", n -> l[0] = l[0].withConnectTimeout(positive(n, l[0].connectTimeout())));
        limit(d, "max_body", n -> l[0] = l[0].withMaxBodyBytes(n.bytes(Integer.MAX_VALUE - 16)));
        limit(d, "max_connecting", n -> l[0] = l[0].withMaxConnecting(
                (int) n.integer(1, DestinationLimits.MAX_MAX_CONNECTING)));
        limit(d, "max_streams", n -> l[0] = l[0].withMaxStreams((int) n.integer(1, DestinationLimits.MAX_MAX_STREAMS)));
        limit(d, "min_idle", n -> {
            int minIdle = (int) n.integer(0, 100_000);
            if (minIdle > l[0].maxConnections()) {
                problems.add(n, "min_idle (" + minIdle + ") is more than max_connections (" + l[0].maxConnections()
                        + ")");
            } else {
                l[0] = l[0].withMinIdle(minIdle);
            }
        });
        DestinationConfig out = base.withLimits(l[0]);
        out = out.withTls(tls(d, base.tls(), one));
        if (d.containsKey("retry")) {
            out = out.withRetry(retry(d.get("retry"), base.retry()));
        }
        if (d.containsKey("hedge")) {
            out = out.withHedge(hedge(d.get("hedge")));
        }
        if (d.containsKey("breaker")) {
            out = out.withBreaker(breaker(d.get("breaker"), base.breaker()));
        }
        return out;
    }

    /** What reads one limit key. */
    private interface LimitReader {
        void read(ConfigNode n) throws ConfigException;
    }

    /** Reads {@code key} when present; its problem is recorded with its place, and the next keys are still read. */
    private void limit(Map<String, ConfigNode> d, String key, LimitReader reader) {
        ConfigNode n = d.get(key);
        if (n == null) {
            return;
        }
        try {
            reader.read(n);
        } catch (ConfigException e) {
            problems.addAll(e);
        }
    }

    /** A scalar's text for an error message, or its kind when it is not one. */
    private static String printable(ConfigNode n) {
        try {
            return n.text();
        } catch (ConfigException e) {
            return "(not a value)";
        }
    }

    /**
     * {@code ca} (a PEM of extra roots, relative to the config file), {@code insecure_skip_verify} and
     * {@code http2} ({@code true}, {@code false} or {@code h2c}).
     */
    private TlsOptions tls(Map<String, ConfigNode> d, TlsOptions base, boolean one) {
        Path ca = base.ca();
        boolean insecure = base.insecureSkipVerify();
        boolean http2 = base.http2();
        boolean h2c = base.h2c();
        if (d.containsKey("http2")) {
            ConfigNode n = d.get("http2");
            try {
                if (n.text().strip().equals("h2c")) {
                    http2 = true;
                    h2c = true;
                } else {
                    http2 = n.bool();
                    h2c = false;
                }
            } catch (ConfigException e) {
                problems.add(n, "http2: expected true, false or h2c (HTTP/2 with prior knowledge on http://), got '"
                        + printable(n) + "'");
            }
        }
        if (d.containsKey("ca")) {
            ConfigNode n = d.get("ca");
            try {
                Path p = Path.of(n.text());
                Path dir = Path.of(n.source()).toAbsolutePath().getParent();
                if (!p.isAbsolute() && dir != null && Files.isDirectory(dir)) {
                    p = dir.resolve(p);
                }
                Pem.certificates(p); // checked now, so that a bad file is a config error with its place
                ca = p;
            } catch (ConfigException e) {
                problems.addAll(e);
            } catch (IOException | java.nio.file.InvalidPathException e) {
                problems.add(n, "ca: " + (e instanceof java.nio.file.NoSuchFileException ? "no such file " : "")
                        + e.getMessage());
            }
        }
        if (d.containsKey("insecure_skip_verify")) {
            ConfigNode n = d.get("insecure_skip_verify");
            try {
                boolean v = n.bool();
                if (v && !one) {
                    problems.add(n, "insecure_skip_verify is allowed only on one destination under 'destinations:',"
                            + " not for every destination");
                } else {
                    insecure = v;
                }
            } catch (ConfigException e) {
                problems.addAll(e);
            }
        }
        return new TlsOptions(ca, insecure, http2, h2c);
    }

    /** {@code attempts}, {@code backoff}, {@code max_backoff}, {@code statuses}, {@code non_idempotent} over {@code base}. */
    public RetryPolicy retry(ConfigNode node, RetryPolicy base) {
        Map<String, ConfigNode> r = entries(node, Set.of("attempts", "backoff", "max_backoff", "statuses",
                "non_idempotent"));
        try {
            int attempts = r.containsKey("attempts") ? (int) r.get("attempts").integer(1, RetryPolicy.MAX_ATTEMPTS)
                    : base.attempts();
            Duration backoff = r.containsKey("backoff") ? r.get("backoff").duration() : base.backoff();
            Duration max = r.containsKey("max_backoff") ? r.get("max_backoff").duration() : base.maxBackoff();
            Set<Integer> statuses = base.retryStatuses();
            if (r.containsKey("statuses")) {
                Set<Integer> s = new LinkedHashSet<>();
                for (ConfigNode n : r.get("statuses").items()) {
                    s.add((int) n.integer(100, 599));
                }
                statuses = s;
            }
            boolean nonIdem = r.containsKey("non_idempotent") ? r.get("non_idempotent").bool() : base.nonIdempotent();
            return new RetryPolicy(attempts, backoff, max, statuses, nonIdem);
        } catch (ConfigException e) {
            problems.addAll(e);
            return base;
        }
    }

    /** {@code 100ms}, or {@code delay}, {@code copies}, {@code non_idempotent}; null when it is wrong (reported). */
    public HedgePolicy hedge(ConfigNode node) {
        try {
            if (node.isScalar()) {
                return HedgePolicy.after(node.duration());
            }
            Map<String, ConfigNode> h = entries(node, Set.of("delay", "copies", "non_idempotent"));
            if (!h.containsKey("delay")) {
                problems.add(node, "hedge needs a delay, such as 'hedge: 100ms' or 'hedge: { delay: 100ms, copies: 2 }'");
                return null;
            }
            return new HedgePolicy(h.get("delay").duration(),
                    h.containsKey("copies") ? (int) h.get("copies").integer(2, HedgePolicy.MAX_COPIES) : 2,
                    h.containsKey("non_idempotent") && h.get("non_idempotent").bool());
        } catch (ConfigException e) {
            problems.addAll(e);
            return null;
        }
    }

    /** The breaker's keys over {@code base}. */
    public BreakerPolicy breaker(ConfigNode node, BreakerPolicy base) {
        Map<String, ConfigNode> b = entries(node, Set.of("enabled", "consecutive_failures", "failure_ratio",
                "window", "min_calls", "open_for", "probes"));
        try {
            return new BreakerPolicy(
                    b.containsKey("enabled") ? b.get("enabled").bool() : base.enabled(),
                    b.containsKey("consecutive_failures") ? (int) b.get("consecutive_failures").integer(0, 1_000_000)
                            : base.consecutiveFailures(),
                    b.containsKey("failure_ratio") ? b.get("failure_ratio").number(0.01, 1) : base.failureRatio(),
                    b.containsKey("window") ? positive(b.get("window"), base.window()) : base.window(),
                    b.containsKey("min_calls") ? (int) b.get("min_calls").integer(1, 1_000_000) : base.minCalls(),
                    b.containsKey("open_for") ? positive(b.get("open_for"), base.openFor()) : base.openFor(),
                    b.containsKey("probes") ? (int) b.get("probes").integer(1, 1000) : base.probes());
        } catch (ConfigException e) {
            problems.addAll(e);
            return base;
        } catch (IllegalArgumentException e) {
            problems.add(node, e.getMessage());
            return base;
        }
    }

    /** An inbound server's {@code limits:} over {@link ServerLimits#DEFAULT}. */
    public ServerLimits serverLimits(ConfigNode node) {
        Map<String, ConfigNode> l = entries(node, Set.of("max_concurrent", "max_wait", "max_header_bytes",
                "max_body_bytes", "idle_timeout", "max_connections", "drain_timeout", "header_timeout", "body_timeout",
                "min_body_rate"));
        ServerLimits d = ServerLimits.DEFAULT;
        try {
            ServerLimits.Builder b = d.toBuilder();
            if (l.containsKey("max_concurrent")) {
                b.maxConcurrent((int) l.get("max_concurrent").integer(1, 1_000_000));
            }
            if (l.containsKey("max_wait")) {
                b.maxWait(l.get("max_wait").duration());
            }
            if (l.containsKey("max_header_bytes")) {
                b.maxHeadBytes((int) l.get("max_header_bytes").bytes(1 << 20));
            }
            if (l.containsKey("max_body_bytes")) {
                b.maxBodyBytes(l.get("max_body_bytes").bytes(1L << 30));
            }
            if (l.containsKey("idle_timeout")) {
                b.idleTimeout(positive(l.get("idle_timeout"), d.idleTimeout()));
            }
            if (l.containsKey("max_connections")) {
                b.maxConnections((int) l.get("max_connections").integer(1, 1_000_000));
            }
            if (l.containsKey("drain_timeout")) {
                b.drainTimeout(l.get("drain_timeout").duration());
            }
            if (l.containsKey("header_timeout")) {
                b.headerTimeout(positive(l.get("header_timeout"), d.headerTimeout()));
            }
            if (l.containsKey("body_timeout")) {
                b.bodyTimeout(positive(l.get("body_timeout"), d.bodyTimeout()));
            }
            if (l.containsKey("min_body_rate")) {
                b.minBodyRate(l.get("min_body_rate").bytes(1L << 30)); // bytes a second: 1KiB, 0 for none
            }
            return b.build();
        } catch (ConfigException e) {
            problems.addAll(e);
            return d;
        } catch (IllegalArgumentException e) {
            problems.add(node, e.getMessage());
            return d;
        }
    }

    private Map<String, ConfigNode> entries(ConfigNode n, Set<String> allowed) {
        try {
            return n.entries(allowed, problems);
        } catch (ConfigException e) {
            problems.addAll(e);
            return Map.of();
        }
    }

    private Duration positive(ConfigNode n, Duration fallback) {
        Duration d;
        try {
            d = n.duration();
        } catch (ConfigException e) {
            problems.addAll(e);
            return fallback;
        }
        if (d.isZero() || d.isNegative()) {
            problems.add(n, "expected a duration above zero, such as 500ms");
            return fallback;
        }
        return d;
    }
}
