package dev.weft.observe;

import dev.weft.config.ConfigException;
import dev.weft.config.ConfigNode;
import dev.weft.config.Problems;

import java.net.URI;
import java.util.Map;
import java.util.Set;

/**
 * Readers of the observability keys that gateway and dispatch configs share: {@code access_log} and
 * {@code tracing}. Problems are added with {@code file:line:column}; a bad value falls back to "off".
 */
public final class ObserveReaders {
    /** {@code tracing:} as read: OTLP/HTTP base URL (null: propagation only) and the ratio of new traces sampled. */
    public record Tracing(URI otlp, double sample) {
        /** The default: propagate trace context, export nothing. */
        public static final Tracing OFF = new Tracing(null, DEFAULT_SAMPLE);
    }

    /** Share of new traces recorded when {@code tracing.sample} is not given (the OpenTelemetry SDK's default). */
    public static final double DEFAULT_SAMPLE = 1.0;

    private ObserveReaders() {
    }

    /** {@code access_log: stdout | stderr | <path> | off}; null for off. */
    public static LineSink.Target accessLog(ConfigNode n, Problems problems) {
        try {
            String t = n.text().strip();
            if (t.isEmpty()) {
                problems.add(n, "access_log: expected stdout, stderr, off or a file path");
                return null;
            }
            return LineSink.Target.parse(t);
        } catch (ConfigException e) {
            problems.add(n, "access_log: expected stdout, stderr, off or a file path");
            return null;
        }
    }

    /** {@code tracing: {otlp: http://host:4318, sample: 0.1}}. */
    public static Tracing tracing(ConfigNode n, Problems problems) {
        try {
            Map<String, ConfigNode> m = n.entries(Set.of("otlp", "sample"), problems);
            URI otlp = null;
            if (m.containsKey("otlp")) {
                ConfigNode o = m.get("otlp");
                try {
                    otlp = URI.create(o.text().strip().replaceAll("/+$", ""));
                    if (!("http".equals(otlp.getScheme()) || "https".equals(otlp.getScheme()))
                            || otlp.getHost() == null) {
                        problems.add(o, "tracing.otlp: expected the OTLP/HTTP receiver's base URL, such as "
                                + "http://127.0.0.1:4318 (spans go to <url>/v1/traces)");
                        otlp = null;
                    }
                } catch (IllegalArgumentException e) {
                    problems.add(o, "tracing.otlp: not a URL: " + e.getMessage());
                }
            }
            double sample = DEFAULT_SAMPLE;
            if (m.containsKey("sample")) {
                try {
                    sample = m.get("sample").number(0, 1);
                } catch (ConfigException e) {
                    problems.addAll(e);
                }
            }
            return new Tracing(otlp, sample);
        } catch (ConfigException e) {
            problems.addAll(e);
            return Tracing.OFF;
        }
    }
}
