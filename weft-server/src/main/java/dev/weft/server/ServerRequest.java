package dev.weft.server;

import dev.weft.http.RequestHead;

import java.net.InetSocketAddress;

/**
 * A request as the server hands it to a {@link HttpHandler}: head, whole body (bounded), peer.
 *
 * @param http2 whether it came over HTTP/2 (a stream), which can take an answer's trailers; else HTTP/1.x
 */
public record ServerRequest(RequestHead head, byte[] body, InetSocketAddress remote, long receivedNanos,
                            boolean http2) {
    /** A request over HTTP/1.x. */
    public ServerRequest(RequestHead head, byte[] body, InetSocketAddress remote, long receivedNanos) {
        this(head, body, remote, receivedNanos, false);
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
