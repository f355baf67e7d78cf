package dev.weft.lab;

import dev.weft.server.HttpServer;
import dev.weft.server.ServerLimits;
import dev.weft.server.ServerResponse;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.atomic.LongAdder;

/**
 * An OTLP/HTTP receiver for the lab's traced gateway: takes {@code POST /v1/traces}, counts the exports and
 * their bytes, and answers 200 with an empty ExportTraceServiceResponse (an empty protobuf message).
 */
final class OtlpSink implements AutoCloseable {
    private final LongAdder exports = new LongAdder();
    private final LongAdder bytes = new LongAdder();
    private final HttpServer server;

    OtlpSink() throws IOException {
        server = HttpServer.builder(r -> {
                    if (!r.path().equals("/v1/traces")) {
                        return ServerResponse.json(404, "{\"error\":\"only /v1/traces\"}");
                    }
                    exports.increment();
                    bytes.add(r.body().length);
                    return new ServerResponse(200, dev.weft.http.Headers.of("Content-Type", "application/x-protobuf"),
                            new byte[0]);
                }).listen(new InetSocketAddress("127.0.0.1", 0)).limits(ServerLimits.DEFAULT.withMaxBodyBytes(64L * 1024 * 1024))
                .start();
    }

    String url() {
        return server.url();
    }

    String summary() {
        return exports.sum() + " exports, " + bytes.sum() + " bytes of spans";
    }

    @Override
    public void close() {
        server.close();
    }
}
