package dev.weft.gateway.config;

import dev.weft.client.DestinationConfig;
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
 * @param admission           the adaptive admission limit at the front door ({@code admission:})
 */
public record GatewayConfig(Path file, InetSocketAddress listen, ExecutorModel executor, ServerLimits limits,
                            DestinationConfig destinationDefaults, Map<String, DestinationConfig> destinations,
                            List<RoutePlan> routes, AdmissionPolicy admission) {
}
