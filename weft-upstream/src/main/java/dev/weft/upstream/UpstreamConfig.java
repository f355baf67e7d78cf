package dev.weft.upstream;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.weft.core.HostPort;
import dev.weft.config.ConfigException;
import dev.weft.config.ConfigNode;
import dev.weft.config.Problems;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * How a simulator runs: where it listens, what each path does by default, and its limits.
 *
 * <pre>
 * listen: 127.0.0.1:9001                  # or a list; --listen overrides
 * defaults: { latency: 10ms }             # every path
 * paths:
 *   /b:        { latency: 100ms }         # exactly /b
 *   /users/*:  { latency: "uniform:50ms..150ms", body: { id: 7, name: Ann } }   # /users/ and below
 * limits: { max_connections: 16000, idle_timeout: 60s }
 * </pre>
 * Path settings take the names of the query parameters (see {@link Behavior}) plus {@code body}, a
 * fixed JSON body. The longest matching path wins; query parameters override it.
 *
 * @param maxConnections connections held at once; more are closed at accept (default 16,000)
 * @param idleTimeout    a keep-alive connection idle this long is closed (default 60s)
 */
public record UpstreamConfig(List<InetSocketAddress> listen, Behavior defaults, List<PathRule> paths, int maxConnections,
                        Duration idleTimeout) {

    public static final int DEFAULT_MAX_CONNECTIONS = 16_000;
    public static final Duration DEFAULT_IDLE_TIMEOUT = Duration.ofSeconds(60);
    /** Request line plus headers larger than this are answered 431. */
    public static final int MAX_HEADER_BYTES = 64 * 1024;

    /** Settings for the paths equal to {@code path}, or starting with it when {@code prefix}. */
    public record PathRule(String path, boolean prefix, Behavior behavior) {
        boolean matches(String p) {
            return prefix ? p.startsWith(path) : p.equals(path);
        }
    }

    public UpstreamConfig {
        listen = List.copyOf(listen);
        paths = paths.stream().sorted(Comparator.comparingInt((PathRule r) -> r.path().length()).reversed()
                .thenComparing(r -> r.prefix() ? 1 : 0)).toList();
    }

    /** Listens on 127.0.0.1 on a free port, with no path defaults. */
    public static UpstreamConfig local() {
        return new UpstreamConfig(List.of(new InetSocketAddress("127.0.0.1", 0)), Behavior.DEFAULT, List.of(),
                DEFAULT_MAX_CONNECTIONS, DEFAULT_IDLE_TIMEOUT);
    }

    public UpstreamConfig withListen(List<InetSocketAddress> addresses) {
        return new UpstreamConfig(addresses, defaults, paths, maxConnections, idleTimeout);
    }

    /** The behaviour for a path before query parameters. */
    public Behavior behaviorFor(String path) {
        for (PathRule r : paths) {
            if (r.matches(path)) {
                return r.behavior();
            }
        }
        return defaults;
    }

    /** Reads a config file; every problem is reported with file:line:column. */
    public static UpstreamConfig load(Path file) throws ConfigException {
        ConfigNode root = ConfigNode.load(file);
        Problems problems = new Problems();
        List<InetSocketAddress> listen = List.of(new InetSocketAddress("127.0.0.1", 9001));
        Behavior defaults = Behavior.DEFAULT;
        List<PathRule> paths = new ArrayList<>();
        int maxConnections = DEFAULT_MAX_CONNECTIONS;
        Duration idle = DEFAULT_IDLE_TIMEOUT;
        Map<String, ConfigNode> top = root.entries(Set.of("listen", "defaults", "paths", "limits"), problems);
        if (top.containsKey("listen")) {
            List<InetSocketAddress> l = new ArrayList<>();
            for (ConfigNode n : top.get("listen").items()) {
                try {
                    l.addAll(HostPort.parseList(n.text()));
                } catch (IllegalArgumentException e) {
                    problems.add(n, e.getMessage());
                }
            }
            listen = l;
        }
        if (top.containsKey("defaults")) {
            defaults = behavior(top.get("defaults"), Behavior.DEFAULT, problems);
        }
        if (top.containsKey("paths")) {
            for (Map.Entry<String, ConfigNode> e : top.get("paths").entries().entrySet()) {
                String p = e.getKey();
                if (!p.startsWith("/")) {
                    problems.add(e.getValue(), "path '" + p + "' must start with /");
                    continue;
                }
                boolean prefix = p.endsWith("*");
                paths.add(new PathRule(prefix ? p.substring(0, p.length() - 1) : p, prefix,
                        behavior(e.getValue(), defaults, problems)));
            }
        }
        if (top.containsKey("limits")) {
            Map<String, ConfigNode> lim = top.get("limits").entries(Set.of("max_connections", "idle_timeout"), problems);
            try {
                if (lim.containsKey("max_connections")) {
                    maxConnections = (int) lim.get("max_connections").integer(1, 1_000_000);
                }
                if (lim.containsKey("idle_timeout")) {
                    idle = lim.get("idle_timeout").duration();
                }
            } catch (ConfigException e) {
                problems.addAll(e);
            }
        }
        problems.throwIfAny();
        return new UpstreamConfig(listen, defaults, paths, maxConnections, idle);
    }

    private static final ObjectMapper JSON = dev.weft.json.Json.MAPPER;

    private static Behavior behavior(ConfigNode node, Behavior base, Problems problems) throws ConfigException {
        Set<String> allowed = new java.util.HashSet<>(Behavior.PARAMETERS);
        allowed.add("body");
        Behavior b = base;
        for (Map.Entry<String, ConfigNode> e : node.entries(allowed, problems).entrySet()) {
            ConfigNode v = e.getValue();
            try {
                if (e.getKey().equals("body")) {
                    b = b.withFixedBody(JSON.writeValueAsBytes(v.toPlain()));
                } else {
                    Map<String, String> one = new LinkedHashMap<>();
                    one.put(e.getKey(), v.text());
                    b = b.with(one);
                }
            } catch (BadParameterException ex) {
                problems.add(v, ex.getMessage().replaceFirst("^bad parameter", "bad value of"));
            } catch (ConfigException ex) {
                problems.addAll(ex);
            } catch (JsonProcessingException ex) {
                problems.add(v, "cannot turn this body into JSON: " + ex.getOriginalMessage());
            }
        }
        return b;
    }
}
