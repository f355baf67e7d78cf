package dev.weft.server;

import dev.weft.http.Headers;

import java.nio.charset.StandardCharsets;

/**
 * What a {@link HttpHandler} answers. Content-Length and Connection are written by the server.
 *
 * @param trailers fields sent after the body (empty: none). HTTP/2 sends them as a trailing HEADERS frame; HTTP/1.1
 *                 answers with a whole body are written with Content-Length and leave them out (a streamed one's
 *                 come from its {@link BodySource}; docs/gateway.md, Proxy routes).
 * @param stream   null, or a body written as it comes in place of {@code body} (empty then), with its own trailers
 */
public record ServerResponse(int status, Headers headers, byte[] body, Headers trailers, BodySource stream) {
    /** One instance for every JSON answer: its field is checked once, the first time an answer carries it. */
    private static final Headers JSON = Headers.of("Content-Type", "application/json");

    public ServerResponse {
        headers = headers == null ? Headers.EMPTY : headers;
        trailers = trailers == null ? Headers.EMPTY : trailers;
        if (stream != null && body != null && body.length > 0) {
            throw new IllegalArgumentException("an answer has a body or a stream, not both");
        }
    }

    /** An answer without trailers. */
    public ServerResponse(int status, Headers headers, byte[] body) {
        this(status, headers, body, Headers.EMPTY, null);
    }

    /** An answer with trailers. */
    public ServerResponse(int status, Headers headers, byte[] body, Headers trailers) {
        this(status, headers, body, trailers, null);
    }

    /** An answer whose body is written as it comes. */
    public static ServerResponse streamed(int status, Headers headers, BodySource stream) {
        return new ServerResponse(status, headers, new byte[0], Headers.EMPTY, java.util.Objects.requireNonNull(stream));
    }

    public static ServerResponse json(int status, byte[] body) {
        return new ServerResponse(status, JSON, body);
    }

    public static ServerResponse json(int status, String body) {
        return json(status, body.getBytes(StandardCharsets.UTF_8));
    }

    public static ServerResponse text(int status, String contentType, String body) {
        return new ServerResponse(status, Headers.of("Content-Type", contentType), body.getBytes(StandardCharsets.UTF_8));
    }

    public ServerResponse withHeader(String name, String value) {
        return new ServerResponse(status, headers.with(name, value), body, trailers, stream);
    }
}
