package dev.weft.gateway.observe;

import dev.weft.gateway.plan.CallOutcome;

import java.util.Map;

/** What one request did, filled in as it is served and read by the access log. */
public final class Observed {
    public final Tracer.RequestTrace trace;
    /** The route that served it; null when none matched (404, 405, admin). */
    public String route;
    /** Every call of the route, by name; empty when no route ran. */
    public Map<String, CallOutcome> outcomes = Map.of();

    public Observed(Tracer.RequestTrace trace) {
        this.trace = trace;
    }
}
