package dev.weft.dispatch.status;

import dev.weft.json.Json;
import dev.weft.dispatch.engine.Dispatcher;
import dev.weft.dispatch.engine.EndpointStatus;
import dev.weft.server.ServerRequest;
import dev.weft.server.ServerResponse;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Locale;
import java.util.Map;

/**
 * {@code POST /-/endpoints/ID/pause|resume|enable}: an operator's change to an endpoint, written to the state
 * topic (every instance applies it, a restart keeps it). With a token configured ({@code admin_token_env}),
 * a request without {@code Authorization: Bearer TOKEN} gets 401; an unknown endpoint 404; all answers JSON.
 */
final class EndpointAdmin {
    static final String PREFIX = "/-/endpoints/";

    private final java.util.function.Supplier<Dispatcher> dispatcher;
    private final byte[] token;

    EndpointAdmin(java.util.function.Supplier<Dispatcher> dispatcher, String token) {
        this.dispatcher = dispatcher;
        this.token = token == null ? null : ("Bearer " + token).getBytes(StandardCharsets.UTF_8);
    }

    ServerResponse handle(ServerRequest r) throws IOException {
        if (token != null) {
            String auth = r.header("authorization");
            if (auth == null || !MessageDigest.isEqual(token, auth.strip().getBytes(StandardCharsets.UTF_8))) {
                return json(401, Map.of("error", auth == null ? "this needs 'Authorization: Bearer TOKEN' (the token "
                        + "is in the environment variable named by admin_token_env)" : "wrong bearer token"))
                        .withHeader("www-authenticate", "Bearer");
            }
        }
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
