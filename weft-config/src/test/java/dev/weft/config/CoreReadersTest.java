package dev.weft.config;

import dev.weft.client.DestinationConfig;
import dev.weft.server.ServerLimits;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class CoreReadersTest {
    @Test
    void readsADestinationOverItsBase() throws Exception {
        ConfigNode n = ConfigNode.parse("d.yaml", """
                max_in_flight: 500
                connect_timeout: 250ms
                retry: { attempts: 3, statuses: [503] }
                hedge: 80ms
                breaker: { consecutive_failures: 9 }
                """);
        Problems problems = new Problems();
        DestinationConfig d = new CoreReaders(problems).destination(n, DestinationConfig.DEFAULT);
        problems.throwIfAny();
        assertThat(d.limits().maxInFlight()).isEqualTo(500);
        assertThat(d.limits().connectTimeout()).isEqualTo(Duration.ofMillis(250));
        assertThat(d.limits().maxWait()).isEqualTo(DestinationConfig.DEFAULT.limits().maxWait());
        assertThat(d.retry().attempts()).isEqualTo(3);
        assertThat(d.retry().retryStatuses()).containsExactly(503);
        assertThat(d.hedge().delay()).isEqualTo(Duration.ofMillis(80));
        assertThat(d.breaker().consecutiveFailures()).isEqualTo(9);
    }

    @Test
    void reportsProblemsWithTheirPlaceAndKeepsTheBase() throws Exception {
        ConfigNode n = ConfigNode.parse("s.yaml", """
                max_concurrent: 0
                idle_timeout: 0s
                bogus: 1
                """);
        Problems problems = new Problems();
        ServerLimits l = new CoreReaders(problems).serverLimits(n);
        assertThat(l).isEqualTo(ServerLimits.DEFAULT);
        assertThatThrownBy(problems::throwIfAny)
                .hasMessageContaining("s.yaml:3:1: unknown key 'bogus'")
                .hasMessageContaining("s.yaml:1:17: expected a whole number from 1 to 1000000");
        assertThat(problems.size()).as("the unknown key, then the first bad value of the limits").isEqualTo(2);
    }
}
