package dev.weft.dispatch.status;

import dev.weft.json.Json;
import dev.weft.dispatch.engine.Dispatcher;
import dev.weft.dispatch.engine.EndpointStatus;
import dev.weft.server.ServerRequest;
import dev.weft.server.ServerResponse;

import java.io.IOException;
import java.util.Locale;
import java.util.Map;

/**
 * {@code POST /-/endpoints/ID/pause|resume|enable}: an operator's change to an endpoint, written to the state
 * topic (every instance applies it, a restart keeps it). The token ({@code admin_token_env}) is checked before
 * ({@link AdminToken}); an unknown endpoint gets 404; all answers JSON.
 */
final class EndpointAdmin {
    static final String PREFIX = "/-/endpoints/";

    private final java.util.function.Supplier<Dispatcher> dispatcher;

    EndpointAdmin(java.util.function.Supplier<Dispatcher> dispatcher) {
        this.dispatcher = dispatcher;
    }

    ServerResponse handle(ServerRequest r) throws IOException {
        String rest = r.path().substring(PREFIX.length());
        int slash = rest.indexOf('/');
        Dispatcher.Action action = null;
        if (slash > 0) {
            try {
                action = Dispatcher.Action.valueOf(rest.substring(slash + 1).toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                action = null;
            }
        }
        if (action == null) {
            return json(404, Map.of("error", "unknown path " + r.path() + "; POST /-/endpoints/ID/pause, "
                    + "/-/endpoints/ID/resume or /-/endpoints/ID/enable"));
        }
        String id = rest.substring(0, slash);
        EndpointStatus s;
        try {
            s = dispatcher.get().control(id, action);
        } catch (IOException e) {
            return json(503, Map.of("error", "the change was not written to the state topic, nothing changed: "
                    + e.getMessage()));
        }
        if (s == null) {
            return json(404, Map.of("error", "no endpoint '" + id + "' in the config; GET /-/endpoints lists them"));
        }
        return json(200, s);
    }

    private static ServerResponse json(int status, Object body) throws IOException {
        return ServerResponse.json(status, Json.MAPPER.writeValueAsBytes(body));
    }
}
