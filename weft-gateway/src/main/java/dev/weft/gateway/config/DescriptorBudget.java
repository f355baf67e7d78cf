package dev.weft.gateway.config;

import dev.weft.client.Destination;
import dev.weft.client.DestinationConfig;
import dev.weft.gateway.plan.CallSpec;
import dev.weft.gateway.plan.RoutePlan;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Whether a gateway config fits the process's open-file limit: every inbound connection it may hold
 * ({@code limits.max_connections}, plus the admin listener's) and every pooled connection to each
 * destination its routes call ({@code max_connections} of the destination) take one descriptor each, and
 * the JVM itself needs some ({@link #RESERVE}).
 */
public final class DescriptorBudget {
    /** Descriptors the JVM, its jars, listening sockets and logs take: a rough, generous figure. */
    public static final int RESERVE = 128;
    /** Connections the admin listener holds at most. */
    public static final int ADMIN_CONNECTIONS = 256;

    private DescriptorBudget() {
    }

    /** @return a sentence naming the numbers when {@code config} does not fit {@code limit}; null when it fits or the limit is unknown */
    public static String check(GatewayConfig config, long limit) {
        if (limit <= 0) {
            return null;
        }
        long inbound = config.limits().maxConnections() + (config.admin() != null ? ADMIN_CONNECTIONS : 0);
        Map<String, Integer> pools = new LinkedHashMap<>();
        for (RoutePlan r : config.routes()) {
            for (CallSpec c : r.calls()) {
                String key = destination(c.url().source());
                DestinationConfig d = key == null ? null : config.destinations().get(key);
                int max = (d != null ? d : config.destinationDefaults()).limits().maxConnections();
                pools.merge(key == null ? c.url().source() : key, max, Math::max);
            }
        }
        long outbound = pools.values().stream().mapToLong(Integer::longValue).sum();
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
