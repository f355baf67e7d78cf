package dev.weft.gateway.config;

import dev.weft.client.policy.RetryPolicy;
import dev.weft.config.ConfigException;
import dev.weft.gateway.plan.ProxyRoute;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@code proxy:} routes in the config: defaults, each key, matching, the backend URL, errors with their place. */
class ProxyRouteConfigTest {
    private static GatewayConfig load(String routes) throws ConfigException {
        return GatewayConfigLoader.parse("gw.yaml", "routes:\n" + routes);
    }

    @Test
    void defaults() throws ConfigException {
        ProxyRoute p = load("  - prefix: /b/\n    proxy: http://127.0.0.1:9001/v1/\n").proxies().getFirst();
        assertThat(p.prefix()).isEqualTo("/b/");
        assertThat(p.target()).isEqualTo(URI.create("http://127.0.0.1:9001/v1/"));
        assertThat(p.timeout()).isEqualTo(GatewayConfigLoader.DEFAULT_TIMEOUT);
        assertThat(p.maxBody()).isEqualTo(ProxyRoute.DEFAULT_MAX_BODY).isEqualTo(1024 * 1024);
        assertThat(p.xForwarded()).isTrue();
        assertThat(p.via()).isNull();
        assertThat(p.retry()).isNull();
        assertThat(p.hedge()).isNull();
        assertThat(p.id()).isEqualTo("* /b/");
        assertThat(p.location()).isEqualTo("gw.yaml:2:5");
    }

    @Test
    void eachKeyIsRead() throws ConfigException {
        ProxyRoute p = load("""
                  - prefix: /b
                    proxy: https://b.example.com
                    timeout: 750ms
                    max_body: 64KiB
                    retry: {attempts: 3, non_idempotent: true}
                    hedge: 100ms
                    x_forwarded: false
                    via: edge-1
                """).proxies().getFirst();
        assertThat(p.timeout()).isEqualTo(Duration.ofMillis(750));
        assertThat(p.maxBody()).isEqualTo(64 * 1024);
        assertThat(p.retry().attempts()).isEqualTo(3);
        assertThat(p.retry().allows("POST")).isTrue();
        assertThat(p.hedge().delay()).isEqualTo(Duration.ofMillis(100));
        assertThat(p.xForwarded()).isFalse();
        assertThat(p.via()).isEqualTo("edge-1");
        assertThat(RetryPolicy.DEFAULT.allows("POST")).as("POST is not retried unless asked").isFalse();
    }

    @Test
    void prefixesMatchWholeSegmentsAndTheRestIsAppended() throws ConfigException {
        GatewayConfig c = load("""
                  - prefix: /b/
                    proxy: http://127.0.0.1:9001/v1/
                  - prefix: /b/deep
                    proxy: http://127.0.0.1:9002
                  - get: /b/calls
                    calls: {a: {url: "http://127.0.0.1:9003/a"}}
                """);
        assertThat(c.routes()).hasSize(1);
        assertThat(c.proxyFor("/b/x").prefix()).isEqualTo("/b/");
        assertThat(c.proxyFor("/b/deep/x").prefix()).as("the longest prefix").isEqualTo("/b/deep");
        assertThat(c.proxyFor("/b/deeper").prefix()).as("whole segments only").isEqualTo("/b/");
        assertThat(c.proxyFor("/bx")).isNull();
        assertThat(c.proxyFor("/b")).isNull();
        ProxyRoute b = c.proxyFor("/b/x");
        assertThat(b.backendUri("/b/a/b%20c", "x=1&y=%2F")).isEqualTo(URI.create("http://127.0.0.1:9001/v1/a/b%20c?x=1&y=%2F"));
        assertThat(b.backendUri("/b/", "")).isEqualTo(URI.create("http://127.0.0.1:9001/v1/"));
        ProxyRoute deep = c.proxyFor("/b/deep/x");
        assertThat(deep.backendUri("/b/deep/x", "")).isEqualTo(URI.create("http://127.0.0.1:9002/x"));
        assertThat(deep.backendUri("/b/deep", "q")).isEqualTo(URI.create("http://127.0.0.1:9002/?q"));
    }

    @Test
    void theAdmissionNamesAProxyRouteAsStarPrefix() throws ConfigException {
        GatewayConfig c = GatewayConfigLoader.parse("gw.yaml", "admission: {routes: {\"* /b/\": 50}}\n"
                + "routes:\n  - prefix: /b/\n    proxy: http://127.0.0.1:9001/\n");
        assertThat(c.admission().routes()).containsEntry("* /b/", 50);
        assertThatThrownBy(() -> GatewayConfigLoader.parse("gw.yaml", "admission: {routes: {\"* /c/\": 50}}\n"
                + "routes:\n  - prefix: /b/\n    proxy: http://127.0.0.1:9001/\n")).hasMessageContaining("no route '* /c/'");
    }

    @Test
    void streamAnswersIsReadAndRefusesARetryOrHedgeBesideIt() throws ConfigException {
        assertThat(load("  - prefix: /b/\n    proxy: http://127.0.0.1:9001/\n").proxies().getFirst().streamAnswers())
                .isFalse();
        assertThat(load("  - prefix: /b/\n    proxy: http://127.0.0.1:9001/\n    stream_answers: true\n").proxies()
                .getFirst().streamAnswers()).isTrue();
        assertThatThrownBy(() -> load("  - prefix: /b/\n    proxy: http://127.0.0.1:9001/\n    stream_answers: true\n"
                + "    hedge: 100ms\n")).isInstanceOf(ConfigException.class).hasMessageContaining("gw.yaml:5:12")
                .hasMessageContaining("remove 'hedge:'");
        assertThatThrownBy(() -> load("  - prefix: /b/\n    proxy: http://127.0.0.1:9001/\n    stream_answers: maybe\n"))
                .isInstanceOf(ConfigException.class).hasMessageContaining("gw.yaml:4:21");
    }

    @Test
    void minBodyRateIsReadWithItsDefaultAndItsPlaceWhenBad() throws ConfigException {
        String route = "routes:\n  - prefix: /b/\n    proxy: http://127.0.0.1:9001/\n";
        assertThat(GatewayConfigLoader.parse("gw.yaml", route).limits().minBodyRate())
                .isEqualTo(dev.weft.server.ServerLimits.DEFAULT_MIN_BODY_RATE).isEqualTo(1024);
        assertThat(GatewayConfigLoader.parse("gw.yaml", "limits: {min_body_rate: 4KiB}\n" + route).limits()
                .minBodyRate()).isEqualTo(4096);
        assertThat(GatewayConfigLoader.parse("gw.yaml", "limits: {min_body_rate: 0}\n" + route).limits()
                .minBodyRate()).isZero();
        assertThatThrownBy(() -> GatewayConfigLoader.parse("gw.yaml", "limits: {min_body_rate: fast}\n" + route))
                .isInstanceOf(ConfigException.class).hasMessageContaining("gw.yaml:1:25");
    }

    @Test
    void badRoutesAreNamedWithTheirPlace() {
        assertThatThrownBy(() -> load("  - prefix: /b/\n    proxy: \"http://127.0.0.1:9001/v1/?x=1\"\n"))
                .isInstanceOf(ConfigException.class).hasMessageContaining("gw.yaml:3:12")
                .hasMessageContaining("no query");
        assertThatThrownBy(() -> load("  - prefix: /b/\n    proxy: ftp://h/\n"))
                .hasMessageContaining("gw.yaml:3:12").hasMessageContaining("http:// or https://");
        assertThatThrownBy(() -> load("  - prefix: b/\n    proxy: http://h/\n"))
                .hasMessageContaining("gw.yaml:2:13").hasMessageContaining("starting with '/'");
        assertThatThrownBy(() -> load("  - prefix: /b/\n"))
                .hasMessageContaining("gw.yaml:2:5").hasMessageContaining("needs 'prefix:' and 'proxy:'");
        assertThatThrownBy(() -> load("  - prefix: /b/\n    proxy: http://h/\n    max_body: lots\n"))
                .hasMessageContaining("gw.yaml:4:15");
        assertThatThrownBy(() -> load("  - prefix: /b/\n    proxy: http://h/\n    via: \"a b\"\n"))
                .hasMessageContaining("gw.yaml:4:10").hasMessageContaining("pseudonym");
        assertThatThrownBy(() -> load("  - prefix: /b/\n    proxy: http://h/\n    calls: {}\n"))
                .hasMessageContaining("gw.yaml:4:5").hasMessageContaining("calls");
        assertThatThrownBy(() -> load("  - prefix: /b/\n    proxy: http://h/\n  - prefix: /b/\n    proxy: http://i/\n"))
                .hasMessageContaining("declared twice");
    }
}
