package dev.weft.gateway.config;

import dev.weft.client.DestinationConfig;
import dev.weft.observe.ObserveReaders;
import dev.weft.observe.LineSink;
import dev.weft.server.ExecutorModel;
import dev.weft.server.ServerLimits;
import dev.weft.server.admission.AdmissionPolicy;
import dev.weft.gateway.plan.RoutePlan;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * A loaded, checked gateway config.
 *
 * @param destinationDefaults applies to every destination not named in {@code destinations}
 * @param tls                 inbound TLS, or null for plain HTTP
 * @param admin               the admin listener, or null: the admin endpoints stay on the main port
 * @param accessLog           where the access log goes ({@code access_log}); null: off
 * @param tracing             {@code tracing}: trace context is always propagated; spans exported when it names an
 *                            OTLP receiver
 * @param admission           the adaptive admission limit at the front door ({@code admission:})
 * @param proxies             the {@code proxy:} routes, in file order (a request takes the longest prefix that matches)
 */
public record GatewayConfig(Path file, InetSocketAddress listen, ExecutorModel executor, ServerLimits limits,
                            DestinationConfig destinationDefaults, Map<String, DestinationConfig> destinations,
                            List<RoutePlan> routes, TlsConfig tls, AdminConfig admin,
                            LineSink.Target accessLog, ObserveReaders.Tracing tracing, AdmissionPolicy admission,
                            dev.weft.server.http2.Http2Limits http2, List<dev.weft.gateway.plan.ProxyRoute> proxies) {
    /** Plain HTTP, admin on the main port, without access log or tracing, the default admission and HTTP/2. */
    public GatewayConfig(Path file, InetSocketAddress listen, ExecutorModel executor, ServerLimits limits,
                         DestinationConfig destinationDefaults, Map<String, DestinationConfig> destinations,
                         List<RoutePlan> routes) {
        this(file, listen, executor, limits, destinationDefaults, destinations, routes, null, null, null,
                ObserveReaders.Tracing.OFF, AdmissionPolicy.DEFAULT, dev.weft.server.http2.Http2Limits.DEFAULT, List.of());
    }

    /** The {@code proxy:} route with the longest prefix that {@code path} is under, or null. */
    public dev.weft.gateway.plan.ProxyRoute proxyFor(String path) {
        dev.weft.gateway.plan.ProxyRoute best = null;
        for (dev.weft.gateway.plan.ProxyRoute p : proxies) {
            if (p.matches(path) && (best == null || p.prefix().length() > best.prefix().length())) {
                best = p;
            }
        }
        return best;
    }
}
