package dev.weft.dispatch;

import dev.weft.config.ConfigException;
import dev.weft.dispatch.config.DispatchConfig;
import dev.weft.dispatch.config.DispatchConfigLoader;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class DispatchConfigTest {
    @Test
    void theExampleOfTheIssueReads() throws Exception {
        DispatchConfig c = DispatchConfigLoader.parse("x.yaml", """
                source: { bootstrap: "127.0.0.1:9092", topics: [events], group: weft-push }
                defaults: { timeout: 5s, max_in_flight: 1000, retry: [5s, 5m, 30m, 2h, 5h, 10h, 10h], allow_private: true }
                endpoints:
                  - id: acme
                    url: https://hooks.acme.example/in
                    match: { type: [order.created, order.paid] }
                    secret: whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw
                    timeout: 2s
                    max_in_flight: 200
                  - id: de-only
                    url: http://127.0.0.1:9002/hook
                    match: { pointer: /country, equals: DE }
                """);
        assertThat(c.topics()).containsExactly("events");
        assertThat(c.endpoints()).hasSize(2);
        assertThat(c.endpoint("acme").secret()).hasSize(24);
        assertThat(c.endpoint("acme").maxInFlight()).isEqualTo(200);
        assertThat(c.endpoint("acme").maxAttempts()).isEqualTo(8);
        assertThat(c.endpoint("de-only").maxInFlight()).isEqualTo(1000);
        assertThat(c.endpoint("de-only").timeout()).isEqualTo(Duration.ofSeconds(5));
        assertThat(c.parkingTopics()).contains("weft-push.retry.5000", "weft-push.retry.36000000",
                "weft-push.wait.acme", "weft-push.wait.de-only").hasSize(6 + 2);
        assertThat(c.deadLetterTopic()).isEqualTo("weft-push.dlq");
    }

    @Test
    void everyProblemIsReportedWithFileLineAndColumn() {
        assertThatThrownBy(() -> DispatchConfigLoader.parse("bad.yaml", """
                source: { topics: [], group: "a b" }
                endpoints:
                  - id: x
                    url: ftp://nowhere
                  - id: y
                    url: http://127.0.0.1:1/
                    secret: MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw
                    match: { pointer: /country }
                    colour: red
                """)).isInstanceOf(ConfigException.class).satisfies(e -> {
            List<String> p = ((ConfigException) e).problems().stream().map(Object::toString).toList();
            assertThat(String.join("\n", p)).contains("bad.yaml:1:19: give at least one topic")
                    .contains("bad.yaml:1:30: a group name")
                    .contains("bad.yaml:4:10: expected an absolute http:// or https:// URL")
                    .contains("bad.yaml:7:13: a secret is 'whsec_'")
                    .contains("bad.yaml:8:12: 'pointer' needs 'equals'")
                    .contains("bad.yaml:9:5: ");
        });
    }

    @Test
    void aMissingFileIsNamed() {
        assertThatThrownBy(() -> DispatchConfigLoader.load(Path.of("no/such.yaml")))
                .hasMessageContaining("no/such.yaml").hasMessageContaining("no such file");
    }

    @Test
    void adminTokenEnvNamesAnEnvironmentVariable() throws Exception {
        String base = "source: { topics: [events], group: g }\nendpoints: [{ id: a, url: \"http://127.0.0.1:1/\", allow_private: true }]\n";
        assertThat(DispatchConfigLoader.parse("x.yaml", base).adminTokenEnv()).isNull();
        DispatchConfig c = DispatchConfigLoader.parse("x.yaml", base + "admin_token_env: WEFT_TOKEN\n");
        assertThat(c.adminTokenEnv()).isEqualTo("WEFT_TOKEN");
        assertThat(c.stateTopic()).isEqualTo("g.state");
        assertThatThrownBy(() -> DispatchConfigLoader.parse("x.yaml", base + "admin_token_env: \"not a name\"\n"))
                .isInstanceOf(ConfigException.class).hasMessageContaining("x.yaml:3:")
                .hasMessageContaining("environment variable");
    }

    @Test
    void brokerUnreadyAfterIsADurationFromFiveSecondsToTenMinutes() throws Exception {
        String base = "source: { topics: [events], group: g }\nendpoints: [{ id: a, url: \"http://127.0.0.1:1/\", allow_private: true }]\n";
        assertThat(DispatchConfigLoader.parse("x.yaml", base).brokerUnreadyAfter()).isEqualTo(Duration.ofSeconds(10));
        assertThat(DispatchConfigLoader.parse("x.yaml", base + "broker_unready_after: 30s\n").brokerUnreadyAfter())
                .isEqualTo(Duration.ofSeconds(30));
        assertThatThrownBy(() -> DispatchConfigLoader.parse("x.yaml", base + "broker_unready_after: 4s\n"))
                .as("a 1 s probe that may take 3 s must not flap readiness").isInstanceOf(ConfigException.class)
                .hasMessageContaining("x.yaml:3:");
        assertThatThrownBy(() -> DispatchConfigLoader.parse("x.yaml", base + "broker_unready_after: 0s\n"))
                .isInstanceOf(ConfigException.class).hasMessageContaining("x.yaml:3:");
        assertThatThrownBy(() -> DispatchConfigLoader.parse("x.yaml", base + "broker_unready_after: 11m\n"))
                .isInstanceOf(ConfigException.class).hasMessageContaining("x.yaml:3:");
    }
}
