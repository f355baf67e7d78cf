package dev.weft.gateway.config;

import dev.weft.config.ConfigNode;
import dev.weft.config.Problems;
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

    @Test
    void readsTheConnectionKeysOfADestination(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        // any PEM certificate will do: one of the JDK's own roots
        java.security.KeyStore ks = java.security.KeyStore.getInstance(java.nio.file.Path.of(
                System.getProperty("java.home"), "lib", "security", "cacerts").toFile(), "changeit".toCharArray());
        java.security.cert.Certificate root = ks.getCertificate(ks.aliases().nextElement());
        java.nio.file.Path ca = dir.resolve("ca.pem");
        java.nio.file.Files.writeString(ca, "-----BEGIN CERTIFICATE-----\n" + java.util.Base64.getMimeEncoder(64,
                new byte[] {'\n'}).encodeToString(root.getEncoded()) + "\n-----END CERTIFICATE-----\n");
        ConfigNode n = ConfigNode.parse("d.yaml", """
                max_connecting: 8
                min_idle: 4
                ca: %s
                insecure_skip_verify: false
                max_streams: 50
                http2: false
                """.formatted(ca));
        Problems problems = new Problems();
        DestinationConfig d = new CoreReaders(problems).destination(n, DestinationConfig.DEFAULT);
        problems.throwIfAny();
        assertThat(d.limits().maxConnecting()).isEqualTo(8);
        assertThat(d.limits().minIdle()).isEqualTo(4);
        assertThat(d.tls().ca()).isEqualTo(ca);
        assertThat(d.tls().insecureSkipVerify()).isFalse();
        assertThat(DestinationConfig.DEFAULT.limits().maxConnectingFor("https")).as("documented default").isEqualTo(4);
        assertThat(DestinationConfig.DEFAULT.limits().maxConnectingFor("http")).as("documented default").isEqualTo(1024);
        assertThat(d.limits().maxConnectingFor("https")).as("set").isEqualTo(8);
        assertThat(d.limits().maxStreams()).isEqualTo(50);
        assertThat(d.tls().http2()).isFalse();
        assertThat(DestinationConfig.DEFAULT.limits().maxStreams()).as("documented default").isEqualTo(100);
        assertThat(DestinationConfig.DEFAULT.tls().http2()).as("documented default: offered").isTrue();
    }

    @Test
    void refusesBadConnectionKeysWithTheirPlace() throws Exception {
        ConfigNode n = ConfigNode.parse("d.yaml", """
                max_connections: 10
                min_idle: 11
                ca: /no/such/ca.pem
                insecure_skip_verify: true
                """);
        Problems problems = new Problems();
        new CoreReaders(problems).destinationDefaults(n, DestinationConfig.DEFAULT);
        assertThatThrownBy(problems::throwIfAny)
                .hasMessageContaining("d.yaml:2:11: min_idle (11) is more than max_connections (10)")
                .hasMessageContaining("d.yaml:3:5: ca: no such file /no/such/ca.pem")
                .hasMessageContaining("d.yaml:4:23: insecure_skip_verify is allowed only on one destination");
        Problems p2 = new Problems();
        new CoreReaders(p2).destination(ConfigNode.parse("e.yaml", "max_connecting: 0\nmax_streams: 0\nhttp2: maybe\n"),
                DestinationConfig.DEFAULT);
        assertThatThrownBy(p2::throwIfAny).hasMessageContaining("e.yaml:1:17: expected a whole number from 1 to 10000")
                .hasMessageContaining("e.yaml:2:14: expected a whole number from 1 to 10000")
                .hasMessageContaining("e.yaml:3:8: http2: expected true, false or h2c");
    }

    @Test
    void h2cSpeaksHttp2WithPriorKnowledgeAndIsOffByDefault() throws Exception {
        Problems problems = new Problems();
        DestinationConfig d = new CoreReaders(problems).destination(ConfigNode.parse("d.yaml", "http2: h2c\n"),
                DestinationConfig.DEFAULT);
        problems.throwIfAny();
        assertThat(d.tls().h2c()).isTrue();
        assertThat(d.tls().http2()).as("h2c offers h2 on https too").isTrue();
        assertThat(DestinationConfig.DEFAULT.tls().h2c()).as("documented default: HTTP/1.1 on http://").isFalse();
        DestinationConfig off = new CoreReaders(problems).destination(ConfigNode.parse("d.yaml", "http2: false\n"), d);
        problems.throwIfAny();
        assertThat(off.tls().h2c()).as("http2: false over a base of h2c").isFalse();
    }
}
