package dev.weft.dispatch;

import dev.weft.devtools.KafkaBroker;
import dev.weft.dispatch.config.DispatchConfigLoader;
import dev.weft.dispatch.engine.Dispatcher;
import dev.weft.dispatch.engine.KafkaAdmin;
import dev.weft.dispatch.status.StatusServer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The status listener as an orchestrator and an outsider see it: with an admin token every path but liveness and
 * readiness needs it, and those two show no URL or address; liveness stays 200 while the broker is away, readiness
 * turns 503 with the reason after broker_unready_after.
 */
class ReadinessIT {
    static HttpResponse<String> get(String url, String token) throws Exception {
        HttpRequest.Builder r = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(30)).GET();
        if (token != null) {
            r.header("Authorization", "Bearer " + token);
        }
        return EndpointStateIT.HTTP.send(r.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** Waits up to 30 s until {@code url} answers {@code status}. */
    static boolean awaitStatus(String url, int status) throws InterruptedException {
        return TestKafka.await(Duration.ofSeconds(30), () -> {
            try {
                return get(url, null).statusCode() == status;
            } catch (Exception e) {
                return false;
            }
        });
    }

    @Test
    void withATokenEveryPathButLivenessAndReadinessNeedsItAndThoseShowNoUrl() throws Exception {
        String topic = TestKafka.topic("token", 1);
        String secretUrl = "http://127.0.0.1:1/hook?token=customer-secret";
        String yaml = DispatchIT.source(topic, "g-token") + "endpoints:\n  - { id: a, url: \"" + secretUrl + "\" }\n";
        try (Dispatcher d = EndpointStateIT.dispatcher(yaml);
             StatusServer s = StatusServer.start(new InetSocketAddress("127.0.0.1", 0), d,
                     new PrometheusMeterRegistry(PrometheusConfig.DEFAULT), "s3cret-token")) {
            for (String path : List.of("/-/endpoints", "/-/threads?for=10ms", "/-/metrics", "/-/nope")) {
                HttpResponse<String> none = get(s.url() + path, null);
                assertThat(none.statusCode()).as(path).isEqualTo(401);
                assertThat(none.body()).as(path).doesNotContain("customer-secret");
                assertThat(get(s.url() + path, "wrong").statusCode()).as(path).isEqualTo(401);
            }
            assertThat(get(s.url() + "/-/endpoints", "s3cret-token").body()).contains("customer-secret");
            assertThat(get(s.url() + "/-/threads?for=10ms", "s3cret-token").statusCode()).isEqualTo(200);
            HttpResponse<String> lower = EndpointStateIT.HTTP.send(HttpRequest.newBuilder(URI.create(s.url() + "/-/endpoints"))
                    .header("Authorization", "bearer s3cret-token").GET().build(), HttpResponse.BodyHandlers.ofString());
            assertThat(lower.statusCode()).as("the scheme is case-insensitive (RFC 7235)").isEqualTo(200);
            assertThat(awaitStatus(s.url() + "/-/ready", 200)).isTrue();
            for (String path : List.of("/-/health", "/-/ready")) {
                HttpResponse<String> open = get(s.url() + path, null);
                assertThat(open.statusCode()).as(path).isEqualTo(200);
                assertThat(open.body()).as(path).doesNotContain("http").doesNotContain("customer-secret")
                        .doesNotContain(TestKafka.bootstrap());
            }
        }
    }

    /** The broker stops: /-/health stays 200 (a restart would not help), /-/ready answers 503 with the reason. */
    @Test
    void aBrokerAwayPastBrokerUnreadyAfterMakesItUnreadyNotDead(@TempDir Path dir) throws Exception {
        KafkaBroker broker = KafkaBroker.start(dir, new InetSocketAddress("127.0.0.1", 0));
        try {
            KafkaAdmin.createTopics(broker.bootstrap(), Map.of("events", 1));
            String yaml = "source: { bootstrap: \"" + broker.bootstrap() + "\", topics: [events], group: g-ready }\n"
                    + "broker_unready_after: 5s\n"
                    + "endpoints:\n  - { id: a, url: \"http://127.0.0.1:1/a\", allow_private: true }\n";
            try (Dispatcher d = Dispatcher.start(DispatchConfigLoader.parse("ready.yaml", yaml), broker.bootstrap(),
                    new PrometheusMeterRegistry(PrometheusConfig.DEFAULT), l -> System.out.println("dispatch: " + l));
                 StatusServer s = StatusServer.start(new InetSocketAddress("127.0.0.1", 0), d,
                         new PrometheusMeterRegistry(PrometheusConfig.DEFAULT), null)) {
                assertThat(get(s.url() + "/-/ready", null).body()).isEqualTo("{\"ready\":true}");
                broker.close();
                assertThat(awaitStatus(s.url() + "/-/ready", 503)).isTrue();
                HttpResponse<String> ready = get(s.url() + "/-/ready", null);
                java.util.regex.Matcher m = java.util.regex.Pattern.compile(
                        "\\{\"ready\":false,\"reason\":\"Kafka has not answered for (\\d+) s \\(broker_unready_after: 5s\\)\"}")
                        .matcher(ready.body());
                assertThat(m.matches()).as(ready.body()).isTrue();
                assertThat(Long.parseLong(m.group(1))).as("unready only past broker_unready_after").isGreaterThanOrEqualTo(5);
                HttpResponse<String> health = get(s.url() + "/-/health", null);
                assertThat(health.statusCode()).isEqualTo(200);
                assertThat(health.body()).contains("\"status\":\"up\"");
            }
        } finally {
            broker.close();
        }
    }
}
