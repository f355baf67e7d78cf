package dev.weft.core.http;

/** Answers one request; plain blocking code. An exception becomes a 500 with a JSON body. */
@FunctionalInterface
public interface HttpHandler {
    ServerResponse handle(ServerRequest request) throws Exception;
}
