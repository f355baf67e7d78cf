package dev.weft.gateway.plan;

import dev.weft.client.policy.HedgePolicy;
import dev.weft.client.policy.RetryPolicy;

import java.net.URI;
import java.time.Duration;

/**
 * A {@code proxy:} route: every request whose path starts with {@code prefix} (any method) is relayed to
 * {@code target} with the rest of its path and its query; the backend's answer is passed back.
 *
 * @param prefix     the path prefix, starting with {@code /}; it matches whole segments ({@code /b} matches
 *                   {@code /b} and {@code /b/x}, not {@code /bx})
 * @param target     absolute http(s) URL without query; the rest of the path is appended to its path
 * @param timeout    the request's deadline, which is also the backend call's budget
 * @param maxBody    the largest request body relayed (else 413) and the largest answer body (else 502 too-large)
 * @param retry      null to use the destination's (POST and PATCH are retried only with non_idempotent)
 * @param hedge      null to use the destination's
 * @param xForwarded add X-Forwarded-For (appended), X-Forwarded-Proto and X-Forwarded-Host (set)
 * @param via        the pseudonym written in {@code Via: 1.1 NAME} (appended), or null for no Via
 * @param location   where it was declared, {@code file:line:column}
 * @param streamAnswers whether every answer larger than {@link Relay#HELD_BODY_BYTES} or of no declared length
 *                   streams as it comes (a download), within {@code maxBody}; the route's calls are then neither
 *                   retried nor hedged
 */
public record ProxyRoute(String prefix, URI target, Duration timeout, long maxBody, RetryPolicy retry,
                         HedgePolicy hedge, boolean xForwarded, String via, String location, boolean streamAnswers) {
    /** {@code max_body} unless the route sets one: 1 MiB, the server's default request body bound. */
    public static final long DEFAULT_MAX_BODY = 1024 * 1024;

    /** {@code * /b/}: the route's name in metrics, answers and the admission (any method, this prefix). */
    public String id() {
        return "* " + prefix;
    }

    /** Whether {@code path} is under this route's prefix. */
    public boolean matches(String path) {
        if (!path.startsWith(prefix)) {
            return false;
        }
        return prefix.endsWith("/") || path.length() == prefix.length() || path.charAt(prefix.length()) == '/';
    }

    /**
     * The backend URL for a request with this (raw, still percent-encoded) path and query: the target's path
     * followed by what comes after the prefix, then the request's query.
     */
    public URI backendUri(String rawPath, String rawQuery) {
        String rest = rawPath.substring(prefix.length());
        String base = target.getRawPath() == null || target.getRawPath().isEmpty() ? "/" : target.getRawPath();
        String path;
        if (rest.isEmpty()) {
            path = base;
        } else if (base.endsWith("/")) {
            path = base + (rest.startsWith("/") ? rest.substring(1) : rest);
        } else {
            path = base + (rest.startsWith("/") ? rest : "/" + rest);
        }
        String q = rawQuery == null || rawQuery.isEmpty() ? "" : "?" + queryForUri(rawQuery);
        return URI.create(target.getScheme() + "://" + target.getRawAuthority() + path + q);
    }

    /**
     * The query with the characters a URI does not allow in one ({@code " < > \ ^ ` { | }}, which clients send
     * unencoded: {@code q={"a":1}}, {@code a|b}) percent-encoded, the rest as sent: the same query to any backend
     * that decodes it.
     */
    static String queryForUri(String rawQuery) {
        StringBuilder sb = null;
        for (int i = 0; i < rawQuery.length(); i++) {
            char c = rawQuery.charAt(i);
            boolean encode = c <= 0x20 || c >= 0x7F || "\"<>\\^`{|}".indexOf(c) >= 0;
            if (encode && sb == null) {
                sb = new StringBuilder(rawQuery.length() + 16).append(rawQuery, 0, i);
            }
            if (sb != null) {
                if (encode) {
                    Template.percent(sb, c & 0xff);
                } else {
                    sb.append(c);
                }
            }
        }
        return sb == null ? rawQuery : sb.toString();
    }
}
