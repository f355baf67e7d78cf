package dev.weft.server;

import dev.weft.http.RequestHead;

import java.net.InetSocketAddress;

/**
 * A request as the server hands it to a {@link HttpHandler}: head, whole body (bounded), peer.
 *
 * @param http2      whether it came over HTTP/2 (a stream), which can take an answer's trailers; else HTTP/1.x
 * @param bodyStream null, or the body as it comes (then {@code body} is empty): for the requests the server was told
 *                   to stream ({@code HttpServer.Builder.streamedBodies}). Over HTTP/2 its runs are given back to
 *                   the client's window as they are taken, it has no timeout of its own (its reader's deadline bounds
 *                   it) and throws when the client resets the stream; over HTTP/1.1 it reads the connection, each run
 *                   within the server's body_timeout, at most max_body_bytes in all (else a 413
 *                   {@code HttpCodecException}; malformed chunks a 400), and a body the handler did not read to its end
 *                   closes the connection after the answer
 * @param http10     whether it came over HTTP/1.0, whose client reads no chunked answer
 */
public record ServerRequest(RequestHead head, byte[] body, InetSocketAddress remote, long receivedNanos,
                            boolean http2, BodySource bodyStream, boolean http10) {
    /** A request over HTTP/1.1. */
    public ServerRequest(RequestHead head, byte[] body, InetSocketAddress remote, long receivedNanos) {
        this(head, body, remote, receivedNanos, false, null, false);
    }

    /** A request with its whole body. */
    public ServerRequest(RequestHead head, byte[] body, InetSocketAddress remote, long receivedNanos, boolean http2) {
        this(head, body, remote, receivedNanos, http2, null, false);
    }

    /** A request over HTTP/1.1 or HTTP/2 ({@code http2}), its body whole or streamed. */
    public ServerRequest(RequestHead head, byte[] body, InetSocketAddress remote, long receivedNanos, boolean http2,
                         BodySource bodyStream) {
        this(head, body, remote, receivedNanos, http2, bodyStream, false);
    }

    /** A request over HTTP/1.x, with its whole body. */
    public static ServerRequest http1(RequestHead head, byte[] body, InetSocketAddress remote, long receivedNanos,
                                      boolean http10) {
        return new ServerRequest(head, body, remote, receivedNanos, false, null, http10);
    }

    /**
     * Whether an answer to it is written as it comes when the handler answers with a stream
     * ({@link ServerResponse#stream()}): over HTTP/2 or HTTP/1.1, but not for a HEAD (its answer has no body). An
     * HTTP/1.0 client's is held whole (the server reads the stream first, within 16 MiB), so a handler that can answer
     * whole had better do so.
     */
    public boolean streamable() {
        return (http2 || !http10) && !head.method().equals("HEAD");
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
