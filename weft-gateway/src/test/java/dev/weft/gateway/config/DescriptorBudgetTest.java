package dev.weft.gateway.config;

import dev.weft.client.DestinationLimits;
import dev.weft.server.ServerLimits;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The defaults sized to the open-file limit the process finds: a config that leaves the bounds to their defaults fits
 * any limit (no warning), the documented defaults where they fit; what an operator set that cannot fit is warned about.
 */
class DescriptorBudgetTest {
    private static final String ONE = """
            routes:
              - get: /a
                calls:
                  b: { url: "http://127.0.0.1:9001/b" }
                  c: { url: "http://127.0.0.1:9001/c" }
            """;
    private static final String THREE = """
            routes:
              - get: /a
                calls:
                  b: { url: "http://127.0.0.1:9001/b" }
                  c: { url: "http://127.0.0.1:9002/c" }
                  d: { url: "http://127.0.0.1:9003/d" }
            """;

    /** What the config may hold: inbound, admin, every pool its routes call, the JVM's reserve. */
    private static long held(GatewayConfig g, long limit) {
        String warning = DescriptorBudget.check(g, 1); // a limit of 1: the sentence that names the sum
        assertThat(warning).isNotNull();
        return Long.parseLong(warning.replaceAll(".*may hold (\\d+) descriptors.*", "$1"));
    }

    @Test
    void aDefaultGatewayFitsTwentyThousandDescriptors() throws Exception {
        // the documented defaults: 16,000 inbound + 10,000 pooled + 128 = 26,128
        GatewayConfig unsized = GatewayConfigLoader.parse("gw.yaml", ONE, 0);
        assertThat(unsized.limits().maxConnections()).isEqualTo(ServerLimits.DEFAULT.maxConnections());
        assertThat(DescriptorBudget.check(unsized, 20_000)).as("the documented defaults on 20,000").isNotNull();

        GatewayConfig g = GatewayConfigLoader.parse("gw.yaml", ONE, 20_000);
        assertThat(DescriptorBudget.check(g, 20_000)).isNull();
        assertThat(held(g, 20_000)).isLessThanOrEqualTo(20_000).isGreaterThan(19_000);
        // both scaled by the one factor: their ratio is the documented defaults'
        double ratio = (double) g.limits().maxConnections() / g.destinationDefaults().limits().maxConnections();
        assertThat(ratio).isCloseTo(16_000.0 / 10_000, org.assertj.core.data.Offset.offset(0.01));
        // as docs/gateway.md (File descriptors) quotes them: 19,872 / 26,000 of each
        assertThat(g.limits().maxConnections()).isEqualTo(12_228);
        assertThat(g.destinationDefaults().limits().maxConnections()).isEqualTo(7_643);
        // what is not about descriptors is left as it was
        assertThat(g.limits().maxConcurrent()).isEqualTo(ServerLimits.DEFAULT.maxConcurrent());
        assertThat(g.destinationDefaults().limits().maxInFlight()).isEqualTo(DestinationLimits.DEFAULT_MAX_IN_FLIGHT);
    }

    @Test
    void everyLimitGetsAConfigThatFitsAndTheDocumentedDefaultsWhereTheyFit() throws Exception {
        for (long limit : new long[] {1_024, 4_096, 20_000, 46_127, 65_536, 1_048_576}) {
            for (String routes : new String[] {ONE, THREE, "admin: { listen: 127.0.0.1:0 }\n" + THREE}) {
                GatewayConfig g = GatewayConfigLoader.parse("gw.yaml", routes, limit);
                assertThat(DescriptorBudget.check(g, limit)).as(limit + " descriptors:\n" + routes).isNull();
                assertThat(held(g, limit)).isLessThanOrEqualTo(limit);
            }
        }
        // 46,128 = 16,000 + 3 x 10,000 + 128: the documented defaults fit, and are kept
        GatewayConfig big = GatewayConfigLoader.parse("gw.yaml", THREE, 46_128);
        assertThat(big.limits().maxConnections()).isEqualTo(16_000);
        assertThat(big.destinationDefaults().limits().maxConnections()).isEqualTo(10_000);
        assertThat(GatewayConfigLoader.parse("gw.yaml", THREE, 0).limits().maxConnections()).as("limit unknown")
                .isEqualTo(16_000);
    }

    @Test
    void theDefaultsShareWhatTheBoundsSetLeave() throws Exception {
        GatewayConfig g = GatewayConfigLoader.parse("gw.yaml", """
                limits: { max_connections: 12000 }
                destinations:
                  "http://127.0.0.1:9002": { max_connections: 3000 }
                  "http://127.0.0.1:9003": { retry: { attempts: 2 } }
                """ + THREE, 20_000);
        assertThat(g.limits().maxConnections()).as("set: kept").isEqualTo(12_000);
        assertThat(g.destinations().get("http://127.0.0.1:9002").limits().maxConnections()).as("set: kept")
                .isEqualTo(3_000);
        int d9001 = g.destinationDefaults().limits().maxConnections();
        int d9003 = g.destinations().get("http://127.0.0.1:9003").limits().maxConnections();
        assertThat(d9001).isEqualTo(d9003).isPositive();
        assertThat(12_000 + 3_000 + d9001 + d9003 + DescriptorBudget.RESERVE).isLessThanOrEqualTo(20_000)
                .isGreaterThan(20_000 - 4);
        assertThat(DescriptorBudget.check(g, 20_000)).isNull();
    }

    @Test
    void whatTheOperatorSetThatCannotFitIsWarnedAbout() throws Exception {
        GatewayConfig g = GatewayConfigLoader.parse("gw.yaml", "limits: { max_connections: 19000 }\n"
                + "destination_defaults: { max_connections: 5000 }\n" + ONE, 20_000);
        assertThat(g.limits().maxConnections()).isEqualTo(19_000);
        assertThat(DescriptorBudget.check(g, 20_000)).startsWith("the open-file limit is 20000 but this config may "
                + "hold 24128 descriptors: 19000 inbound connections");
        // a bound set alone past the limit: the defaults are left as documented, and the warning names them all
        GatewayConfig over = GatewayConfigLoader.parse("gw.yaml", "limits: { max_connections: 30000 }\n" + ONE,
                20_000);
        assertThat(over.destinationDefaults().limits().maxConnections()).isEqualTo(10_000);
        assertThat(DescriptorBudget.check(over, 20_000)).contains("may hold 40128 descriptors");
    }
}
