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
        String invalid = answered ? invalidField(r) : null;
        if (invalid != null) { // the front door would refuse to write it and answer 500: the backend's fault, a 502
            String destination = r.destination() == null ? route.target().toString() : r.destination().key();
            return json(502, JsonNodeFactory.instance.objectNode()
                    .put("error", "proxy to " + destination + " failed: protocol-error").put("route", route.id())
                    .put("destination", destination).put("reason", "protocol-error")
                    .put("message", "the answer has " + invalid + " that cannot be passed on"));
        }
        if (answered && r.body().length <= route.maxBody()) {
            return new ServerResponse(r.status(), Relay.endToEnd(r.headers()), r.body(),
                    r.trailers().isEmpty() ? null : Relay.endToEnd(r.trailers()));
        }
        if (!answered && r.failure().reason() == dev.weft.client.Reason.CANCELLED) {
            // the client went away (stream reset, connection closed): nobody reads this answer; 499 keeps it out of
            // the backend's 502s in the metrics and the access log
            return json(CLIENT_CLOSED, JsonNodeFactory.instance.objectNode()
                    .put("error", "the client closed the request before " + route.target() + " answered")
                    .put("route", route.id()).put("reason", "cancelled"));
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
     * The first header or trailer field of the backend's answer that the front door would not write (a name that is
     * not a token, a value with a control character: HTTP/2 lets through more than HTTP/1.1 takes), or null.
     */
    private static String invalidField(CallResult r) {
        for (dev.weft.http.Headers fields : new dev.weft.http.Headers[] {r.headers(), r.trailers()}) {
            for (java.util.Map.Entry<String, String> f : fields) {
                if (!dev.weft.http.Http1.isToken(f.getKey()) || f.getValue() == null
                        || !dev.weft.http.Http1.isFieldValue(f.getValue())) {
                    return (fields == r.headers() ? "a header" : "a trailer") + " field '"
                            + dev.weft.http.Http1.printable(f.getKey()) + "'";
                }
            }
        }
        return null;
    }

    /** A streamed answer's head, its body and trailers to come from {@code pipe}; a head the door would not write: 502. */
    public static ServerResponse streamed(ProxyRoute route, dev.weft.gateway.plan.RelayStream pipe) {
        dev.weft.http.Headers headers = Relay.endToEnd(pipe.headers());
        for (java.util.Map.Entry<String, String> f : headers) {
            if (!dev.weft.http.Http1.isToken(f.getKey()) || f.getValue() == null
                    || !dev.weft.http.Http1.isFieldValue(f.getValue())) {
                pipe.cancel();
                return json(502, JsonNodeFactory.instance.objectNode()
                        .put("error", "proxy to " + route.target() + " failed: protocol-error").put("route", route.id())
                        .put("reason", "protocol-error").put("message", "the answer has a header field '"
                                + dev.weft.http.Http1.printable(f.getKey()) + "' that cannot be passed on"));
            }
        }
        return ServerResponse.streamed(pipe.status(), headers, pipe);
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
