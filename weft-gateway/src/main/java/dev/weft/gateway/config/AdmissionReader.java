package dev.weft.gateway.config;

import dev.weft.config.ConfigException;
import dev.weft.config.ConfigNode;
import dev.weft.config.Problems;
import dev.weft.server.admission.AdmissionPolicy;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/** Reads the gateway's {@code admission:} section over {@link AdmissionPolicy#DEFAULT} (see docs/gateway.md). */
final class AdmissionReader {
    private final Problems problems;

    AdmissionReader(Problems problems) {
        this.problems = problems;
    }

    /** @param routes the ids of every route, {@code GET /orders/{id}} and {@code * /b/} (a proxy route) */
    AdmissionPolicy read(ConfigNode node, java.util.Collection<String> routes) {
        AdmissionPolicy d = AdmissionPolicy.DEFAULT;
        try {
            Map<String, ConfigNode> a = node.entries(Set.of("enabled", "initial_limit", "min_limit", "queue",
                    "max_wait", "lag_target", "cpu_busy", "queueing", "routes", "door_nice", "door_fallback"), problems);
            boolean enabled = a.containsKey("enabled") ? a.get("enabled").bool() : d.enabled();
            int initial = a.containsKey("initial_limit") ? (int) a.get("initial_limit").integer(1, 1_000_000) : d.initialLimit();
            int min = a.containsKey("min_limit") ? (int) a.get("min_limit").integer(1, 1_000_000) : d.minLimit();
            int queue = a.containsKey("queue") ? (int) a.get("queue").integer(0, 100_000) : d.queue();
            Duration maxWait = a.containsKey("max_wait") ? a.get("max_wait").duration() : d.maxWait();
            Duration lagTarget = a.containsKey("lag_target") ? a.get("lag_target").duration() : d.lagTarget();
            double cpuBusy = a.containsKey("cpu_busy") ? a.get("cpu_busy").number(0, 1) : d.cpuBusy();
            double queueing = a.containsKey("queueing") ? queueing(a.get("queueing")) : d.queueing();
            int doorNice = a.containsKey("door_nice") ? (int) a.get("door_nice").integer(-20, 0) : d.doorNice();
            AdmissionPolicy.DoorFallback fallback = a.containsKey("door_fallback") ? fallback(a.get("door_fallback"))
                    : d.doorFallback();
            Map<String, Integer> perRoute = new LinkedHashMap<>();
            if (a.containsKey("routes")) {
                for (Map.Entry<String, ConfigNode> e : a.get("routes").entries().entrySet()) {
                    if (!routes.contains(e.getKey())) {
                        problems.add(e.getValue(), "admission.routes: no route '" + e.getKey()
                                + "' (name a route as METHOD /path, such as 'GET /orders/{id}', or a proxy route as '* /prefix/')");
                        continue;
                    }
                    perRoute.put(e.getKey(), (int) e.getValue().integer(1, 1_000_000));
                }
            }
            try {
                return new AdmissionPolicy(enabled, initial, min, queue, maxWait, lagTarget, cpuBusy, perRoute,
                        doorNice, fallback, queueing);
            } catch (IllegalArgumentException e) {
                problems.add(node, e.getMessage());
            }
        } catch (ConfigException e) {
            problems.addAll(e);
        }
        return d;
    }

    /** {@code queueing}: 0 (off) or a ratio of 1 to 100. */
    private static double queueing(ConfigNode n) throws ConfigException {
        double q = n.number(0, 100);
        if (q > 0 && q < 1) {
            throw n.error("admission.queueing is 0 (off) or a ratio of 1 to 100 (a route's mean latency over the last second "
                    + "against its usual one), got " + n.text());
        }
        return q;
    }

    /** {@code door_fallback}: what the door does when it may not raise its thread. */
    private static AdmissionPolicy.DoorFallback fallback(ConfigNode n) throws ConfigException {
        return switch (n.text()) {
            case "auto" -> AdmissionPolicy.DoorFallback.AUTO;
            case "lower_others" -> AdmissionPolicy.DoorFallback.LOWER_OTHERS;
            case "none" -> AdmissionPolicy.DoorFallback.NONE;
            default -> throw n.error("admission.door_fallback is auto (the default: lower the gateway's other threads "
                    + "where it is alone in its CPU cgroup), lower_others (always) or none, got '" + n.text() + "'");
        };
    }
}
