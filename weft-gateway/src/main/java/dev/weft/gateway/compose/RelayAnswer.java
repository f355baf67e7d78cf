package dev.weft.gateway.compose;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.weft.client.CallResult;
import dev.weft.core.Durations;
import dev.weft.gateway.plan.ProxyRoute;
import dev.weft.gateway.plan.Relay;
import dev.weft.server.ServerResponse;


/**
 * The answer of a {@code proxy:} route: the backend's status, end-to-end headers, body and trailers as they came
 * (an error status included: a 404 of the backend stays a 404); when no answer came, or one too large, the gateway's JSON
 * error naming the destination: 504 when the route's deadline passed, else 502.
 */
public final class RelayAnswer {
    /** nginx's status for a request its client gave up on: counted, never sent. */
    public static final int CLIENT_CLOSED = 499;

    private RelayAnswer() {
    }

    public static ServerResponse of(ProxyRoute route, CallResult r, boolean deadlinePassed) {
        boolean answered = r.status() > 0 && (r.ok() || r.failure().isStatus());
        if (answered && !validStatus(r.status())) {
            return invalidStatus(route, r.status(), r.destination() == null ? route.target().toString()
                    : r.destination().key());
        }
        if (answered && r.body().length <= route.maxBody()) {
            return new ServerResponse(r.status(), Relay.endToEnd(r.headers()), r.body(),
                    r.trailers().isEmpty() ? null : Relay.endToEnd(r.trailers()));
        }
        if (!answered && r.failure().reason() == dev.weft.client.Reason.CANCELLED) {
            // the client went away (stream reset, connection closed): nobody reads this answer; 499 keeps it out of
            // the backend's 502s in the metrics and the access log
            return clientClosed(route);
        }
        String reason;
        String message;
        if (answered) {
            reason = "too-large";
            message = "the answer's body is " + r.body().length + " bytes, over the route's max_body of "
                    + route.maxBody();
        } else {
            reason = r.failure().label();
            message = r.failure().message();
        }
        boolean timedOut = deadlinePassed && (answered || r.failure().isTimeout()
                || r.failure().reason() == dev.weft.client.Reason.DEADLINE);
        String destination = r.destination() == null ? route.target().toString() : r.destination().key();
        ObjectNode err = JsonNodeFactory.instance.objectNode();
        err.put("error", timedOut
                ? "the deadline of " + Durations.format(route.timeout()) + " passed before " + destination + " answered"
                : "proxy to " + destination + " failed: " + reason);
        err.put("route", route.id());
        err.put("destination", destination);
        err.put("reason", timedOut ? "deadline" : reason);
        err.put("message", message);
        return json(timedOut ? 504 : 502, err);
    }

    /**
     * A streamed answer's head, its body and trailers to come from {@code pipe}. weft-client checked its fields as the
     * HTTP/1.1 reader checks them (a control character fails the call protocol-error, a 502 before any head).
     */
    public static ServerResponse streamed(ProxyRoute route, dev.weft.gateway.plan.RelayStream pipe) {
        return ServerResponse.streamed(pipe.status(), Relay.endToEnd(pipe.headers()), pipe);
    }

    /** Whether a backend's status may be passed on: 100-599 (RFC 9110 section 15; 600-999 are not HTTP's). */
    public static boolean validStatus(int status) {
        return status >= 100 && status <= 599;
    }

    /**
     * A backend's status outside 100-599, which a client must read as a 5xx (RFC 9110 section 15): a 502 naming the
     * destination, not the status passed on.
     */
    public static ServerResponse invalidStatus(ProxyRoute route, int status, String destination) {
        return json(502, JsonNodeFactory.instance.objectNode()
                .put("error", "proxy to " + destination + " failed: invalid-status")
                .put("route", route.id()).put("destination", destination).put("reason", "invalid-status")
                .put("message", "the backend answered status " + status + ", outside 100-599"));
    }

    /** A request whose client went away before the backend answered: counted with 499, never sent. */
    public static ServerResponse clientClosed(ProxyRoute route) {
        return json(CLIENT_CLOSED, JsonNodeFactory.instance.objectNode()
                .put("error", "the client closed the request before " + route.target() + " answered")
                .put("route", route.id()).put("reason", "cancelled"));
    }

    /** The gateway's JSON error shape: {@code {"error": ..., "route": ...}}. */
    public static ServerResponse json(int status, ObjectNode body) {
        try {
            return ServerResponse.json(status, dev.weft.json.Json.MAPPER.writeValueAsBytes(body));
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }
}
