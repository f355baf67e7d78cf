package dev.weft.dispatch.status;

import dev.weft.core.HostPort;
import dev.weft.json.Json;
import dev.weft.server.HttpServer;
import dev.weft.server.ServerLimits;
import dev.weft.server.ServerRequest;
import dev.weft.server.ServerResponse;
import dev.weft.doctor.InProcess;
import dev.weft.doctor.JvmMeters;
import dev.weft.dispatch.engine.Dispatcher;
import dev.weft.dispatch.engine.DispatcherHealth;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.Map;

/**
 * {@code /-/health} (liveness), {@code /-/ready} (readiness), {@code /-/metrics} (Prometheus text: the dispatcher's
 * meters, then the JVM's, {@link JvmMeters}), {@code /-/endpoints} and {@code /-/threads} of a running dispatcher;
 * with an admin token, every path but the first two needs it ({@link AdminToken}).
 */
public final class StatusServer implements AutoCloseable {
    private final HttpServer server;
    /** The JVM's meters: one registry for the process's life, where a reload replaces the dispatcher's. */
    private final JvmMeters.Binding jvmMeters;

    private StatusServer(HttpServer server, JvmMeters.Binding jvmMeters) {
        this.server = server;
        this.jvmMeters = jvmMeters;
    }

    public static StatusServer start(InetSocketAddress listen, Dispatcher dispatcher, PrometheusMeterRegistry registry)
            throws IOException {
        return start(listen, dispatcher, registry, null);
    }

    /** @param adminToken the bearer token every path but {@code /-/health} and {@code /-/ready} needs; null: none */
    public static StatusServer start(InetSocketAddress listen, Dispatcher dispatcher, PrometheusMeterRegistry registry,
                                     String adminToken) throws IOException {
        return start(listen, () -> dispatcher, () -> registry, adminToken);
    }

    /** Serving whichever dispatcher (and its registry) is current: a config reload replaces them. */
    public static StatusServer start(InetSocketAddress listen, java.util.function.Supplier<Dispatcher> dispatcher,
                                     java.util.function.Supplier<PrometheusMeterRegistry> registry, String adminToken)
            throws IOException {
        EndpointAdmin admin = new EndpointAdmin(dispatcher);
        AdminToken token = new AdminToken(adminToken);
        PrometheusMeterRegistry jvm = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        JvmMeters.Binding jvmMeters = JvmMeters.bind(jvm);
        try {
            return new StatusServer(HttpServer.builder(r -> {
                        ServerResponse refused = token.refuse(r);
                        return refused != null ? refused : r.path().startsWith(EndpointAdmin.PREFIX)
                                && "POST".equals(r.method()) ? admin.handle(r)
                                : handle(r, dispatcher.get(), registry.get(), jvm);
                    }).listen(listen).limits(ServerLimits.DEFAULT.withMaxConcurrent(64)).start(), jvmMeters);
        } catch (java.net.BindException e) {
            jvmMeters.close();
            throw new IOException("cannot listen on " + HostPort.format(listen) + " for the status endpoints ("
                    + e.getMessage() + "); give another with --listen or 'listen:' in the config", e);
        } catch (IOException | RuntimeException e) {
            jvmMeters.close();
            throw e;
        }
    }

    private static ServerResponse handle(ServerRequest r, Dispatcher d, PrometheusMeterRegistry registry,
                                         PrometheusMeterRegistry jvm) throws IOException {
        if (!"GET".equals(r.method())) {
            return ServerResponse.json(405, Json.MAPPER.writeValueAsBytes(Map.of("error", "only GET is served here "
                    + "(and POST /-/endpoints/ID/pause|resume|enable)")))
                    .withHeader("allow", "GET");
        }
        return switch (r.path()) {
            case "/-/health" -> {
                DispatcherHealth h = d.health();
                yield ServerResponse.json(d.live() ? 200 : 503,
                        Json.MAPPER.writeValueAsBytes(h));
            }
            case "/-/ready" -> {
                Dispatcher.Readiness ready = d.readiness();
                Map<String, Object> body = new java.util.LinkedHashMap<>();
                body.put("ready", ready.ready());
                if (ready.reason() != null) {
                    body.put("reason", ready.reason());
                }
                yield ServerResponse.json(ready.ready() ? 200 : 503, Json.MAPPER.writeValueAsBytes(body));
            }
            case "/-/metrics" -> {
                String own = registry.scrape();
                yield ServerResponse.text(200, "text/plain; version=0.0.4; charset=utf-8",
                        own + (own.isEmpty() || own.endsWith("\n") ? "" : "\n") + jvm.scrape());
            }
            case "/-/endpoints" -> ServerResponse.json(200, Json.MAPPER.writerWithDefaultPrettyPrinter()
                    .writeValueAsBytes(d.endpointStatus()));
            case "/-/threads" -> threads(r);
            default -> ServerResponse.json(404, Json.MAPPER.writeValueAsBytes(Map.of("error", "unknown path "
                    + r.path() + "; try /-/health, /-/ready, /-/metrics, /-/endpoints, /-/threads")));
        };
    }

    /** weft doctor's report of this process over {@code ?for=} (default 1 s, at most 10 s). */
    private static ServerResponse threads(ServerRequest r) throws IOException {
        try {
            return ServerResponse.json(200, Json.MAPPER.writeValueAsBytes(InProcess.threads(r.query())));
        } catch (IllegalArgumentException e) {
            return ServerResponse.json(400, Json.MAPPER.writeValueAsBytes(Map.of("error", e.getMessage())));
        } catch (InProcess.Busy e) {
            return ServerResponse.json(503, Json.MAPPER.writeValueAsBytes(Map.of("error", e.getMessage())))
                    .withHeader("Retry-After", "1");
        } catch (dev.weft.doctor.ThisJvm.ShortOfDescriptors e) {
            return ServerResponse.json(503, Json.MAPPER.writeValueAsBytes(Map.of("error", e.getMessage())))
                    .withHeader("Retry-After", "5");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return ServerResponse.json(503, Json.MAPPER.writeValueAsBytes(Map.of("error", "stopping")));
        }
    }

    public String url() {
        return server.url();
    }

    @Override
    public void close() {
        server.close();
        jvmMeters.close();
    }
}
