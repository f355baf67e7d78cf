package dev.weft.dispatch.status;

import dev.weft.json.Json;
import dev.weft.server.ServerRequest;
import dev.weft.server.ServerResponse;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Map;
import java.util.Set;

/**
 * The status listener's bearer token ({@code admin_token_env}): with one set, every path but liveness and
 * readiness ({@code GET /-/health}, {@code GET /-/ready}) needs {@code Authorization: Bearer TOKEN} (compared in
 * constant time), as the gateway's admin does: {@code /-/endpoints} shows the endpoints' full URLs (query tokens
 * included), {@code /-/threads} the process's stacks, {@code /-/metrics} the endpoints' names.
 */
final class AdminToken {
    /** Served without a token: an orchestrator's probes. They show no URL and no address. */
    static final Set<String> OPEN = Set.of("/-/health", "/-/ready");

    private final byte[] expected; // null: no token configured

    AdminToken(String token) {
        this.expected = token == null ? null : token.getBytes(StandardCharsets.UTF_8);
    }

    /** Null when {@code r} may go on; otherwise the 401 to answer. */
    ServerResponse refuse(ServerRequest r) throws IOException {
        if (expected == null || ("GET".equals(r.method()) && OPEN.contains(r.path()))) {
            return null;
        }
        String auth = r.header("authorization");
        String a = auth == null ? "" : auth.strip();
        int space = a.indexOf(' ');
        // the scheme is case-insensitive (RFC 7235); the token is compared in constant time
        if (space > 0 && a.substring(0, space).equalsIgnoreCase("Bearer")
                && MessageDigest.isEqual(expected, a.substring(space + 1).strip().getBytes(StandardCharsets.UTF_8))) {
            return null;
        }
        return ServerResponse.json(401, Json.MAPPER.writeValueAsBytes(Map.of("error", auth == null
                ? "this needs 'Authorization: Bearer TOKEN' (the token is in the environment variable named by "
                + "admin_token_env); only GET /-/health and /-/ready are served without it"
                : "wrong bearer token"))).withHeader("www-authenticate", "Bearer");
    }
}
