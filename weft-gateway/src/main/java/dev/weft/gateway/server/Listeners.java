package dev.weft.gateway.server;

import dev.weft.gateway.config.AdminConfig;
import dev.weft.gateway.config.TlsConfig;
import dev.weft.server.HttpHandler;
import dev.weft.server.JsonText;
import dev.weft.server.ServerLimits;
import dev.weft.server.ServerRequest;
import dev.weft.server.ServerResponse;
import dev.weft.server.ServerTls;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.function.Consumer;

/**
 * The gateway's listeners beyond their requests: inbound TLS, the admin listener, and the counters of connections they
 * closed (header, body and write timeouts, descriptor sheds). docs/gateway.md, Deploying.
 */
final class Listeners {
    /** The admin port serves a few scrapers and operators: 64 requests at once, 256 connections. */
    static final ServerLimits ADMIN_LIMITS = ServerLimits.builder().maxConcurrent(64).maxWait(Duration.ofMillis(100))
            .maxHeadBytes(16 * 1024).maxBodyBytes(0).idleTimeout(Duration.ofSeconds(60))
            .maxConnections(dev.weft.gateway.config.DescriptorBudget.ADMIN_CONNECTIONS).drainTimeout(Duration.ofSeconds(1))
            .headerTimeout(ServerLimits.DEFAULT_HEADER_TIMEOUT).bodyTimeout(ServerLimits.DEFAULT_BODY_TIMEOUT).build();

    private Listeners() {
    }

    /**
     * How often the TLS files are checked for changes: the system property {@code weft.tlsWatch}
     * (a duration, or {@code off}), default 2 s.
     */
    static Duration tlsWatch() {
        String p = System.getProperty("weft.tlsWatch", "2s").strip();
        return p.equals("off") ? null : dev.weft.core.Durations.parse(p);
    }

    static ServerTls tls(TlsConfig cfg, MeterRegistry registry, Consumer<String> log) throws IOException {
        ServerTls t = ServerTls.start(cfg::load, cfg.files(), tlsWatch(), log);
        FunctionCounter.builder("weft.gateway.tls.handshake.failures", t, ServerTls::handshakeFailures)
                .description("inbound TLS handshakes that failed (bad client hello, untrusted cert, timeout)")
                .register(registry);
        FunctionCounter.builder("weft.gateway.tls.reloads", t, ServerTls::reloads)
                .description("certificate reloads taken after the files changed").register(registry);
        FunctionCounter.builder("weft.gateway.tls.reload.failures", t, ServerTls::reloadFailures)
                .description("certificate reloads refused (the previous certificate stays)").register(registry);
        return t;
    }

    static void countSheds(dev.weft.server.HttpServer server, MeterRegistry registry) {
        count(registry, server, "weft.gateway.connections.shed.descriptors", dev.weft.server.HttpServer::descriptorSheds,
                "connections closed at accept because the process was out of file descriptors");
        count(registry, server, "weft.gateway.connections.header_timeouts", dev.weft.server.HttpServer::headerTimeouts,
                "connections closed because a request head did not arrive within limits.header_timeout");
        count(registry, server, "weft.gateway.connections.body_timeouts", dev.weft.server.HttpServer::bodyTimeouts,
                "connections closed because a request body did not arrive within limits.body_timeout");
        count(registry, server, "weft.gateway.connections.write_timeouts", dev.weft.server.HttpServer::writeTimeouts,
                "connections closed because the client took no more of an answer for limits.idle_timeout");
        dev.weft.server.http2.Http2Metrics h2 = server.http2Metrics();
        if (h2 != null) {
            FunctionCounter.builder("weft.gateway.http2.connections", h2, m -> m.connections())
                    .description("HTTP/2 connections served").register(registry);
            io.micrometer.core.instrument.Gauge.builder("weft.gateway.http2.connections.open", h2, m -> m.openConnections())
                    .description("HTTP/2 connections open now").register(registry);
            FunctionCounter.builder("weft.gateway.http2.streams", h2, m -> m.streams())
                    .description("HTTP/2 streams (requests) started").register(registry);
            FunctionCounter.builder("weft.gateway.http2.streams.refused", h2, m -> m.refusedStreams())
                    .description("HTTP/2 streams refused (REFUSED_STREAM): http2.max_concurrent_streams were open")
                    .register(registry);
            FunctionCounter.builder("weft.gateway.http2.streams.reset", h2, m -> m.resetByPeer())
                    .description("HTTP/2 streams the client reset while their handler ran (the handler was interrupted)")
                    .register(registry);
            for (dev.weft.server.http2.Http2Metrics.Hostile why : dev.weft.server.http2.Http2Metrics.Hostile.values()) {
                FunctionCounter.builder("weft.gateway.http2.goaway", h2, m -> m.hostile(why))
                        .tag("kind", why.name().toLowerCase(java.util.Locale.ROOT))
                        .description("HTTP/2 connections closed with GOAWAY because the client misbehaved so")
                        .register(registry);
            }
        }
    }

    private static void count(MeterRegistry registry, dev.weft.server.HttpServer server, String name,
                              java.util.function.ToDoubleFunction<dev.weft.server.HttpServer> counted, String description) {
        FunctionCounter.builder(name, server, counted).description(description).register(registry);
    }

    /** The admin port: the /-/ endpoints, behind the bearer token when one is configured (except health and ready). */
    static ServerResponse adminHandle(ServerRequest r, AdminConfig cfg, HttpHandler admin) throws Exception {
        if (!r.path().startsWith("/-/")) {
            return error(404, "the admin listener serves /-/health, /-/ready, /-/metrics, /-/routes, /-/threads");
        }
        boolean open = r.path().equals("/-/health") || r.path().equals("/-/ready");
        if (cfg.token() != null && !open && !authorized(r.header("authorization"), cfg.token())) {
            return error(401, "this admin endpoint needs 'Authorization: Bearer <token>' (the token in $"
                    + cfg.tokenEnv() + ")").withHeader("WWW-Authenticate", "Bearer");
        }
        return admin.handle(r);
    }

    private static boolean authorized(String header, String token) {
        if (header == null || !header.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return false;
        }
        return MessageDigest.isEqual(header.substring(7).strip().getBytes(StandardCharsets.UTF_8),
                token.getBytes(StandardCharsets.UTF_8));
    }

    private static ServerResponse error(int status, String message) {
        return ServerResponse.json(status, "{\"error\":" + JsonText.quote(message) + "}");
    }
}
