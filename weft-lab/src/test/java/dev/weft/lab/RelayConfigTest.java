package dev.weft.lab;

import dev.weft.gateway.config.DescriptorBudget;
import dev.weft.gateway.config.GatewayConfig;
import dev.weft.gateway.config.GatewayConfigLoader;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Weft relay's config gives each backend's pool a connection per call in flight on the machine's 20,000
 * descriptors (HTTP/1.1 backends: a call holds its connection for the backend's whole latency), so a 1 s row measures
 * the relay and not a queue for connections; and it fits without a warning.
 */
class RelayConfigTest {
    private static final List<String> BACKENDS = List.of("http://127.0.0.2:9001", "http://127.0.0.3:9001",
            "http://127.0.0.4:9001");

    @Test
    void eachBackendPoolHoldsACallInFlightPerRequestUpTo6000() throws Exception {
        for (int concurrency : new int[] {200, 2_000, 4_000, 5_000, 6_000}) {
            GatewayConfig g = GatewayConfigLoader.parse("relay.yaml",
                    RelayLab.weftRelayConfig(BACKENDS, concurrency, 3 * concurrency + 100), 20_000);
            assertThat(g.limits().maxConcurrent()).as("requests (streams) at once").isEqualTo(3 * concurrency + 100);
            assertThat(g.destinationDefaults().limits().maxConnections()).as(concurrency + " in flight")
                    .isGreaterThanOrEqualTo(concurrency);
            assertThat(DescriptorBudget.check(g, 20_000)).as(concurrency + " in flight").isNull();
        }
    }
}
