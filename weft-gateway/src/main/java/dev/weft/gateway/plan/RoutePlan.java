package dev.weft.gateway.plan;

import java.time.Duration;
import java.util.List;

/**
 * A route: method, path and its calls in an order where every call comes after the ones it needs.
 *
 * @param timeout        the deadline of the whole request
 * @param forwardHeaders request headers passed on to every call (lower case)
 * @param statusFrom     the call whose status becomes the answer's, or null for 200
 * @param merge          merge the top-level fields of every body into one object instead of keying by call
 */
public record RoutePlan(String method, PathPattern path, Duration timeout, List<String> forwardHeaders,
                        List<CallSpec> calls, String statusFrom, boolean merge, String location) {
    /** {@code GET /orders/{id}}: the route's name in metrics and answers. */
    public String id() {
        return method + " " + path;
    }
}
