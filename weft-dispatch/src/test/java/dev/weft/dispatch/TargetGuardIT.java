package dev.weft.dispatch;

import dev.weft.dispatch.config.DispatchConfig;
import dev.weft.dispatch.config.DispatchConfigLoader;
import dev.weft.dispatch.config.EndpointConfig;
import dev.weft.dispatch.engine.Dispatcher;
import dev.weft.upstream.UpstreamConfig;
import dev.weft.upstream.UpstreamServer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The target guard at delivery time, on the real broker: an endpoint whose host resolves to a private
 * address when an attempt is made (as after a DNS change since the config was read) gets no request; the
 * delivery fails as {@code target-refused} and, after its last attempt, is dead-lettered. The same target
 * with {@code allow_private: true} gets every record.
 */
class TargetGuardIT {
    @Test
    void aTargetThatResolvesPrivatelyAtDeliveryIsRefusedUnlessAllowed() throws Exception {
        String topic = TestKafka.topic("guard", 1);
        try (UpstreamServer sim = UpstreamServer.start(UpstreamConfig.local())) {
            DispatchConfig read = DispatchConfigLoader.parse("guard.yaml", "source: { bootstrap: \""
                    + TestKafka.bootstrap() + "\", topics: [" + topic + "], group: g-guard }\n"
                    + "defaults: { allow_private: true, retry: [] }\nendpoints:\n"
                    + "  - { id: refused, url: \"" + sim.url("/refused") + "\" }\n"
                    + "  - { id: allowed, url: \"" + sim.url("/allowed") + "\" }\n");
            // As if 'refused' named a public host when the config was read and its DNS now says 127.0.0.1.
            List<EndpointConfig> eps = new ArrayList<>();
            for (EndpointConfig e : read.endpoints()) {
                eps.add(e.id().equals("refused") ? new EndpointConfig(e.id(), e.url(), e.match(), e.secret(), e.timeout(),
                        e.maxInFlight(), e.queue(), e.retry(), false, e.rateLimit()) : e);
            }
            DispatchConfig cfg = new DispatchConfig(read.source(), read.bootstrap(), read.topics(), read.group(),
                    read.typePointer(), read.maxOutstanding(), read.listen(), read.drainTimeout(), List.copyOf(eps));
            try (Dispatcher d = Dispatcher.start(cfg, TestKafka.bootstrap(),
                    new PrometheusMeterRegistry(PrometheusConfig.DEFAULT), l -> System.out.println("dispatch: " + l))) {
                TestKafka.produce(topic, List.of("{\"n\":1}", "{\"n\":2}", "{\"n\":3}"), null);
                List<ConsumerRecord<byte[], byte[]>> dead = TestKafka.readAll(cfg.deadLetterTopic(), 3);
                assertThat(dead).hasSize(3);
                for (ConsumerRecord<byte[], byte[]> r : dead) {
                    assertThat(TestKafka.header(r, "weft-endpoint")).isEqualTo("refused");
                    assertThat(TestKafka.header(r, "weft-status")).isEqualTo("target-refused");
                    assertThat(TestKafka.header(r, "weft-reason")).startsWith("refused target: 127.0.0.1 is 127.0.0.1, loopback");
                }
                assertThat(TestKafka.await(Duration.ofSeconds(30), () -> sim.stats().requests("/allowed") == 3)).isTrue();
                assertThat(sim.stats().requests("/refused")).as("no request reached the refused target").isZero();
                assertThat(d.endpointStatus().getFirst().lastError()).contains("target-refused");
                assertThat(TestKafka.awaitCommitted("g-guard", topic, 3, Duration.ofSeconds(20))).isTrue();
            }
        }
    }
}
