package dev.weft.dispatch;

import dev.weft.devtools.ChildProcess;
import dev.weft.dispatch.TestKafka.Sent;
import dev.weft.dispatch.engine.WebhookSigning;
import dev.weft.upstream.UpstreamConfig;
import dev.weft.upstream.UpstreamServer;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Invariant 1: kill -9 the dispatcher process mid-stream, start it again, and every (record, endpoint)
 * webhook-id arrives at least once (weft-upstream counts the distinct ids it received).
 */
class KillNineIT {
    static final int RECORDS = 3_000;
    static final List<String> ENDPOINTS = List.of("a", "b", "c");

    @Test
    void everyRecordReachesEveryEndpointAfterAKillAndARestart() throws Exception {
        String topic = TestKafka.topic("kill", 3);
        try (UpstreamServer sim = UpstreamServer.start(UpstreamConfig.local())) {
            Path cfg = Files.createTempFile("kill9", ".yaml");
            StringBuilder yaml = new StringBuilder("source: { bootstrap: \"" + TestKafka.bootstrap() + "\", topics: ["
                    + topic + "], group: g-kill }\ndefaults: { allow_private: true }\nendpoints:\n");
            for (String e : ENDPOINTS) {
                yaml.append("  - { id: ").append(e).append(", url: \"").append(sim.url("/" + e + "?latency=uniform:1ms..40ms"))
                        .append("\", max_in_flight: 50 }\n");
            }
            Files.writeString(cfg, yaml);
            List<String> values = new ArrayList<>();
            for (int i = 0; i < RECORDS; i++) {
                values.add("{\"n\":" + i + "}");
            }
            List<Sent> sent;
            long before;
            try (ChildProcess first = dispatcher(cfg)) {
                sent = TestKafka.produce(topic, values, null);
                int total = RECORDS * ENDPOINTS.size();
                assertThat(TestKafka.await(Duration.ofSeconds(60), () -> sim.stats().distinctWebhookIds() >= total / 3))
                        .isTrue();
                first.kill(); // SIGKILL: no drain, no last commit
                before = sim.stats().distinctWebhookIds();
                System.out.println("kill -9 after " + before + " of " + total + " distinct webhook-ids, "
                        + sim.stats().requests() + " requests");
                assertThat(before).as("killed mid-stream").isLessThan(total);
            }
            try (ChildProcess second = dispatcher(cfg)) {
                int total = RECORDS * ENDPOINTS.size();
                assertThat(TestKafka.await(Duration.ofSeconds(120), () -> sim.stats().distinctWebhookIds() >= total))
                        .as("every (record, endpoint) delivered after the restart").isTrue();
                for (Sent s : sent) {
                    for (String e : ENDPOINTS) {
                        assertThat(sim.stats().hasWebhookId(WebhookSigning.webhookId(s.topic(), s.partition(), s.offset(), e)))
                                .isTrue();
                    }
                }
                long requests = sim.stats().requests();
                System.out.println("after the restart: " + sim.stats().distinctWebhookIds() + " distinct ids in "
                        + requests + " requests (" + (requests - total) + " duplicates)");
                assertThat(TestKafka.awaitCommitted("g-kill", topic, RECORDS, Duration.ofSeconds(20))).isTrue();
            }
        }
    }

    private static ChildProcess dispatcher(Path cfg) throws Exception {
        return ChildProcess.startJvm(List.of("-Xmx512m", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn"),
                DispatchService.class, List.of(cfg.toString(), "127.0.0.1:0"));
    }

}
