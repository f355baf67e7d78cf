package dev.weft.dispatch;

import dev.weft.client.CallRequest;
import dev.weft.client.CallResult;
import dev.weft.client.Transport;
import dev.weft.server.HttpServer;
import dev.weft.server.ServerResponse;
import dev.weft.dispatch.TestKafka.Sent;
import dev.weft.dispatch.config.DispatchConfig;
import dev.weft.dispatch.config.DispatchConfigLoader;
import dev.weft.dispatch.engine.DispatchException;
import dev.weft.dispatch.engine.Dispatcher;
import dev.weft.dispatch.engine.DispatcherHealth;
import dev.weft.dispatch.engine.EndpointStatus;
import dev.weft.dispatch.engine.WebhookSigning;
import dev.weft.upstream.UpstreamConfig;
import dev.weft.upstream.UpstreamServer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The engine against a real broker and real HTTP endpoints on loopback (weft-upstream, or a recording server). */
class DispatchIT {
    static final String SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    static UpstreamServer sim;

    @BeforeAll
    static void start() throws Exception {
        TestKafka.bootstrap();
        sim = UpstreamServer.start(UpstreamConfig.local());
    }

    @AfterAll
    static void stop() {
        sim.close();
    }

    static Dispatcher dispatcher(String yaml) throws Exception {
        DispatchConfig cfg = DispatchConfigLoader.parse("test.yaml", yaml);
        return Dispatcher.start(cfg, TestKafka.bootstrap(), new PrometheusMeterRegistry(PrometheusConfig.DEFAULT),
                line -> System.out.println("dispatch: " + line));
    }

    static String source(String topic, String group) throws Exception {
        return sourceLine(topic, group) + "defaults: { allow_private: true }\n"; // the sim is on 127.0.0.1
    }

    static String sourceLine(String topic, String group) throws Exception {
        return "source: { bootstrap: \"" + TestKafka.bootstrap() + "\", topics: [" + topic + "], group: " + group + " }\n";
    }

    static EndpointStatus endpoint(Dispatcher d, String id) {
        return d.endpointStatus().stream().filter(e -> e.id().equals(id)).findFirst().orElseThrow();
    }

    /** Invariant 5 and matching: signed POSTs, stable ids, type header / JSON type / pointer, non-JSON records. */
    @Test
    void deliversSignedRequestsToEveryMatchingEndpoint() throws Exception {
        record Got(String id, String ts, String sig, byte[] body) {
        }
        ConcurrentLinkedQueue<Got> got = new ConcurrentLinkedQueue<>();
        try (HttpServer receiver = HttpServer.builder(r -> {
                    got.add(new Got(r.header("webhook-id"), r.header("webhook-timestamp"), r.header("webhook-signature"),
                            r.body()));
                    return ServerResponse.json(204, new byte[0]);
                }).listen(new InetSocketAddress("127.0.0.1", 0)).start()) {
            String topic = TestKafka.topic("match", 2);
            List<String> values = List.of(
                    "{\"type\":\"order.created\",\"country\":\"DE\"}",   // 0: signed (all), typed (JSON type), de
                    "{\"type\":\"order.paid\",\"country\":\"FR\"}",      // 1: signed, typed
                    "{\"type\":\"user.created\",\"country\":\"DE\"}",    // 2: signed, de
                    "not json at all",                                    // 3: signed only; not JSON for de
                    "also not json");                                     // 4: signed, typed (type header)
            List<String> types = new ArrayList<>(java.util.Collections.nCopies(5, (String) null));
            types.set(4, "order.created");
            List<Sent> sent = TestKafka.produce(topic, values, types);
            String yaml = sourceLine(topic, "g-match") + """
                    defaults: { timeout: 5s, retry: [100ms], allow_private: true }
                    endpoints:
                      - { id: signed, url: "%s/hook", secret: %s }
                      - id: typed
                        url: "%s"
                        match: { type: [order.created, order.paid] }
                      - id: de
                        url: "%s"
                        match: { pointer: /country, equals: DE }
                    """.formatted(receiver.url(), SECRET, sim.url("/typed"), sim.url("/de"));
            try (Dispatcher d = dispatcher(yaml)) {
                assertThat(TestKafka.await(Duration.ofSeconds(60), () -> got.size() >= 5
                        && sim.stats().requests("/typed") >= 3 && sim.stats().requests("/de") >= 2)).isTrue();
                assertThat(TestKafka.await(Duration.ofSeconds(10),
                        () -> endpoint(d, "de").notJson() == 2)).isTrue();
            }
            byte[] key = Base64.getDecoder().decode(SECRET.substring(6));
            List<String> expectedSigned = sent.stream().map(s -> WebhookSigning.webhookId(s.topic(), s.partition(),
                    s.offset(), "signed")).toList();
            assertThat(got.stream().map(Got::id).distinct().toList()).containsExactlyInAnyOrderElementsOf(expectedSigned);
            for (Got g : got) {
                assertThat(g.sig()).isEqualTo(hmacSignature(key, g.id() + "." + g.ts() + ".", g.body()));
                assertThat(Math.abs(Long.parseLong(g.ts()) - System.currentTimeMillis() / 1000)).isLessThan(300);
            }
            for (int i : List.of(0, 1, 4)) {
                assertThat(sim.stats().hasWebhookId(id(sent.get(i), "typed"))).as("typed #" + i).isTrue();
            }
            for (int i : List.of(0, 2)) {
                assertThat(sim.stats().hasWebhookId(id(sent.get(i), "de"))).as("de #" + i).isTrue();
            }
            assertThat(sim.stats().requests("/typed")).isEqualTo(3);
            assertThat(sim.stats().requests("/de")).isEqualTo(2);
            assertThat(TestKafka.committedSum("g-match", topic)).isEqualTo(5);
        }
    }

    /** Standard Webhooks' v1 signature computed here, not by the code under test (see WebhookSigningTest). */
    static String hmacSignature(byte[] key, String prefix, byte[] body) throws Exception {
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(key, "HmacSHA256"));
        mac.update(prefix.getBytes(StandardCharsets.UTF_8));
        return "v1," + Base64.getEncoder().encodeToString(mac.doFinal(body));
    }

    static String id(Sent s, String endpoint) {
        return WebhookSigning.webhookId(s.topic(), s.partition(), s.offset(), endpoint);
    }

    /**
     * Invariant 2: while one record's delivery is unanswered the commit stays at that record although every
     * record behind it is done; once it is answered the commit moves to the end.
     */
    @Test
    void commitsOnlyRecordsThatAreDone() throws Exception {
        String topic = TestKafka.topic("commit", 2);
        String held = "{\"n\":4}";
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger answered = new AtomicInteger();
        try (HttpServer receiver = HttpServer.builder(r -> {
                    String body = new String(r.body(), StandardCharsets.UTF_8);
                    if (held.equals(body) && !release.await(60, TimeUnit.SECONDS)) {
                        return ServerResponse.json(500, new byte[0]);
                    }
                    if (body.startsWith("{\"n\":")) {
                        answered.incrementAndGet(); // the records of partition 0, not the probe of partition 1
                    }
                    return ServerResponse.json(204, new byte[0]);
                }).listen(new InetSocketAddress("127.0.0.1", 0)).start()) {
            String yaml = source(topic, "g-commit") + """
                    endpoints:
                      - { id: a, url: "%s", max_in_flight: 10, timeout: 90s }
                    """.formatted(receiver.url());
            TopicPartition p0 = new TopicPartition(topic, 0);
            TopicPartition p1 = new TopicPartition(topic, 1);
            try (Dispatcher d = dispatcher(yaml)) {
                List<String> values = new ArrayList<>();
                for (int i = 0; i < 10; i++) {
                    values.add("{\"n\":" + i + "}");
                }
                TestKafka.produce(topic, 0, values);
                assertThat(TestKafka.await(Duration.ofSeconds(30), () -> answered.get() == 9
                        && d.health().outstandingRecords() == 1))
                        .as("nine records done, #4 held by the endpoint").isTrue();
                // a record on the other partition, done after the nine: once its commit is seen, a commit has
                // been made since the nine were done, and it covered partition 0 too
                TestKafka.produce(topic, 1, List.of("{\"probe\":1}"));
                assertThat(TestKafka.await(Duration.ofSeconds(30), () -> committed("g-commit", p1) == 1)).isTrue();
                assertThat(answered.get()).as("#4 is still unanswered").isEqualTo(9);
                assertThat(committed("g-commit", p0)).as("the commit stops at the record not done").isEqualTo(4);
                release.countDown();
                assertThat(TestKafka.await(Duration.ofSeconds(30), () -> committed("g-commit", p0) == 10)).isTrue();
                assertThat(answered.get()).isEqualTo(10);
            }
        } finally {
            release.countDown();
        }
    }

    /** The group's committed offset of {@code tp}, or -1 when none. */
    static long committed(String group, TopicPartition tp) {
        try {
            OffsetAndMetadata o = TestKafka.committed(group).get(tp);
            return o == null ? -1 : o.offset();
        } catch (Exception e) {
            return -1;
        }
    }

    /** Invariant 3 (failures): failed attempts are parked on retry topics, then dead-lettered with the reasons. */
    @Test
    void failedAttemptsAreRetriedThenDeadLettered() throws Exception {
        String topic = TestKafka.topic("fail", 2);
        String yaml = source(topic, "g-fail") + """
                endpoints:
                  - { id: broken, url: "%s", retry: [200ms, 300ms] }
                  - { id: fine, url: "%s" }
                """.formatted(sim.url("/broken?status=500"), sim.url("/fine"));
        try (Dispatcher d = dispatcher(yaml)) {
            List<Sent> sent = TestKafka.produce(topic, java.util.Collections.nCopies(20, "{\"n\":1}"), null);
            List<ConsumerRecord<byte[], byte[]>> dead = TestKafka.readAll("g-fail.dlq", 20);
            assertThat(dead).hasSize(20);
            for (ConsumerRecord<byte[], byte[]> r : dead) {
                assertThat(TestKafka.header(r, "weft-endpoint")).isEqualTo("broken");
                assertThat(TestKafka.header(r, "weft-status")).isEqualTo("500");
                assertThat(TestKafka.header(r, "weft-attempts")).isEqualTo("3");
                assertThat(TestKafka.header(r, "weft-reason")).isNotBlank();
                assertThat(new String(r.value(), StandardCharsets.UTF_8)).isEqualTo("{\"n\":1}");
            }
            assertThat(dead.stream().map(r -> TestKafka.header(r, "webhook-id")).distinct().toList())
                    .containsExactlyInAnyOrderElementsOf(sent.stream().map(s -> id(s, "broken")).toList());
            assertThat(sim.stats().answered("/broken", "500")).isEqualTo(60);
            assertThat(sim.stats().answered("/fine", "200")).isEqualTo(20);
            assertThat(TestKafka.awaitCommitted("g-fail", topic, 20, Duration.ofSeconds(20))).isTrue();
            assertThat(endpoint(d, "broken").parkedRetry()).isEqualTo(40);
        }
    }

    /**
     * A record on a retry topic whose weft-due cannot be read goes to the dead-letter topic with the reason;
     * it is not delivered as if it were due now. A well-formed one on the same topic is delivered when due.
     */
    @Test
    void aParkedRecordWithABadDueIsDeadLetteredNotDeliveredNow() throws Exception {
        String topic = TestKafka.topic("badpark", 1);
        String yaml = source(topic, "g-badpark") + """
                endpoints:
                  - { id: p, url: "%s", retry: [1h] }
                """.formatted(sim.url("/badpark"));
        try (Dispatcher d = dispatcher(yaml)) {
            String retry = "g-badpark.retry.3600000";
            try (KafkaProducer<byte[], byte[]> p = new KafkaProducer<>(Map.of(
                    ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, TestKafka.bootstrap(), ProducerConfig.ACKS_CONFIG, "all",
                    ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class,
                    ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class))) {
                for (String[] r : new String[][]{{"msg_bad", "soon"}, {"msg_good", "0"}}) {
                    ProducerRecord<byte[], byte[]> rec = new ProducerRecord<>(retry, 0, null, "{}".getBytes(StandardCharsets.UTF_8));
                    for (String[] h : new String[][]{{"weft-endpoint", "p"}, {"weft-attempts", "1"},
                            {"weft-reason", "failed"}, {"weft-status", "500"}, {"weft-origin", topic + "/0/0"},
                            {"webhook-id", r[0]}, {"weft-due", r[1]}}) {
                        rec.headers().add(h[0], h[1].getBytes(StandardCharsets.UTF_8));
                    }
                    p.send(rec).get(30, TimeUnit.SECONDS);
                }
            }
            List<ConsumerRecord<byte[], byte[]>> dead = TestKafka.readAll("g-badpark.dlq", 1);
            assertThat(dead).singleElement().satisfies(r -> {
                assertThat(TestKafka.header(r, "webhook-id")).isEqualTo("msg_bad");
                assertThat(TestKafka.header(r, "weft-endpoint")).isEqualTo("p");
                assertThat(TestKafka.header(r, "weft-reason"))
                        .isEqualTo("bad parking header weft-due: 'soon' is not a decimal number");
            });
            assertThat(TestKafka.await(Duration.ofSeconds(30), () -> sim.stats().hasWebhookId("msg_good"))).isTrue();
            assertThat(TestKafka.awaitCommitted("g-badpark", retry, 2, Duration.ofSeconds(30))).isTrue();
            assertThat(sim.stats().hasWebhookId("msg_bad")).isFalse();
            assertThat(sim.stats().requests("/badpark")).isEqualTo(1);
        }
    }

    /** Invariant 3 (isolation): a hanging endpoint fills only its own lane; the others get every record. */
    @Test
    void aDeadEndpointHoldsUpOnlyItsOwnLane() throws Exception {
        String topic = TestKafka.topic("isolate", 3);
        String yaml = source(topic, "g-iso") + """
                endpoints:
                  - { id: hangs, url: "%s", timeout: 2s, max_in_flight: 2, queue: 3, retry: [1h] }
                  - { id: one, url: "%s" }
                  - { id: two, url: "%s" }
                """.formatted(sim.url("/hangs?fault=hang&hang=60s"), sim.url("/one?latency=5ms"), sim.url("/two"));
        try (Dispatcher d = dispatcher(yaml)) {
            List<Sent> sent = TestKafka.produce(topic, java.util.Collections.nCopies(300, "{}"), null);
            assertThat(TestKafka.await(Duration.ofSeconds(60), () -> sim.stats().requests("/one") >= 300
                    && sim.stats().requests("/two") >= 300)).isTrue();
            for (Sent s : sent) {
                assertThat(sim.stats().hasWebhookId(id(s, "one")) && sim.stats().hasWebhookId(id(s, "two"))).isTrue();
            }
            // the source partitions commit to the end: what the dead lane could not take is parked on its wait
            // topic at once; the few it took are parked on the retry topic when their attempt times out (2 s)
            assertThat(TestKafka.awaitCommitted("g-iso", topic, 300, Duration.ofSeconds(30))).isTrue();
            EndpointStatus hangs = endpoint(d, "hangs");
            assertThat(hangs.delivered()).isZero();
            assertThat(hangs.inFlight()).as("its lane is still busy").isEqualTo(2);
            assertThat(hangs.parkedRoom()).isPositive();
            assertThat(hangs.parkedRetry()).isPositive();
        }
    }

    /** Invariant 4: a partition with max_outstanding records not done is paused, never buffered without end. */
    @Test
    void pausesAPartitionAtItsOutstandingLimit() throws Exception {
        String topic = TestKafka.topic("bounded", 1);
        String yaml = "source: { bootstrap: \"" + TestKafka.bootstrap() + "\", topics: [" + topic
                + "], group: g-bounded, max_outstanding: 20 }\n" + """
                defaults: { allow_private: true }
                endpoints:
                  - { id: slow, url: "%s", max_in_flight: 200, queue: 200 }
                """.formatted(sim.url("/bounded?latency=300ms"));
        try (Dispatcher d = dispatcher(yaml)) {
            TestKafka.produce(topic, java.util.Collections.nCopies(200, "{}"), null);
            AtomicInteger maxOutstanding = new AtomicInteger();
            AtomicInteger sawPaused = new AtomicInteger();
            assertThat(TestKafka.await(Duration.ofSeconds(60), () -> {
                DispatcherHealth h = d.health();
                maxOutstanding.accumulateAndGet(h.outstandingRecords(), Math::max);
                sawPaused.accumulateAndGet(h.pausedPartitions(), Math::max);
                return sim.stats().answered("/bounded", "200") >= 200;
            })).isTrue();
            assertThat(maxOutstanding.get()).isLessThanOrEqualTo(20).isPositive();
            assertThat(sawPaused.get()).isEqualTo(1);
            assertThat(sim.stats().requests("/bounded")).isEqualTo(200);
        }
    }

    /** 410 disables the endpoint (shown in status, its deliveries dead-lettered); 429 with Retry-After is honoured. */
    @Test
    void goneDisablesAndRetryAfterIsHonoured() throws Exception {
        String topic = TestKafka.topic("gone", 1);
        String yaml = source(topic, "g-gone") + """
                endpoints:
                  - { id: gone, url: "%s" }
                  - { id: busy, url: "%s", retry: [10ms, 10ms] }
                """.formatted(sim.url("/gone?status=410"), sim.url("/busy?status=seq:429,200&retry_after=1"));
        try (Dispatcher d = dispatcher(yaml)) {
            long t0 = System.nanoTime();
            TestKafka.produce(topic, List.of("{}"), null);
            assertThat(TestKafka.await(Duration.ofSeconds(30), () -> sim.stats().answered("/busy", "200") == 1)).isTrue();
            long elapsed = System.nanoTime() - t0;
            assertThat(sim.stats().answered("/busy", "429")).isEqualTo(1);
            assertThat(elapsed).as("the retry waited for Retry-After: 1").isGreaterThanOrEqualTo(1_000_000_000L);
            assertThat(endpoint(d, "gone").state()).isEqualTo(EndpointStatus.State.DISABLED);
            TestKafka.produce(topic, List.of("{}", "{}"), null);
            List<ConsumerRecord<byte[], byte[]>> dead = TestKafka.readAll("g-gone.dlq", 3);
            assertThat(dead).hasSize(3).allSatisfy(r -> assertThat(TestKafka.header(r, "weft-endpoint")).isEqualTo("gone"));
            assertThat(sim.stats().requests("/gone")).as("a disabled endpoint gets no more requests").isEqualTo(1);
        }
    }

    @Test
    void theStatusServerAnswersHealthMetricsAndEndpoints() throws Exception {
        String topic = TestKafka.topic("status", 1);
        String yaml = source(topic, "g-status") + "endpoints:\n  - { id: s, url: \"" + sim.url("/status") + "\" }\n";
        DispatchConfig cfg = DispatchConfigLoader.parse("status.yaml", yaml);
        try (DispatchService s = DispatchService.start(cfg, new InetSocketAddress("127.0.0.1", 0), null, l -> { });
             Transport t = Transport.builder().build()) {
            TestKafka.produce(topic, List.of("{}"), null);
            assertThat(TestKafka.await(Duration.ofSeconds(30), () -> sim.stats().requests("/status") == 1)).isTrue();
            CallResult health = t.call(CallRequest.get(s.statusUrl() + "/-/health"), Duration.ofSeconds(5));
            assertThat(health.status()).isEqualTo(200);
            assertThat(health.bodyText()).contains("\"status\":\"up\"");
            CallResult metrics = t.call(CallRequest.get(s.statusUrl() + "/-/metrics"), Duration.ofSeconds(5));
            assertThat(metrics.bodyText()).contains("weft_dispatch_delivered_total{endpoint=\"s\"} 1.0")
                    .contains("weft_dispatch_consumer_lag{");
            // and the JVM's meters after the dispatcher's, each sample on a line of its own
            assertThat(metrics.bodyText()).containsPattern("(?m)^jvm_memory_used_bytes\\{")
                    .containsPattern("(?m)^jvm_gc_overhead ")
                    .containsPattern("(?m)^process_files_open_files ");
            CallResult eps = t.call(CallRequest.get(s.statusUrl() + "/-/endpoints"), Duration.ofSeconds(5));
            assertThat(eps.bodyText()).contains("\"id\" : \"s\"").contains("\"state\" : \"active\"");
            CallResult unknown = t.call(CallRequest.get(s.statusUrl() + "/-/nope"), Duration.ofSeconds(5));
            assertThat(unknown.status()).isEqualTo(404);
            assertThat(unknown.bodyText()).contains("/-/endpoints");
        }
    }

    @Test
    void anUnknownTopicOrAnUnreachableBrokerStopsTheStartWithAClearError() throws Exception {
        String yaml = source("no-such-topic", "g-x") + "endpoints:\n  - { id: s, url: \"" + sim.url("/x") + "\" }\n";
        assertThatThrownBy(() -> dispatcher(yaml)).isInstanceOf(DispatchException.class)
                .hasMessageContaining("no-such-topic not found on " + TestKafka.bootstrap());
        String dead = "source: { bootstrap: \"127.0.0.1:1\", topics: [t], group: g }\n"
                + "defaults: { allow_private: true }\nendpoints:\n  - { id: s, url: \"" + sim.url("/x") + "\" }\n";
        DispatchConfig cfg = DispatchConfigLoader.parse("dead.yaml", dead);
        assertThatThrownBy(() -> Dispatcher.start(cfg, "127.0.0.1:1", new PrometheusMeterRegistry(PrometheusConfig.DEFAULT),
                l -> { })).isInstanceOf(DispatchException.class).hasMessageContaining("cannot reach Kafka at 127.0.0.1:1");
        assertThat(sim.stats().requests("/x")).isZero();
    }
}
