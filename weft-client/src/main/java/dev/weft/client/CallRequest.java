package dev.weft.client;

import dev.weft.http.Headers;
import dev.weft.client.policy.HedgePolicy;
import dev.weft.client.policy.RetryPolicy;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * One HTTP call to make: method, absolute URL, headers, optional body, and optional per-call
 * overrides of the destination's retry and hedge policies.
 *
 * <pre>{@code
 * CallRequest r = CallRequest.builder("POST", "http://127.0.0.1:9001/orders")
 *         .header("Idempotency-Key", key)
 *         .body(json, "application/json")
 *         .retry(RetryPolicy.NONE)
 *         .build();
 * }</pre>
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

    /** A request to build: {@code builder("POST", url).header(..).body(..).build()}. */
    public static Builder builder(String method, String url) {
        return new Builder(method, URI.create(url));
    }

    /** A request to build for {@code uri}. */
    public static Builder builder(String method, URI uri) {
        return new Builder(method, uri);
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

    /** Builds a {@link CallRequest}; not thread-safe, build once per request. */
    public static final class Builder {
        private final String method;
        private final URI uri;
        private final List<Map.Entry<String, String>> headers = new ArrayList<>(4);
        private byte[] body;
        private String contentType;
        private RetryPolicy retry;
        private HedgePolicy hedge;

        private Builder(String method, URI uri) {
            this.method = Objects.requireNonNull(method, "method");
            this.uri = Objects.requireNonNull(uri, "uri");
        }

        /** Sets {@code name} to {@code value}, replacing every field of that name (any case) given before. */
        public Builder header(String name, String value) {
            headers.removeIf(f -> f.getKey().equalsIgnoreCase(name));
            return addHeader(name, value);
        }

        /** Adds a field, keeping those of the same name given before. */
        public Builder addHeader(String name, String value) {
            headers.add(Map.entry(Objects.requireNonNull(name, "name"), Objects.requireNonNull(value, "value")));
            return this;
        }

        /** Adds every field of {@code h}. */
        public Builder headers(Headers h) {
            headers.addAll(h.fields());
            return this;
        }

        /**
         * The body, and its media type: sent as {@code Content-Type} unless a header of that name is given
         * (null for none).
         */
        public Builder body(byte[] bytes, String contentType) {
            this.body = Objects.requireNonNull(bytes, "bytes");
            this.contentType = contentType;
            return this;
        }

        /** A text body, sent as UTF-8. */
        public Builder body(String text, String contentType) {
            return body(text.getBytes(StandardCharsets.UTF_8), contentType);
        }

        /** This call's retry policy instead of the destination's. */
        public Builder retry(RetryPolicy r) {
            this.retry = r;
            return this;
        }

        /** This call's hedge policy instead of the destination's. */
        public Builder hedge(HedgePolicy h) {
            this.hedge = h;
            return this;
        }

        /** @throws IllegalArgumentException when the URL is not an absolute http(s) URL */
        public CallRequest build() {
            List<Map.Entry<String, String>> fields = new ArrayList<>(headers);
            if (body != null && contentType != null
                    && fields.stream().noneMatch(f -> f.getKey().equalsIgnoreCase("Content-Type"))) {
                fields.add(Map.entry("Content-Type", contentType));
            }
            return new CallRequest(method, uri, fields.isEmpty() ? Headers.EMPTY : Headers.of(fields), body, retry,
                    hedge);
        }
    }
}
