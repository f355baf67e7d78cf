package dev.weft.gateway.config;

import dev.weft.client.Destination;
import dev.weft.client.DestinationConfig;
import dev.weft.gateway.plan.CallSpec;
import dev.weft.gateway.plan.RoutePlan;

import dev.weft.server.ServerLimits;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * Whether a gateway config fits the process's open-file limit: every inbound connection it may hold
 * ({@code limits.max_connections}, plus the admin listener's) and every pooled connection to each
 * destination its routes call ({@code max_connections} of the destination) take one descriptor each, and
 * the JVM itself needs some ({@link #RESERVE}).
 *
 * <p>The defaults are sized to the limit ({@link #fit}): where the documented defaults (16,000 inbound, a pool of
 * {@code max_in_flight} per destination) would not fit, every bound the config leaves to its default is scaled down
 * by one factor so that they fit in what the bounds it sets leave. So a default config never warns; {@link #check}
 * warns when the bounds the operator set cannot fit.
 */
public final class DescriptorBudget {
    /** Descriptors the JVM, its jars, listening sockets and logs take: a rough, generous figure. */
    public static final int RESERVE = 128;
    /** Connections the admin listener holds at most. */
    public static final int ADMIN_CONNECTIONS = 256;

    private DescriptorBudget() {
    }

    /**
     * Which {@code max_connections} a config file set itself: {@code limits.max_connections} ({@code inbound}),
     * {@code destination_defaults.max_connections}, and the keys of the {@code destinations} that set theirs. The
     * others are defaults, which {@link #fit} may size.
     */
    public record SetBounds(boolean inbound, boolean destinationDefaults, Set<String> destinations) {
        /** Nothing set: every bound a default. */
        public static final SetBounds NONE = new SetBounds(false, false, Set.of());

        public SetBounds {
            destinations = Set.copyOf(destinations);
        }
    }

    /**
     * The pools the routes of {@code config} may hold: a destination key (or, for a URL whose origin is a template, the
     * URL) to the destination config it uses, its entry in {@code destinations} or else the defaults.
     */
    private static Map<String, DestinationConfig> pools(GatewayConfig config) {
        Map<String, DestinationConfig> pools = new LinkedHashMap<>();
        for (RoutePlan r : config.routes()) {
            for (CallSpec c : r.calls()) {
                String key = destination(c.url().source());
                DestinationConfig d = key == null ? null : config.destinations().get(key);
                pools.putIfAbsent(key == null ? c.url().source() : key, d != null ? d : config.destinationDefaults());
            }
        }
        for (dev.weft.gateway.plan.ProxyRoute p : config.proxies()) {
            String key = dev.weft.client.Destination.of(p.target()).key();
            DestinationConfig d = config.destinations().get(key);
            pools.putIfAbsent(key, d != null ? d : config.destinationDefaults());
        }
        return pools;
    }

    /**
     * {@code config} with the bounds it leaves to their defaults sized to {@code limit}: unchanged when the documented
     * defaults fit (or the limit is unknown, or what {@code set} alone holds leaves no room); else
     * {@code limits.max_connections} and the {@code max_connections} of each destination pool not in {@code set},
     * each scaled down by the one factor that makes the whole fit (at least 1 each).
     */
    public static GatewayConfig fit(GatewayConfig config, SetBounds set, long limit) {
        if (limit <= 0) {
            return config;
        }
        long room = limit - RESERVE - (config.admin() != null ? ADMIN_CONNECTIONS : 0);
        long scalable = 0;
        if (set.inbound()) {
            room -= config.limits().maxConnections();
        } else {
            scalable += config.limits().maxConnections();
        }
        Map<String, DestinationConfig> pools = pools(config);
        for (Map.Entry<String, DestinationConfig> p : pools.entrySet()) {
            if (isSet(set, p.getKey())) {
                room -= p.getValue().limits().maxConnections();
            } else {
                scalable += p.getValue().limits().maxConnections();
            }
        }
        if (scalable <= room || room <= 0) {
            return config; // the defaults fit; or the bounds set leave nothing to share, and check() says so
        }
        double factor = (double) room / scalable;
        ServerLimits limits = set.inbound() ? config.limits()
                : config.limits().withMaxConnections(scaled(config.limits().maxConnections(), factor));
        DestinationConfig defaults = config.destinationDefaults();
        if (!set.destinationDefaults() && pools.values().stream().anyMatch(d -> d == config.destinationDefaults())) {
            defaults = sized(defaults, factor);
        }
        Map<String, DestinationConfig> destinations = new LinkedHashMap<>(config.destinations());
        for (Map.Entry<String, DestinationConfig> e : config.destinations().entrySet()) {
            if (pools.containsKey(e.getKey()) && !isSet(set, e.getKey())) {
                destinations.put(e.getKey(), sized(e.getValue(), factor));
            }
        }
        return new GatewayConfig(config.file(), config.listen(), config.executor(), limits, defaults,
                java.util.Collections.unmodifiableMap(destinations), config.routes(), config.tls(), config.admin(),
                config.accessLog(), config.tracing(), config.admission(), config.http2(), config.proxies());
    }

    /** Whether the pool {@code key} has a {@code max_connections} the file set: its own, or the defaults' it uses. */
    private static boolean isSet(SetBounds set, String key) {
        return set.destinations().contains(key) || set.destinationDefaults();
    }

    private static DestinationConfig sized(DestinationConfig d, double factor) {
        return d.withLimits(d.limits().withMaxConnections(scaled(d.limits().maxConnections(), factor)));
    }

    private static int scaled(int value, double factor) {
        return (int) Math.max(1, Math.floor(value * factor));
    }

    /** @return a sentence naming the numbers when {@code config} does not fit {@code limit}; null when it fits or the limit is unknown */
    public static String check(GatewayConfig config, long limit) {
        if (limit <= 0) {
            return null;
        }
        long inbound = config.limits().maxConnections() + (config.admin() != null ? ADMIN_CONNECTIONS : 0);
        Map<String, DestinationConfig> pools = pools(config);
        long outbound = pools.values().stream().mapToLong(d -> d.limits().maxConnections()).sum();
        long need = inbound + outbound + RESERVE;
        if (need <= limit) {
            return null;
        }
        return "the open-file limit is " + limit + " but this config may hold " + need + " descriptors: "
                + inbound + " inbound connections (limits.max_connections"
                + (config.admin() != null ? " + " + ADMIN_CONNECTIONS + " admin" : "") + ") + " + outbound
                + " pooled connections to " + pools.size() + (pools.size() == 1 ? " destination" : " destinations")
                + " (max_connections of each) + "
                + RESERVE + " for the JVM; raise the limit (ulimit -n, LimitNOFILE= in systemd) or lower "
                + "those limits (docs/gateway.md, Deploying)";
    }

    /** The destination key of a call's URL when its scheme, host and port are written out; else null. */
    private static String destination(String url) {
        int scheme = url.indexOf("://");
        if (scheme < 0) {
            return null;
        }
        int end = url.indexOf('/', scheme + 3);
        String origin = end < 0 ? url : url.substring(0, end);
        if (origin.contains("{")) {
            return null;
        }
        try {
            return Destination.of(origin).key();
        } catch (IllegalArgumentException e) {
            return null;
        }
    }
}
