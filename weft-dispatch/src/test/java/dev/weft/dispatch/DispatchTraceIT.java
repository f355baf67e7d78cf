package dev.weft.dispatch;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.weft.dispatch.config.DispatchConfig;
import dev.weft.dispatch.config.DispatchConfigLoader;
import dev.weft.dispatch.engine.Dispatcher;
import dev.weft.server.HttpServer;
import dev.weft.server.ServerResponse;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every delivery attempt carries a W3C traceparent (the record's trace, a new span per attempt) and writes one
 * access-log line: a real broker, a recording endpoint that fails each delivery's first attempt.
 */
class DispatchTraceIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
    private static final String OWN = "00-" + TRACE + "-00f067aa0ba902b7-01";

    @TempDir
    Path dir;

    @Test
    void attemptsCarryTheRecordsTraceWithANewSpanEachAndAreLogged() throws Exception {
        record Got(String body, String webhookId, String traceparent, String tracestate) {
        }
        ConcurrentLinkedQueue<Got> got = new ConcurrentLinkedQueue<>();
        Set<String> failedOnce = ConcurrentHashMap.newKeySet();
        try (HttpServer receiver = HttpServer.builder(r -> {
                    String id = r.header("webhook-id");
                    got.add(new Got(new String(r.body(), StandardCharsets.UTF_8), id, r.header("traceparent"),
                            r.header("tracestate")));
                    return failedOnce.add(id) ? ServerResponse.json(503, "{}") : ServerResponse.json(204, new byte[0]);
                }).listen(new InetSocketAddress("127.0.0.1", 0)).start()) {
            String topic = TestKafka.topic("trace", 1);
            try (KafkaProducer<byte[], byte[]> p = new KafkaProducer<>(Map.of(
                    ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, TestKafka.bootstrap(), ProducerConfig.ACKS_CONFIG, "all",
                    ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class,
                    ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class))) {
                ProducerRecord<byte[], byte[]> own = new ProducerRecord<>(topic, 0, null, bytes("{\"n\":\"own\"}"));
                own.headers().add(new RecordHeader("traceparent", bytes(OWN)));
                own.headers().add(new RecordHeader("tracestate", bytes("congo=t61rcWkgMzE")));
                ProducerRecord<byte[], byte[]> bad = new ProducerRecord<>(topic, 0, null, bytes("{\"n\":\"bad\"}"));
                bad.headers().add(new RecordHeader("traceparent", bytes("00-" + TRACE + "-00f067aa0ba902b7")));
                ProducerRecord<byte[], byte[]> none = new ProducerRecord<>(topic, 0, null, bytes("{\"n\":\"none\"}"));
                for (var r : List.of(own, bad, none)) {
                    p.send(r).get(30, TimeUnit.SECONDS);
                }
            }
            Path log = dir.resolve("attempts.log");
            String yaml = DispatchIT.sourceLine(topic, "g-trace") + """
                    access_log: %s
                    defaults: { timeout: 5s, retry: [100ms], allow_private: true }
                    endpoints:
                      - { id: hook, url: "%s/hook" }
                    """.formatted(log, receiver.url());
            DispatchConfig cfg = DispatchConfigLoader.parse("test.yaml", yaml);
            try (Dispatcher d = Dispatcher.start(cfg, TestKafka.bootstrap(),
                    new PrometheusMeterRegistry(PrometheusConfig.DEFAULT), line -> { })) {
                assertThat(TestKafka.awaitCommitted("g-trace", topic, 3, Duration.ofSeconds(90))).isTrue();
            }
            assertThat(got).hasSize(6); // two attempts of each record
            for (String n : List.of("own", "bad", "none")) {
                List<Got> attempts = got.stream().filter(g -> g.body().contains("\"" + n + "\"")).toList();
                assertThat(attempts).as(n).hasSize(2);
                List<String[]> tp = attempts.stream().map(g -> g.traceparent().split("-")).toList();
                for (String[] t : tp) {
                    assertThat(t).hasSize(4);
                    assertThat(t[1]).matches("[0-9a-f]{32}");
                    assertThat(t[2]).matches("[0-9a-f]{16}").isNotEqualTo("00f067aa0ba902b7");
                }
                assertThat(tp.get(0)[1]).as(n + ": one trace for every attempt of a record").isEqualTo(tp.get(1)[1]);
                assertThat(tp.get(0)[2]).as(n + ": a new span per attempt").isNotEqualTo(tp.get(1)[2]);
                if (n.equals("own")) {
                    assertThat(tp.get(0)[1]).isEqualTo(TRACE);
                    assertThat(tp.get(0)[3]).isEqualTo("01");
                    assertThat(attempts.getFirst().tracestate()).isEqualTo("congo=t61rcWkgMzE");
                } else {
                    assertThat(tp.get(0)[1]).as(n + ": a trace of its own").isNotEqualTo(TRACE);
                }
            }
            List<JsonNode> lines = new ArrayList<>();
            for (String l : Files.readAllLines(log)) {
                lines.add(JSON.readTree(l));
            }
            assertThat(lines).hasSize(6);
            assertThat(lines.stream().filter(l -> l.get("status").asInt() == 503)).hasSize(3)
                    .allMatch(l -> l.get("outcome").asText().equals("status-503") && l.get("attempt").asInt() == 1);
            assertThat(lines.stream().filter(l -> l.get("status").asInt() == 204)).hasSize(3)
                    .allMatch(l -> l.get("outcome").asText().equals("ok") && l.get("attempt").asInt() == 2);
            for (JsonNode l : lines) {
                assertThat(l.get("endpoint").asText()).isEqualTo("hook");
                assertThat(got.stream().map(Got::webhookId)).contains(l.get("webhook_id").asText());
                assertThat(l.get("duration_ms").isNumber()).isTrue();
                assertThat(l.get("trace_id").asText()).matches("[0-9a-f]{32}");
            }
        }
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
