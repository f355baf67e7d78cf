package dev.weft.server;

import dev.weft.http.RequestHead;

import java.net.InetSocketAddress;

/**
 * A request as the server hands it to a {@link HttpHandler}: head, whole body (bounded), peer.
 *
 * @param http2      whether it came over HTTP/2 (a stream), which can take an answer's trailers; else HTTP/1.x
 * @param bodyStream null, or the body as it comes (then {@code body} is empty): for the HTTP/2 requests the server
 *                   was told to stream ({@code HttpServer.Builder.streamedBodies}). Its runs are given back to the
 *                   client's window as they are taken; {@code next()} waits at most the server's body_timeout for
 *                   each, and throws when the client resets the stream
 */
public record ServerRequest(RequestHead head, byte[] body, InetSocketAddress remote, long receivedNanos,
                            boolean http2, BodySource bodyStream) {
    /** A request over HTTP/1.x. */
    public ServerRequest(RequestHead head, byte[] body, InetSocketAddress remote, long receivedNanos) {
        this(head, body, remote, receivedNanos, false, null);
    }

    /** A request with its whole body. */
    public ServerRequest(RequestHead head, byte[] body, InetSocketAddress remote, long receivedNanos, boolean http2) {
        this(head, body, remote, receivedNanos, http2, null);
    }

    public String method() {
        return head.method();
    }

    public String path() {
        return head.path();
    }

    public String query() {
        return head.query();
    }

    public String header(String name) {
        return head.header(name);
    }
}
