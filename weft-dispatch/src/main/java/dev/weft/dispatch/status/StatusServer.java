package dev.weft.dispatch.status;

import dev.weft.core.HostPort;
import dev.weft.core.Json;
import dev.weft.core.http.ExecutorModel;
import dev.weft.core.http.HttpServer;
import dev.weft.core.http.ServerLimits;
import dev.weft.core.http.ServerRequest;
import dev.weft.core.http.ServerResponse;
import dev.weft.dispatch.engine.Dispatcher;
import dev.weft.dispatch.engine.DispatcherHealth;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;

/** {@code /-/health}, {@code /-/metrics} (Prometheus text) and {@code /-/endpoints} of a running dispatcher. */
public final class StatusServer implements AutoCloseable {
    private final HttpServer server;

    private StatusServer(HttpServer server) {
        this.server = server;
    }

    public static StatusServer start(InetSocketAddress listen, Dispatcher dispatcher, PrometheusMeterRegistry registry)
            throws IOException {
        try {
            return new StatusServer(HttpServer.start(List.of(listen), ServerLimits.DEFAULT.withMaxConcurrent(64),
                    new ExecutorModel.Virtual(), r -> handle(r, dispatcher, registry)));
        } catch (java.net.BindException e) {
            throw new IOException("cannot listen on " + HostPort.format(listen) + " for the status endpoints ("
                    + e.getMessage() + "); give another with --listen or 'listen:' in the config", e);
        }
    }

    private static ServerResponse handle(ServerRequest r, Dispatcher d, PrometheusMeterRegistry registry)
            throws IOException {
        if (!"GET".equals(r.method())) {
            return ServerResponse.json(405, Json.MAPPER.writeValueAsBytes(Map.of("error", "only GET is served here")))
                    .withHeader("allow", "GET");
        }
        return switch (r.path()) {
            case "/-/health" -> {
                DispatcherHealth h = d.health();
                yield ServerResponse.json(h.status() == DispatcherHealth.Status.UP ? 200 : 503,
                        Json.MAPPER.writeValueAsBytes(h));
            }
            case "/-/metrics" -> ServerResponse.text(200, "text/plain; version=0.0.4; charset=utf-8", registry.scrape());
            case "/-/endpoints" -> ServerResponse.json(200, Json.MAPPER.writerWithDefaultPrettyPrinter()
                    .writeValueAsBytes(d.endpointStatus()));
            default -> ServerResponse.json(404, Json.MAPPER.writeValueAsBytes(Map.of("error", "unknown path "
                    + r.path() + "; try /-/health, /-/metrics, /-/endpoints")));
        };
    }

    public String url() {
        return server.url();
    }

    @Override
    public void close() {
        server.close();
    }
}
