package dev.weft.gateway.plan;

import dev.weft.client.policy.HedgePolicy;
import dev.weft.client.policy.RetryPolicy;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One call of a route, compiled from the config.
 *
 * @param needs       every call that must be done first: the explicit {@code needs} and every call its
 *                    templates or {@code foreach} read
 * @param foreach     the array to fan out over ({@code orders.body.items}), or null
 * @param concurrency calls in flight at once for {@code foreach}
 * @param timeout     the call's own budget (the route's remaining deadline may be shorter), or null
 * @param hedge       null to use the destination's
 * @param retry       null to use the destination's
 * @param pick        top-level fields of the body kept in the answer (empty: all)
 * @param omit        top-level fields of the body dropped from the answer
 * @param as          the key of this call in the answer (default: its name)
 * @param location    where it was declared, {@code file:line:column}
 */
public record CallSpec(String name, String method, Template url, Map<String, Template> headers, BodyTemplate body,
                       Set<String> needs, Template.Ref foreach, int concurrency, Duration timeout, boolean optional,
                       HedgePolicy hedge, RetryPolicy retry, List<String> pick, List<String> omit, String as,
                       String location) {
    public static final int DEFAULT_CONCURRENCY = 16;
    public static final int MAX_CONCURRENCY = 1000;
    /** foreach over more items than this fails the call (a bound on fan-out per request). */
    public static final int MAX_ITEMS = 1000;

    public String key() {
        return as != null ? as : name;
    }
}
