package dev.weft.gateway.config;

import dev.weft.config.ConfigException;
import dev.weft.config.ConfigNode;
import dev.weft.config.Problems;
import dev.weft.server.http2.Http2Limits;

import java.util.Map;
import java.util.Set;

/**
 * Reads the top-level {@code http2:} block (docs/gateway.md, HTTP/2) onto {@link Http2Limits}; a key left out keeps
 * its default, {@code http2: off} (or {@code enabled: false}) serves HTTP/1.1 only.
 */
final class Http2Reader {
    private final Problems problems;

    Http2Reader(Problems problems) {
        this.problems = problems;
    }

    Http2Limits read(ConfigNode node) {
        Http2Limits d = Http2Limits.DEFAULT;
        try {
            if (node.isScalar()) {
                String t = node.text();
                if (t.equals("off") || t.equals("false")) {
                    return Http2Limits.DISABLED;
                }
                if (t.equals("on") || t.equals("true")) {
                    return d;
                }
                problems.add(node, "http2: expected on, off or a map of settings (docs/gateway.md, HTTP/2), got '" + t + "'");
                return d;
            }
            Map<String, ConfigNode> m = node.entries(Set.of("enabled", "upgrade", "h2c_only", "max_concurrent_streams",
                    "max_header_list_size", "header_table_size", "initial_window_size", "connection_window_size",
                    "max_frame_size", "settings_per_second", "pings_per_second", "resets_per_second",
                    "empty_data_per_second", "continuations_per_second", "priorities_per_second", "window_updates_per_second",
                    "unknown_frames_per_second", "write_timeout"), problems);
            return new Http2Limits(
                    m.containsKey("enabled") ? m.get("enabled").bool() : d.enabled(),
                    m.containsKey("upgrade") ? m.get("upgrade").bool() : d.upgrade(),
                    m.containsKey("h2c_only") ? m.get("h2c_only").bool() : d.h2cOnly(),
                    integer(m, "max_concurrent_streams", 1, 1_000_000, d.maxConcurrentStreams()),
                    m.containsKey("max_header_list_size") ? (int) m.get("max_header_list_size").bytes(16 << 20) : d.maxHeaderListSize(),
                    m.containsKey("header_table_size") ? (int) m.get("header_table_size").bytes(1 << 20) : d.headerTableSize(),
                    m.containsKey("initial_window_size") ? (int) m.get("initial_window_size").bytes(Integer.MAX_VALUE) : d.initialWindowSize(),
                    m.containsKey("connection_window_size") ? (int) m.get("connection_window_size").bytes(Integer.MAX_VALUE) : d.connectionWindowSize(),
                    m.containsKey("max_frame_size") ? (int) m.get("max_frame_size").bytes((1 << 24) - 1) : d.maxFrameSize(),
                    integer(m, "settings_per_second", 1, 1_000_000, d.settingsPerSecond()),
                    integer(m, "pings_per_second", 1, 1_000_000, d.pingsPerSecond()),
                    integer(m, "resets_per_second", 1, 1_000_000, d.resetsPerSecond()),
                    integer(m, "empty_data_per_second", 1, 1_000_000, d.emptyDataPerSecond()),
                    integer(m, "continuations_per_second", 1, 1_000_000, d.continuationsPerSecond()),
                    integer(m, "priorities_per_second", 1, 1_000_000, d.prioritiesPerSecond()),
                    integer(m, "window_updates_per_second", 1, 1_000_000, d.windowUpdatesPerSecond()),
                    integer(m, "unknown_frames_per_second", 1, 1_000_000, d.unknownFramesPerSecond()),
                    m.containsKey("write_timeout") ? m.get("write_timeout").duration() : d.writeTimeout());
        } catch (ConfigException e) {
            problems.addAll(e);
            return d;
        } catch (IllegalArgumentException e) {
            problems.add(node, e.getMessage());
            return d;
        }
    }

    private static int integer(Map<String, ConfigNode> m, String key, int min, int max, int fallback)
            throws ConfigException {
        return m.containsKey(key) ? (int) m.get(key).integer(min, max) : fallback;
    }
}
