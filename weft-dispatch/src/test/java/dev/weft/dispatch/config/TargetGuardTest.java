package dev.weft.dispatch.config;

import dev.weft.config.ConfigException;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TargetGuardTest {
    @Test
    void nonPublicAddressesAreRefusedAndPublicOnesPass() throws Exception {
        for (String a : List.of("127.0.0.1", "127.8.9.10", "::1", "10.1.2.3", "172.16.0.1", "172.31.255.255",
                "192.168.1.1", "169.254.169.254", "fe80::1", "fd00:ec2::254", "fc00::1", "0.0.0.0", "::",
                "100.64.0.1", "224.0.0.1", "::ffff:127.0.0.1", "::ffff:169.254.169.254", "0.1.2.3", "198.18.0.1",
                "255.255.255.255")) {
            assertThat(TargetGuard.refusal(InetAddress.getByName(a))).as(a).isNotNull();
        }
        for (String a : List.of("8.8.8.8", "1.1.1.1", "172.32.0.1", "100.128.0.1", "2606:4700:4700::1111",
                "::ffff:8.8.8.8", "93.184.216.34")) {
            assertThat(TargetGuard.refusal(InetAddress.getByName(a))).as(a).isNull();
        }
        assertThat(TargetGuard.check("localhost")).startsWith("localhost is ").contains("loopback");
        assertThat(TargetGuard.check("[::1]")).contains("loopback");
    }

    static final String SOURCE = "source: { bootstrap: \"127.0.0.1:9092\", topics: [t], group: g }\n";

    @Test
    void aPrivateTargetIsAConfigErrorWithItsPlaceUnlessAllowed() throws Exception {
        assertThatThrownBy(() -> DispatchConfigLoader.parse("g.yaml", SOURCE + """
                endpoints:
                  - { id: meta, url: "http://169.254.169.254/latest/meta-data" }
                  - id: local
                    url: http://localhost:8080/hook
                  - { id: ok, url: "https://8.8.8.8/hook" }
                """)).isInstanceOf(ConfigException.class).satisfies(e -> {
            String p = String.join("\n", ((ConfigException) e).problems().stream().map(Object::toString).toList());
            assertThat(p).contains("g.yaml:3:22: refused target: 169.254.169.254 is 169.254.169.254, link-local")
                    .contains("g.yaml:5:10: refused target: localhost is ").contains("allow_private: true")
                    .doesNotContain("8.8.8.8");
        });
        DispatchConfig perEndpoint = DispatchConfigLoader.parse("p.yaml", SOURCE + """
                endpoints:
                  - { id: local, url: "http://127.0.0.1:1/", allow_private: true }
                """);
        assertThat(perEndpoint.endpoint("local").allowPrivate()).isTrue();
        DispatchConfig byDefault = DispatchConfigLoader.parse("d.yaml", SOURCE + """
                defaults: { allow_private: true }
                endpoints:
                  - { id: local, url: "http://10.0.0.7/" }
                  - { id: public, url: "https://8.8.8.8/" }
                """);
        assertThat(byDefault.endpoint("local").allowPrivate()).isTrue();
        assertThatThrownBy(() -> DispatchConfigLoader.parse("o.yaml", SOURCE + """
                defaults: { allow_private: true }
                endpoints:
                  - { id: strict, url: "http://10.0.0.7/", allow_private: false }
                """)).hasMessageContaining("o.yaml:4:24: refused target: 10.0.0.7 is 10.0.0.7, private");
        assertThatThrownBy(() -> DispatchConfigLoader.parse("b.yaml", SOURCE + """
                defaults: { allow_private: maybe }
                endpoints:
                  - { id: x, url: "https://8.8.8.8/" }
                """)).hasMessageContaining("b.yaml:2:");
    }

    @Test
    void rateLimitsAndBursts() throws Exception {
        DispatchConfig c = DispatchConfigLoader.parse("r.yaml", SOURCE + """
                endpoints:
                  - { id: a, url: "https://8.8.8.8/", rate_limit: 40/s }
                  - { id: b, url: "https://8.8.8.8/", rate_limit: 120/min, burst: 7 }
                  - { id: c, url: "https://8.8.8.8/" }
                """);
        assertThat(c.endpoint("a").rateLimit()).isEqualTo(new EndpointConfig.RateLimit(40, 4));
        assertThat(c.endpoint("b").rateLimit()).isEqualTo(new EndpointConfig.RateLimit(2, 7));
        assertThat(c.endpoint("c").rateLimit()).isNull();
        assertThatThrownBy(() -> DispatchConfigLoader.parse("r.yaml", SOURCE + """
                endpoints:
                  - { id: a, url: "https://8.8.8.8/", rate_limit: fast }
                  - { id: b, url: "https://8.8.8.8/", rate_limit: 0/s }
                  - { id: c, url: "https://8.8.8.8/", burst: 3 }
                  - { id: d, url: "https://8.8.8.8/", rate_limit: 5/s, burst: 0 }
                """)).isInstanceOf(ConfigException.class).satisfies(e -> {
            String p = String.join("\n", ((ConfigException) e).problems().stream().map(Object::toString).toList());
            assertThat(p).contains("r.yaml:3:51: a rate limit is N/s, N/min or N/h")
                    .contains("r.yaml:4:51: a rate limit from 1/h to 100000/s")
                    .contains("r.yaml:5:46: 'burst' needs 'rate_limit'")
                    .contains("r.yaml:6:63: ");
        });
    }
}
