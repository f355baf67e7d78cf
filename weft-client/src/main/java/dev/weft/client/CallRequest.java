package dev.weft.client;

import dev.weft.client.policy.HedgePolicy;
import dev.weft.client.policy.RetryPolicy;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Objects;

/**
 * One HTTP call to make: method, absolute URL, headers, optional body, and optional per-call
 * overrides of the destination's retry and hedge policies.
 */
public record CallRequest(String method, URI uri, Headers headers, byte[] body, RetryPolicy retry,
                          HedgePolicy hedge) {

    public CallRequest {
        method = method.toUpperCase(Locale.ROOT);
        Objects.requireNonNull(uri, "uri");
        headers = headers == null ? Headers.EMPTY : headers;
        if (uri.getScheme() == null || uri.getHost() == null) {
            throw new IllegalArgumentException("expected an absolute http(s) URL, got '" + uri + "'");
        }
    }

    public static CallRequest get(String url) {
        return new CallRequest("GET", URI.create(url), Headers.EMPTY, null, null, null);
    }

    public static CallRequest post(String url, String body) {
        return new CallRequest("POST", URI.create(url), Headers.EMPTY, body.getBytes(StandardCharsets.UTF_8), null,
                null);
    }

    public CallRequest withHeaders(Headers h) {
        return new CallRequest(method, uri, h, body, retry, hedge);
    }

    public CallRequest withRetry(RetryPolicy r) {
        return new CallRequest(method, uri, headers, body, r, hedge);
    }

    public CallRequest withHedge(HedgePolicy h) {
        return new CallRequest(method, uri, headers, body, retry, h);
    }

    public Destination destination() {
        return Destination.of(uri);
    }

    @Override
    public String toString() {
        return method + " " + uri;
    }
}
