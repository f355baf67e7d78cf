package dev.weft.server;

/** Answers one request; plain blocking code. An exception becomes a 500 with a JSON body. */
@FunctionalInterface
public interface HttpHandler {
    ServerResponse handle(ServerRequest request) throws Exception;
}
