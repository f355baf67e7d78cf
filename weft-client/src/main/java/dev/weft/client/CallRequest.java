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
 * One HTTP call to make: method, absolute URL, headers, optional body, optional per-call
 * overrides of the destination's retry and hedge policies, and tags: typed values that are never sent, for
 * {@link CallInterceptor}s to read ({@link #tag}).
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
                          HedgePolicy hedge, Map<Class<?>, Object> tags) {

    /**
     * @param tags typed values for interceptors, never sent: each value an instance of its key (null: none)
     * @throws IllegalArgumentException when the method is not a token (it goes on the wire as it is: a CR, LF or space
     *                                  in it would split the request), the URL is not an absolute http(s) URL, or a
     *                                  tag is not of its type
     */
    public CallRequest {
        method = dev.weft.http.Method.of(Objects.requireNonNull(method, "method").toUpperCase(Locale.ROOT)).name();
        Objects.requireNonNull(uri, "uri");
        headers = headers == null ? Headers.EMPTY : headers;
        if (uri.getScheme() == null || uri.getHost() == null) {
            throw new IllegalArgumentException("expected an absolute http(s) URL, got '" + uri + "'");
        }
        tags = tags == null || tags.isEmpty() ? Map.of() : checked(tags);
    }

    private static Map<Class<?>, Object> checked(Map<Class<?>, Object> tags) {
        for (Map.Entry<Class<?>, Object> t : tags.entrySet()) {
            if (!t.getKey().isInstance(t.getValue())) {
                throw new IllegalArgumentException("the tag of type " + t.getKey().getName() + " is "
                        + (t.getValue() == null ? "null" : "a " + t.getValue().getClass().getName()));
            }
        }
        return Map.copyOf(tags);
    }

    /** A request without tags. */
    public CallRequest(String method, URI uri, Headers headers, byte[] body, RetryPolicy retry, HedgePolicy hedge) {
        this(method, uri, headers, body, retry, hedge, Map.of());
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
        return new CallRequest(method, uri, h, body, retry, hedge, tags);
    }

    /** The same request with another body (null: none); the headers are not touched. */
    public CallRequest withBody(byte[] b) {
        return new CallRequest(method, uri, headers, b, retry, hedge, tags);
    }

    public CallRequest withRetry(RetryPolicy r) {
        return new CallRequest(method, uri, headers, body, r, hedge, tags);
    }

    public CallRequest withHedge(HedgePolicy h) {
        return new CallRequest(method, uri, headers, body, retry, h, tags);
    }

    /** The same request with the tag of {@code type} set to {@code value} (null: removed). */
    public <T> CallRequest withTag(Class<T> type, T value) {
        Map<Class<?>, Object> t = new java.util.HashMap<>(tags);
        if (value == null) {
            t.remove(type);
        } else {
            t.put(type, value);
        }
        return new CallRequest(method, uri, headers, body, retry, hedge, t);
    }

    /** The tag of {@code type}, or null when the request has none. */
    public <T> T tag(Class<T> type) {
        return type.cast(tags.get(type));
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
        private final Map<Class<?>, Object> tags = new java.util.HashMap<>(2);

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

        /** A typed value for {@link CallInterceptor}s, never sent (see {@link CallRequest#tag}). */
        public <T> Builder tag(Class<T> type, T value) {
            tags.put(Objects.requireNonNull(type, "type"), Objects.requireNonNull(value, "value"));
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
                    hedge, tags);
        }
    }
}
