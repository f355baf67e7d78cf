package dev.weft.server;

import dev.weft.http.Headers;

import java.nio.charset.StandardCharsets;

/**
 * What a {@link HttpHandler} answers. Content-Length and Connection are written by the server.
 *
 * @param trailers fields sent after the body (empty: none). HTTP/2 sends them as a trailing HEADERS frame; HTTP/1.1
 *                 answers are written with Content-Length and leave them out (docs/gateway.md, Proxy routes).
 */
public record ServerResponse(int status, Headers headers, byte[] body, Headers trailers) {
    /** One instance for every JSON answer: its field is checked once, the first time an answer carries it. */
    private static final Headers JSON = Headers.of("Content-Type", "application/json");

    public ServerResponse {
        headers = headers == null ? Headers.EMPTY : headers;
        trailers = trailers == null ? Headers.EMPTY : trailers;
    }

    /** An answer without trailers. */
    public ServerResponse(int status, Headers headers, byte[] body) {
        this(status, headers, body, Headers.EMPTY);
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
        return new ServerResponse(status, headers.with(name, value), body, trailers);
    }
}
