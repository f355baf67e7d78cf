package dev.weft.server;

import dev.weft.http.RequestHead;

import java.net.InetSocketAddress;

/** A request as the server hands it to a {@link HttpHandler}: head, whole body (bounded), peer. */
public record ServerRequest(RequestHead head, byte[] body, InetSocketAddress remote, long receivedNanos) {
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
