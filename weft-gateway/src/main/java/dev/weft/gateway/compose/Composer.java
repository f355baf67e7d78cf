package dev.weft.gateway.compose;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.weft.core.Durations;
import dev.weft.core.http.ServerResponse;
import dev.weft.gateway.plan.CallOutcome;
import dev.weft.gateway.plan.CallSpec;
import dev.weft.gateway.plan.RoutePlan;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Builds the answer of a route from its calls' outcomes.
 *
 * <ul>
 *   <li>Body: an object keyed by call name (or its {@code as}); with {@code merge}, the top-level fields
 *       of every object body merged in call order (a later call wins a colliding key; a call with
 *       {@code as} stays under that key). {@code pick} / {@code omit} filter a body's top-level fields.
 *       A body that is not JSON is included as a string.</li>
 *   <li>All required calls done: 200, or the status of the {@code status_from} call (passed through even
 *       when it is an error status). Failed optional calls are left out and named in a {@code weft}
 *       field.</li>
 *   <li>A required call failed: 502 naming the call and its reason, with what did complete; 504 instead
 *       when it failed because the route's deadline passed.</li>
 *   <li>Every answer carries {@code Weft-Completed: true|false} (true when every call succeeded).</li>
 * </ul>
 */
public final class Composer {
    private static final ObjectMapper JSON = dev.weft.core.Json.MAPPER;
    private static final Set<String> DEADLINE_REASONS =
            Set.of("deadline", "timeout-connect", "timeout-headers", "timeout-body");

    private Composer() {
    }

    public static ServerResponse compose(RoutePlan plan, Map<String, CallOutcome> outcomes, boolean deadlinePassed) {
        ObjectNode body = JsonNodeFactory.instance.objectNode();
        ObjectNode failed = JsonNodeFactory.instance.objectNode();
        CallOutcome firstRequiredFailure = null;
        boolean allOk = true;
        for (CallSpec c : plan.calls()) {
            CallOutcome o = outcomes.get(c.name());
            // status_from passes an error status through (404 stays 404), but not a failure of another kind
            // that happened to come with a status (a too-large 200 is still a failed call)
            boolean passThrough = c.name().equals(plan.statusFrom()) && o.status() > 0
                    && (o.ok() || o.reason().equals("status-" + o.status()));
            if (!o.ok()) {
                allOk = false;
                failed.put(c.name(), o.reason());
                if (!c.optional() && !passThrough && firstRequiredFailure == null) {
                    firstRequiredFailure = o;
                }
                if (!passThrough) {
                    continue;
                }
            }
            JsonNode value = filtered(c, o);
            if (plan.merge() && c.as() == null && value.isObject()) {
                body.setAll((ObjectNode) value);
            } else {
                body.set(c.key(), value);
            }
        }
        String completed = Boolean.toString(allOk);
        if (firstRequiredFailure != null) {
            boolean timedOut = deadlinePassed && DEADLINE_REASONS.contains(firstRequiredFailure.reason());
            ObjectNode err = JsonNodeFactory.instance.objectNode();
            err.put("error", timedOut
                    ? "the deadline of " + Durations.format(plan.timeout()) + " passed before call '"
                            + firstRequiredFailure.name() + "' finished"
                    : "call '" + firstRequiredFailure.name() + "' failed: " + firstRequiredFailure.reason());
            err.put("route", plan.id());
            err.put("call", firstRequiredFailure.name());
            err.put("reason", firstRequiredFailure.reason());
            if (firstRequiredFailure.message() != null) {
                err.put("message", firstRequiredFailure.message());
            }
            err.set("failed", failed);
            err.set("completed", body);
            return json(timedOut ? 504 : 502, err, completed, failed);
        }
        if (!failed.isEmpty()) {
            ObjectNode weft = JsonNodeFactory.instance.objectNode();
            weft.put("completed", false);
            weft.set("failed", failed);
            body.set("weft", weft);
        }
        int status = plan.statusFrom() != null ? outcomes.get(plan.statusFrom()).status() : 200;
        return json(status, body, completed, failed);
    }

    private static JsonNode filtered(CallSpec c, CallOutcome o) {
        JsonNode v = o.json();
        if (v == null) {
            return o.body().length == 0 ? JsonNodeFactory.instance.nullNode()
                    : JsonNodeFactory.instance.textNode(new String(o.body(), StandardCharsets.UTF_8));
        }
        if (!v.isObject() || (c.pick().isEmpty() && c.omit().isEmpty())) {
            return v;
        }
        ObjectNode out = JsonNodeFactory.instance.objectNode();
        if (!c.pick().isEmpty()) {
            for (String f : c.pick()) {
                if (v.has(f)) {
                    out.set(f, v.get(f));
                }
            }
        } else {
            out.setAll((ObjectNode) v);
        }
        c.omit().forEach(out::remove);
        return out;
    }

    private static ServerResponse json(int status, JsonNode body, String completed, ObjectNode failed) {
        byte[] bytes;
        try {
            bytes = JSON.writeValueAsBytes(body);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
        ServerResponse r = ServerResponse.json(status, bytes).withHeader("Weft-Completed", completed);
        if (!failed.isEmpty()) {
            List<String> parts = new ArrayList<>();
            failed.properties().forEach(e -> parts.add(e.getKey() + "=" + e.getValue().asText()));
            r = r.withHeader("Weft-Failed", String.join(", ", parts));
        }
        return r;
    }
}
