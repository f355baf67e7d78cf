package dev.weft.dispatch;

import dev.weft.dispatch.config.DispatchConfig;
import dev.weft.dispatch.config.DispatchConfigLoader;
import dev.weft.dispatch.engine.DispatcherHealth;
import dev.weft.dispatch.engine.Dispatcher;
import dev.weft.dispatch.engine.EndpointStatus;
import dev.weft.dispatch.engine.KafkaAdmin;
import dev.weft.dispatch.engine.Replay;
import dev.weft.server.HttpServer;
import dev.weft.server.ServerResponse;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The parking topics and the at-least-once path on the real broker: retention that outlives the parked records,
 * a position deleted under the consumer, produce errors Kafka will never accept, aborted transactions, crafted
 * parking headers.
 */
class ParkingIT {
    /** A loopback endpoint answering {@code status}, recording the bodies it got. */
    record Endpoint(HttpServer server, ConcurrentLinkedQueue<String> bodies) implements AutoCloseable {
        static Endpoint start(int status) throws Exception {
            ConcurrentLinkedQueue<String> bodies = new ConcurrentLinkedQueue<>();
            HttpServer s = HttpServer.builder(r -> {
                        bodies.add(new String(r.body(), StandardCharsets.UTF_8));
                        return ServerResponse.json(status, new byte[0]);
                    }).listen(new InetSocketAddress("127.0.0.1", 0)).start();
            return new Endpoint(s, bodies);
        }

        String url() {
            return server.url();
        }

        @Override
        public void close() {
            server.close();
        }
    }

    static Dispatcher start(String yaml, ConcurrentLinkedQueue<String> log) throws Exception {
        DispatchConfig cfg = DispatchConfigLoader.parse("test.yaml", yaml);
        return Dispatcher.start(cfg, TestKafka.bootstrap(), new PrometheusMeterRegistry(PrometheusConfig.DEFAULT),
                line -> {
                    log.add(line);
                    System.out.println("dispatch: " + line);
                });
    }

    static void createTopic(String name, Map<String, String> configs) throws Exception {
        try (Admin a = KafkaAdmin.admin(TestKafka.bootstrap())) {
            a.createTopics(List.of(new NewTopic(name, Optional.of(1), Optional.empty()).configs(configs)))
                    .all().get(30, TimeUnit.SECONDS);
        }
    }

    static Map<String, String> retention(List<String> topics) throws Exception {
        return topicConfig(topics, TopicConfig.RETENTION_MS_CONFIG);
    }

    static java.util.Collection<String> maxMessageBytes(List<String> topics) throws Exception {
        return topicConfig(topics, TopicConfig.MAX_MESSAGE_BYTES_CONFIG).values();
    }

    static Map<String, String> topicConfig(List<String> topics, String key) throws Exception {
        try (Admin a = KafkaAdmin.admin(TestKafka.bootstrap())) {
            Map<String, String> out = new HashMap<>();
            a.describeConfigs(topics.stream().map(t -> new ConfigResource(ConfigResource.Type.TOPIC, t)).toList())
                    .all().get(30, TimeUnit.SECONDS)
                    .forEach((r, c) -> out.put(r.name(), c.get(key).value()));
            return out;
        }
    }

    // ---- item 1: retention ---------------------------------------------------------------------------

    /**
     * Wait topics and the dead-letter topic never delete by time; a retry topic keeps records 2 x its delay + 1 day
     * (at least 7 days); an existing topic with a shorter retention (the broker's 7-day default on a wait topic,
     * one minute on a retry topic) is raised at start.
     */
    @Test
    void parkingTopicsKeepTheirRecordsLongerThanTheyMayWait() throws Exception {
        String topic = TestKafka.topic("retention", 1);
        createTopic("g-ret.wait.a", Map.of()); // the broker's default: 7 days
        createTopic("g-ret.retry.1000", Map.of(TopicConfig.RETENTION_MS_CONFIG, "60000"));
        ConcurrentLinkedQueue<String> log = new ConcurrentLinkedQueue<>();
        String yaml = DispatchIT.source(topic, "g-ret") + """
                endpoints:
                  - { id: a, url: "http://127.0.0.1:1/a", retry: [1s, 10080m] }
                  - { id: b, url: "http://127.0.0.1:1/b", retry: [1s] }
                """;
        try (Dispatcher d = start(yaml, log)) {
            assertThat(retention(List.of("g-ret.wait.a", "g-ret.wait.b", "g-ret.dlq", "g-ret.retry.1000",
                    "g-ret.retry.604800000"))).containsExactlyInAnyOrderEntriesOf(Map.of(
                    "g-ret.wait.a", "-1",
                    "g-ret.wait.b", "-1",
                    "g-ret.dlq", "-1",
                    "g-ret.retry.1000", Long.toString(Duration.ofDays(7).toMillis()),
                    "g-ret.retry.604800000", Long.toString(Duration.ofDays(15).toMillis())));
            assertThat(log).anySatisfy(l -> assertThat(l).isEqualTo(
                    "topic g-ret.retry.1000: retention.ms raised from 60000 to 604800000, max.message.bytes raised from "
                            + "1048588 to 1114124 (a parked record must outlive its wait and fit with Weft's headers)"));
            assertThat(maxMessageBytes(List.of("g-ret.wait.a", "g-ret.wait.b", "g-ret.dlq", "g-ret.retry.1000")))
                    .as("the source topic's 1048588 + 64 KiB: a parked copy of a record at its limit fits")
                    .containsOnly("1114124");
        }
    }

    /**
     * Retired parking topics (of a config before a reload, read until they are deleted) still hold parked records: an
     * install of before (7 days on a wait topic, one minute on a retry topic) has their retention raised at start as
     * the live ones' is.
     */
    @Test
    void retiredParkingTopicsKeepTheirRecordsLongerThanTheyMayWait() throws Exception {
        String topic = TestKafka.topic("retiredret", 1);
        createTopic("g-rr.wait.old", Map.of()); // the broker's default: 7 days
        createTopic("g-rr.retry.5000", Map.of(TopicConfig.RETENTION_MS_CONFIG, "60000"));
        ConcurrentLinkedQueue<String> log = new ConcurrentLinkedQueue<>();
        DispatchConfig cfg = DispatchConfigLoader.parse("test.yaml", DispatchIT.source(topic, "g-rr")
                + "endpoints:\n  - { id: a, url: \"http://127.0.0.1:1/a\", retry: [1s] }\n");
        try (Dispatcher d = Dispatcher.start(cfg, TestKafka.bootstrap(),
                new PrometheusMeterRegistry(PrometheusConfig.DEFAULT), log::add,
                List.of("g-rr.wait.old", "g-rr.retry.5000"))) {
            assertThat(retention(List.of("g-rr.wait.old", "g-rr.retry.5000"))).containsExactlyInAnyOrderEntriesOf(Map.of(
                    "g-rr.wait.old", "-1",
                    "g-rr.retry.5000", Long.toString(Duration.ofDays(7).toMillis())));
            assertThat(log).anySatisfy(l -> assertThat(l).startsWith(
                    "topic g-rr.wait.old: retention.ms raised from 604800000 to -1"));
        }
    }

    /**
     * A parking topic the dispatcher may not write to (an ACL slip) is not a reason to dead-letter: the copy is tried
     * again every 5 s, nothing is committed meanwhile, and once the operator fixes the ACL it is parked and delivered.
     */
    @Test
    void aParkingTopicTheBrokerDeniesIsTriedAgainNotDeadLettered() throws Exception {
        String topic = TestKafka.topic("acl", 1);
        ConcurrentLinkedQueue<String> log = new ConcurrentLinkedQueue<>();
        String retry = "g-acl.retry.1000";
        org.apache.kafka.common.acl.AclBinding deny = new org.apache.kafka.common.acl.AclBinding(
                new org.apache.kafka.common.resource.ResourcePattern(org.apache.kafka.common.resource.ResourceType.TOPIC,
                        retry, org.apache.kafka.common.resource.PatternType.LITERAL),
                new org.apache.kafka.common.acl.AccessControlEntry("User:ANONYMOUS", "*",
                        org.apache.kafka.common.acl.AclOperation.WRITE,
                        org.apache.kafka.common.acl.AclPermissionType.DENY));
        // a resource with an ACL allows only what an ACL allows: everything, then Write denied (a deny wins)
        org.apache.kafka.common.acl.AclBinding allow = new org.apache.kafka.common.acl.AclBinding(deny.pattern(),
                new org.apache.kafka.common.acl.AccessControlEntry("User:ANONYMOUS", "*",
                        org.apache.kafka.common.acl.AclOperation.ALL,
                        org.apache.kafka.common.acl.AclPermissionType.ALLOW));
        try (Admin admin = KafkaAdmin.admin(TestKafka.bootstrap())) {
            admin.createAcls(List.of(allow, deny)).all().get(30, TimeUnit.SECONDS);
        }
        try (Endpoint a = Endpoint.start(503)) {
            String yaml = DispatchIT.source(topic, "g-acl") + "endpoints:\n  - { id: a, url: \"" + a.url()
                    + "\", retry: [1s] }\n";
            TopicPartition source = new TopicPartition(topic, 0);
            try (Dispatcher d = start(yaml, log)) {
                TestKafka.produce(topic, List.of("{\"n\":1}"), null);
                assertThat(TestKafka.await(Duration.ofSeconds(60), () -> log.stream().anyMatch(l -> l.startsWith(
                        "ERROR: cannot write to Kafka topic " + retry + " (TopicAuthorizationException")))).isTrue();
                assertThat(log).anySatisfy(l -> assertThat(l).contains("the dispatcher's principal needs Write on it"));
                // denied for a while: tried again, not dead-lettered, not committed
                assertThat(TestKafka.await(Duration.ofSeconds(8), () -> DispatchIT.endpoint(d, "a").deadLettered() > 0))
                        .isFalse();
                assertThat(DispatchIT.committed("g-acl", source)).isLessThan(1);
                try (Admin admin = KafkaAdmin.admin(TestKafka.bootstrap())) {
                    admin.deleteAcls(List.of(deny.toFilter())).all().get(30, TimeUnit.SECONDS);
                }
                assertThat(TestKafka.await(Duration.ofSeconds(60), () -> DispatchIT.committed("g-acl", source) == 1))
                        .as("parked once the ACL is gone, and the source committed").isTrue();
            }
        }
    }

    /**
     * Where the broker refuses to raise a too-short retention, nothing starts, and the error gives the command that
     * fixes it (the test broker's policy refuses config changes to topics named refused-*).
     */
    @Test
    void aRetentionTheBrokerWillNotRaiseStopsTheStartWithTheCommandThatFixesIt() throws Exception {
        String topic = TestKafka.topic("refusedsrc", 1);
        String group = RefusingAlterPolicy.PREFIX + "g";
        for (String t : List.of(".retry.1000", ".wait.a", ".dlq")) { // an install of before: 7 days each
            createTopic(group + t, Map.of());
        }
        String yaml = DispatchIT.source(topic, group) + "endpoints:\n  - { id: a, url: \"http://127.0.0.1:1/a\", "
                + "retry: [1s] }\n";
        String bootstrap = TestKafka.bootstrap();
        java.util.function.BiFunction<String, Boolean, String> line = (t, retention) -> "topic " + group + t + ": the "
                + "broker refused to set " + (retention ? "retention.ms=-1, " : "") + "max.message.bytes=1114124 (it has "
                + (retention ? "retention.ms=604800000, " : "") + "max.message.bytes=1048588; a parked record must outlive "
                + "its wait and fit with Weft's headers): topic configs of refused-* are not changed here (test policy); "
                + "run: kafka-configs.sh --bootstrap-server " + bootstrap + " --alter --entity-type topics --entity-name "
                + group + t + " --add-config " + (retention ? "retention.ms=-1," : "") + "max.message.bytes=1114124";
        assertThatThrownBy(() -> start(yaml, new ConcurrentLinkedQueue<>()))
                .isInstanceOf(dev.weft.dispatch.engine.DispatchException.class)
                .hasMessage(line.apply(".dlq", true) + "\n" + line.apply(".retry.1000", false) + "\n"
                        + line.apply(".wait.a", true));
    }

    /**
     * A parking topic's records deleted under the group's committed position (retention, or by hand) are an error
     * naming the topic, partition and offsets lost, counted in /-/health; the records after them are delivered.
     */
    @Test
    void aParkedPositionDeletedUnderTheConsumerIsAnErrorNamingTheRecordsLost() throws Exception {
        String topic = TestKafka.topic("lost", 1);
        ConcurrentLinkedQueue<String> log = new ConcurrentLinkedQueue<>();
        try (Endpoint a = Endpoint.start(204)) {
            String yaml = DispatchIT.source(topic, "g-lost") + "endpoints:\n  - { id: a, url: \"" + a.url() + "\" }\n";
            TopicPartition wait = new TopicPartition("g-lost.wait.a", 0);
            try (Dispatcher d = start(yaml, log)) {
                d.control("a", Dispatcher.Action.PAUSE);
                TestKafka.produce(topic, EndpointStateIT.values(0, 5), null);
                assertThat(TestKafka.await(Duration.ofSeconds(60), () -> DispatchIT.endpoint(d, "a").parkedRoom() == 5
                        && DispatchIT.committed("g-lost", wait) == 0)).isTrue();
            }
            try (Admin admin = KafkaAdmin.admin(TestKafka.bootstrap())) { // as retention would
                admin.deleteRecords(Map.of(wait, RecordsToDelete.beforeOffset(3))).all().get(30, TimeUnit.SECONDS);
            }
            try (Dispatcher d = start(yaml, log)) {
                d.control("a", Dispatcher.Action.RESUME);
                assertThat(TestKafka.await(Duration.ofSeconds(60), () -> a.bodies().size() == 2)).isTrue();
                assertThat(a.bodies()).containsExactlyInAnyOrder("{\"n\":3}", "{\"n\":4}");
                assertThat(log).anySatisfy(l -> assertThat(l).startsWith("ERROR: parking topic g-lost.wait.a-0: "
                        + "offsets 0 to 2 (3 records) were deleted before they were read"));
                DispatcherHealth h = d.health();
                assertThat(h.recordsLost()).isEqualTo(3);
                assertThat(h.lastLoss()).contains("g-lost.wait.a-0").contains("offsets 0 to 2");
            }
        }
    }

    // ---- item 2: one endpoint's Retry-After ----------------------------------------------------------

    /**
     * Endpoint a answers 503 with Retry-After: 3600, endpoint b 503 once per record and then 200; both retry at
     * [1s, 2s, 10080m]. b's retries (due after 1 s) never wait behind a's (due in an hour): b gets every record.
     */
    @Test
    void oneEndpointsRetryAfterNeverDelaysAnothersRetries() throws Exception {
        String topic = TestKafka.topic("retryafter", 1);
        java.util.Set<String> seen = java.util.concurrent.ConcurrentHashMap.newKeySet();
        java.util.Set<String> delivered = java.util.concurrent.ConcurrentHashMap.newKeySet();
        try (HttpServer a = HttpServer.builder(r -> ServerResponse.json(503, new byte[0]).withHeader("Retry-After", "3600"))
                .listen(new InetSocketAddress("127.0.0.1", 0)).start();
             HttpServer b = HttpServer.builder(r -> {
                         String id = r.header("webhook-id");
                         if (seen.add(id)) {
                             return ServerResponse.json(503, new byte[0]);
                         }
                         delivered.add(id);
                         return ServerResponse.json(200, new byte[0]);
                     }).listen(new InetSocketAddress("127.0.0.1", 0)).start()) {
            String yaml = DispatchIT.sourceLine(topic, "g-ra") + """
                    defaults: { retry: [1s, 2s, 10080m], allow_private: true }
                    endpoints:
                      - { id: a, url: "%s" }
                      - { id: b, url: "%s" }
                    """.formatted(a.url(), b.url());
            try (Dispatcher d = start(yaml, new ConcurrentLinkedQueue<>())) {
                long t0 = System.nanoTime();
                TestKafka.produce(topic, EndpointStateIT.values(0, 10), null);
                boolean all = TestKafka.await(Duration.ofSeconds(30), () -> delivered.size() == 10);
                System.out.println("retry-after isolation: b had " + delivered.size() + " of 10 after "
                        + (System.nanoTime() - t0) / 1_000_000 + " ms");
                assertThat(all).as("b got every record within 30 s").isTrue();
                assertThat(TestKafka.await(Duration.ofSeconds(10), () -> DispatchIT.endpoint(d, "a").parkedRetry() > 0))
                        .isTrue();
            }
        }
    }

    /** An endpoint that answers 503 with Retry-After: 3600 once, then 200; it records the webhook-ids it took. */
    static HttpServer onceRetryAfter(java.util.Set<String> seen, java.util.Set<String> delivered) throws Exception {
        return HttpServer.builder(r -> {
                    String id = r.header("webhook-id");
                    if (seen.add(id)) {
                        return ServerResponse.json(503, new byte[0]).withHeader("Retry-After", "3600");
                    }
                    delivered.add(id);
                    return ServerResponse.json(200, new byte[0]);
                }).listen(new InetSocketAddress("127.0.0.1", 0)).start();
    }

    /** A record parked on the wait topic by a Retry-After of an hour is delivered as soon as the endpoint is enabled. */
    @Test
    void aRetryAfterParkWaitsNoLongerThanTheThrottleAfterEnable() throws Exception {
        String topic = TestKafka.topic("raenable", 1);
        java.util.Set<String> seen = java.util.concurrent.ConcurrentHashMap.newKeySet();
        java.util.Set<String> delivered = java.util.concurrent.ConcurrentHashMap.newKeySet();
        try (HttpServer a = onceRetryAfter(seen, delivered)) {
            String yaml = DispatchIT.source(topic, "g-raenable") + "endpoints:\n  - { id: a, url: \"" + a.url()
                    + "\", retry: [200ms] }\n";
            try (Dispatcher d = start(yaml, new ConcurrentLinkedQueue<>())) {
                TestKafka.produce(topic, List.of("{\"n\":1}"), null);
                assertThat(TestKafka.await(Duration.ofSeconds(60), () -> DispatchIT.endpoint(d, "a").parkedRetry() == 1
                        && DispatchIT.endpoint(d, "a").state() == EndpointStatus.State.THROTTLED)).isTrue();
                assertThat(delivered).isEmpty();
                d.control("a", Dispatcher.Action.ENABLE);
                assertThat(TestKafka.await(Duration.ofSeconds(30), () -> delivered.size() == 1))
                        .as("delivered after ENABLE, not after the hour").isTrue();
                assertThat(TestKafka.awaitCommitted("g-raenable", "g-raenable.wait.a", 1, Duration.ofSeconds(30)))
                        .isTrue();
            }
        }
    }

    /** A record parked by a Retry-After of an hour is dead-lettered at once when its endpoint is disabled meanwhile. */
    @Test
    void aRetryAfterParkOfAnEndpointDisabledMeanwhileIsDeadLetteredAtOnce() throws Exception {
        String topic = TestKafka.topic("radisabled", 1);
        java.util.Set<String> seen = java.util.concurrent.ConcurrentHashMap.newKeySet();
        java.util.Set<String> delivered = java.util.concurrent.ConcurrentHashMap.newKeySet();
        try (HttpServer a = onceRetryAfter(seen, delivered)) {
            String yaml = DispatchIT.source(topic, "g-radisabled") + "endpoints:\n  - { id: a, url: \"" + a.url()
                    + "\", retry: [200ms] }\n";
            try (Dispatcher d = start(yaml, new ConcurrentLinkedQueue<>())) {
                TestKafka.produce(topic, List.of("{\"n\":1}"), null);
                assertThat(TestKafka.await(Duration.ofSeconds(60), () -> DispatchIT.endpoint(d, "a").parkedRetry() == 1))
                        .isTrue();
                // as another instance's 410 would: written to the group's state topic
                try (KafkaProducer<byte[], byte[]> p = new KafkaProducer<>(Map.of(
                        ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, TestKafka.bootstrap(),
                        ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class,
                        ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class))) {
                    p.send(new ProducerRecord<>("g-radisabled.state", "a/disabled".getBytes(StandardCharsets.UTF_8),
                            "{\"reason\":\"410 Gone from another instance\"}".getBytes(StandardCharsets.UTF_8)))
                            .get(30, TimeUnit.SECONDS);
                }
                long t0 = System.nanoTime();
                List<ConsumerRecord<byte[], byte[]>> dead = TestKafka.readAll("g-radisabled.dlq", 1);
                assertThat(dead).singleElement().satisfies(r -> assertThat(TestKafka.header(r, "weft-reason"))
                        .isEqualTo("410 Gone from another instance"));
                assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofMinutes(1));
                assertThat(delivered).isEmpty();
            }
        }
    }

    // ---- item 3: produce errors Kafka will never accept --------------------------------------------

    /**
     * Lowers the topics' max.message.bytes under the running dispatcher, as an operator might (at start it raises
     * a parking topic's to fit a source record with its headers), and waits until the broker says so.
     */
    static void shrink(List<String> topics, int maxMessageBytes) throws Exception {
        try (Admin a = KafkaAdmin.admin(TestKafka.bootstrap())) {
            Map<ConfigResource, java.util.Collection<org.apache.kafka.clients.admin.AlterConfigOp>> ops = new HashMap<>();
            topics.forEach(t -> ops.put(new ConfigResource(ConfigResource.Type.TOPIC, t), List.of(
                    new org.apache.kafka.clients.admin.AlterConfigOp(new org.apache.kafka.clients.admin.ConfigEntry(
                            TopicConfig.MAX_MESSAGE_BYTES_CONFIG, Integer.toString(maxMessageBytes)),
                            org.apache.kafka.clients.admin.AlterConfigOp.OpType.SET))));
            a.incrementalAlterConfigs(ops).all().get(30, TimeUnit.SECONDS);
        }
        assertThat(TestKafka.await(Duration.ofSeconds(30), () -> {
            try {
                return maxMessageBytes(topics).stream().allMatch(v -> v.equals(Integer.toString(maxMessageBytes)));
            } catch (Exception e) {
                return false;
            }
        })).isTrue();
    }

    /** A JSON record of about {@code bytes} that does not compress (the parking producer compresses with lz4). */
    static String big(int bytes) {
        byte[] random = new byte[bytes * 3 / 4];
        new java.util.Random(bytes).nextBytes(random);
        return "{\"big\":\"" + java.util.Base64.getEncoder().encodeToString(random) + "\"}";
    }

    /**
     * A parked copy larger than its retry topic takes (its max.message.bytes lowered under the running dispatcher)
     * goes to the dead-letter topic with the reason, once.
     */
    @Test
    void aCopyTooLargeForItsRetryTopicIsDeadLetteredWithTheReason() throws Exception {
        String topic = TestKafka.topic("toolarge", 1);
        ConcurrentLinkedQueue<String> log = new ConcurrentLinkedQueue<>();
        try (Endpoint broken = Endpoint.start(500)) {
            String yaml = DispatchIT.source(topic, "g-large") + "endpoints:\n  - { id: a, url: \"" + broken.url()
                    + "\", retry: [200ms] }\n";
            try (Dispatcher d = start(yaml, log)) {
                shrink(List.of("g-large.retry.200"), 20_000);
                TestKafka.produce(topic, List.of(big(50_000), "{\"small\":1}"), null);
                List<ConsumerRecord<byte[], byte[]>> dead = TestKafka.readAll("g-large.dlq", 2);
                assertThat(dead).hasSize(2);
                ConsumerRecord<byte[], byte[]> large = dead.stream().filter(r -> r.value().length > 50_000).findFirst()
                        .orElseThrow();
                assertThat(TestKafka.header(large, "weft-reason")).startsWith("cannot park on g-large.retry.200: "
                        + "RecordTooLargeException");
                assertThat(TestKafka.header(large, "weft-attempts")).isEqualTo("1");
                assertThat(TestKafka.header(large, "weft-status")).isEqualTo("500");
                assertThat(TestKafka.awaitCommitted("g-large", topic, 2, Duration.ofSeconds(30))).isTrue();
                assertThat(DispatchIT.endpoint(d, "a").deadLettered()).isEqualTo(2);
                assertThat(d.health().status()).isEqualTo(DispatcherHealth.Status.UP);
            }
        }
    }

    /**
     * When the dead-letter topic refuses the copy for its size too, a dead letter of the headers only (where the
     * record is, why, for which endpoint) goes there: a size alone never leaves a delivery stuck.
     */
    @Test
    void aDeadLetterTooLargeForItsTopicIsWrittenWithItsHeadersOnly() throws Exception {
        String topic = TestKafka.topic("stub", 1);
        ConcurrentLinkedQueue<String> log = new ConcurrentLinkedQueue<>();
        try (Endpoint broken = Endpoint.start(500)) {
            String yaml = DispatchIT.source(topic, "g-stub") + "endpoints:\n  - { id: a, url: \"" + broken.url()
                    + "\", retry: [200ms] }\n";
            try (Dispatcher d = start(yaml, log)) {
                shrink(List.of("g-stub.retry.200", "g-stub.dlq"), 20_000);
                TestKafka.produce(topic, List.of(big(50_000)), null);
                List<ConsumerRecord<byte[], byte[]>> dead = TestKafka.readAll("g-stub.dlq", 1);
                assertThat(dead).hasSize(1);
                ConsumerRecord<byte[], byte[]> stub = dead.getFirst();
                assertThat(stub.value()).isNull();
                assertThat(stub.key()).isNull();
                assertThat(TestKafka.header(stub, "weft-headers-only")).isEqualTo("1");
                assertThat(TestKafka.header(stub, "weft-endpoint")).isEqualTo("a");
                assertThat(TestKafka.header(stub, "weft-origin")).isEqualTo(topic + "/0/0");
                assertThat(TestKafka.header(stub, "weft-reason")).startsWith("cannot park on g-stub.retry.200: "
                        + "RecordTooLargeException").contains("only the headers are kept");
                assertThat(TestKafka.awaitCommitted("g-stub", topic, 1, Duration.ofSeconds(30))).isTrue();
                assertThat(d.health().status()).isEqualTo(DispatcherHealth.Status.UP);
            }
        }
    }

    /**
     * A source record produced compressed (lz4) may be larger than its topic takes once uncompressed: it is parked
     * and dead-lettered compressed, in full, never stuck.
     */
    @Test
    void aCompressedRecordLargerThanItsTopicTakesUncompressedIsParkedInFull() throws Exception {
        String topic = TestKafka.topic("compressed", 1);
        String body = "{\"events\":[" + "{\"type\":\"order.created\",\"amount\":12},".repeat(60_000) + "{}]}";
        assertThat(body.length()).isGreaterThan(2_000_000);
        try (KafkaProducer<byte[], byte[]> p = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, TestKafka.bootstrap(), ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4", ProducerConfig.MAX_REQUEST_SIZE_CONFIG, 8 * 1024 * 1024,
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class,
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class))) {
            p.send(new ProducerRecord<>(topic, body.getBytes(StandardCharsets.UTF_8))).get(30, TimeUnit.SECONDS);
        }
        ConcurrentLinkedQueue<String> log = new ConcurrentLinkedQueue<>();
        try (Endpoint broken = Endpoint.start(500)) {
            String yaml = DispatchIT.source(topic, "g-compressed") + "endpoints:\n  - { id: a, url: \"" + broken.url()
                    + "\", retry: [200ms] }\n";
            try (Dispatcher d = start(yaml, log)) {
                List<ConsumerRecord<byte[], byte[]>> dead = TestKafka.readAll("g-compressed.dlq", 1);
                assertThat(dead).hasSize(1);
                assertThat(new String(dead.getFirst().value(), StandardCharsets.UTF_8)).isEqualTo(body);
                assertThat(TestKafka.header(dead.getFirst(), "weft-attempts")).isEqualTo("2");
                assertThat(TestKafka.awaitCommitted("g-compressed", topic, 1, Duration.ofSeconds(30))).isTrue();
                assertThat(d.health().status()).isEqualTo(DispatcherHealth.Status.UP);
            }
        }
    }

    /**
     * When the dead-letter topic refuses even the headers, the endpoint is paused, /-/health says failed and why
     * but answers 200 (restarting would not help; the other endpoints go on), /-/ready answers 503 with the reason,
     * the log names the record, and its offset is not committed.
     */
    @Test
    void whenTheDeadLetterTopicRefusesItTooTheEndpointPausesAndHealthSaysFailed() throws Exception {
        String topic = TestKafka.topic("stuck", 1);
        ConcurrentLinkedQueue<String> log = new ConcurrentLinkedQueue<>();
        try (Endpoint broken = Endpoint.start(500)) {
            String yaml = DispatchIT.source(topic, "g-stuck") + "endpoints:\n  - { id: a, url: \"" + broken.url()
                    + "\", retry: [200ms] }\n";
            try (Dispatcher d = start(yaml, log);
                 dev.weft.dispatch.status.StatusServer s = dev.weft.dispatch.status.StatusServer.start(
                         new InetSocketAddress("127.0.0.1", 0), d, new PrometheusMeterRegistry(PrometheusConfig.DEFAULT),
                         null)) {
                shrink(List.of("g-stuck.retry.200"), 20_000);
                shrink(List.of("g-stuck.dlq"), 64);
                TestKafka.produce(topic, List.of(big(50_000)), null);
                assertThat(TestKafka.await(Duration.ofSeconds(60),
                        () -> d.health().status() == DispatcherHealth.Status.FAILED)).isTrue();
                assertThat(d.health().failure()).startsWith("record " + topic + "-0@0 (first consumed at " + topic
                        + "/0/0) for endpoint 'a' can be neither parked nor dead-lettered: ")
                        .contains("RecordTooLargeException");
                assertThat(DispatchIT.endpoint(d, "a").state()).isEqualTo(EndpointStatus.State.PAUSED);
                assertThat(log).anySatisfy(l -> assertThat(l).startsWith("ERROR: record " + topic + "-0@0 ")
                        .contains("is paused here"));
                assertThat(DispatchIT.committed("g-stuck", new TopicPartition(topic, 0)))
                        .as("not committed past the record (-1: nothing committed yet)").isLessThan(1);
                java.net.http.HttpResponse<String> health = ReadinessIT.get(s.url() + "/-/health", null);
                assertThat(health.statusCode()).as("liveness: the process works").isEqualTo(200);
                assertThat(health.body()).contains("\"status\":\"failed\"").contains("can be neither parked");
                java.net.http.HttpResponse<String> ready = ReadinessIT.get(s.url() + "/-/ready", null);
                assertThat(ready.statusCode()).isEqualTo(503);
                assertThat(ready.body()).contains("failed: record " + topic + "-0@0");
            }
        }
    }

    // ---- item 4: transactions ------------------------------------------------------------------------

    /** Records of an aborted transaction reach no endpoint, and `weft dispatch replay` does not count them. */
    @Test
    void anAbortedTransactionsRecordsAreNeverDelivered() throws Exception {
        String topic = TestKafka.topic("tx", 1);
        try (KafkaProducer<byte[], byte[]> p = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, TestKafka.bootstrap(),
                ProducerConfig.TRANSACTIONAL_ID_CONFIG, "weft-test-" + topic,
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class,
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class))) {
            p.initTransactions();
            p.beginTransaction();
            for (int i = 0; i < 3; i++) {
                p.send(new ProducerRecord<>(topic, ("{\"aborted\":" + i + "}").getBytes(StandardCharsets.UTF_8)));
            }
            p.flush();
            p.abortTransaction();
            p.beginTransaction();
            for (int i = 0; i < 2; i++) {
                p.send(new ProducerRecord<>(topic, ("{\"committed\":" + i + "}").getBytes(StandardCharsets.UTF_8)));
            }
            p.commitTransaction();
        }
        try (Endpoint a = Endpoint.start(204)) {
            String yaml = DispatchIT.source(topic, "g-tx") + "endpoints:\n  - { id: a, url: \"" + a.url() + "\" }\n";
            try (Dispatcher d = start(yaml, new ConcurrentLinkedQueue<>())) {
                // offsets: 3 aborted, the abort marker, 2 committed: the commit passes the last one once it is done
                assertThat(TestKafka.await(Duration.ofSeconds(60),
                        () -> DispatchIT.committed("g-tx", new TopicPartition(topic, 0)) >= 6)).isTrue();
                assertThat(a.bodies()).containsExactlyInAnyOrder("{\"committed\":0}", "{\"committed\":1}");
            }
            Replay.Result r = Replay.run(DispatchConfigLoader.parse("test.yaml", yaml), TestKafka.bootstrap(), "a",
                    false, Instant.now().minus(Duration.ofHours(1)), null, true, l -> { });
            assertThat(r.read()).as("replay reads the committed records only").isEqualTo(2);
        }
    }

    // ---- item 5: crafted parking headers ------------------------------------------------------------

    /**
     * Parked records with crafted headers (a count that would overflow the retry schedule, a duplicated endpoint,
     * a due time past the longest) are dead letters with their reason; the retry topic commits to its end and a
     * well-formed record after them is delivered.
     */
    @Test
    void craftedParkingHeadersAreDeadLettersWithTheirReason() throws Exception {
        String topic = TestKafka.topic("crafted", 1);
        try (Endpoint broken = Endpoint.start(500)) {
            String yaml = DispatchIT.source(topic, "g-crafted") + "endpoints:\n  - { id: p, url: \"" + broken.url()
                    + "\", retry: [1s] }\n";
            try (Dispatcher d = start(yaml, new ConcurrentLinkedQueue<>())) {
                String retry = "g-crafted.retry.1000";
                List<Map<String, List<String>>> crafted = List.of(
                        Map.of("webhook-id", List.of("msg_overflow"), "weft-attempts", List.of("2147483647")),
                        Map.of("webhook-id", List.of("msg_twice"), "weft-endpoint", List.of("p", "q")),
                        Map.of("webhook-id", List.of("msg_late"), "weft-due", List.of("99999999999999999999")),
                        Map.of("webhook-id", List.of("msg_good"), "weft-attempts", List.of("1")));
                try (KafkaProducer<byte[], byte[]> p = new KafkaProducer<>(Map.of(
                        ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, TestKafka.bootstrap(), ProducerConfig.ACKS_CONFIG, "all",
                        ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class,
                        ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class))) {
                    for (Map<String, List<String>> c : crafted) {
                        Map<String, List<String>> h = new java.util.LinkedHashMap<>(Map.of("weft-endpoint", List.of("p"),
                                "weft-attempts", List.of("0"), "weft-reason", List.of("failed"),
                                "weft-status", List.of("500"), "weft-origin", List.of(topic + "/0/0"),
                                "weft-due", List.of("0")));
                        h.putAll(c);
                        ProducerRecord<byte[], byte[]> rec = new ProducerRecord<>(retry, 0, null,
                                "{}".getBytes(StandardCharsets.UTF_8));
                        h.forEach((k, vs) -> vs.forEach(v -> rec.headers().add(k, v.getBytes(StandardCharsets.UTF_8))));
                        p.send(rec).get(30, TimeUnit.SECONDS);
                    }
                }
                // the good one is tried (its last attempt), fails (500) and is dead-lettered: 4 dead letters in all
                List<ConsumerRecord<byte[], byte[]>> dead = TestKafka.readAll("g-crafted.dlq", 4);
                Map<String, String> reasons = new HashMap<>();
                dead.forEach(r -> reasons.put(TestKafka.header(r, "webhook-id"), TestKafka.header(r, "weft-reason")));
                assertThat(reasons).containsOnlyKeys("msg_overflow", "msg_twice", "msg_late", "msg_good");
                assertThat(reasons.get("msg_overflow"))
                        .isEqualTo("bad parking header weft-attempts: '2147483647' is out of range (at most 20)");
                assertThat(reasons.get("msg_twice")).isEqualTo("bad parking header weft-endpoint: given 2 times");
                assertThat(reasons.get("msg_late")).startsWith("bad parking header weft-due: ").contains("out of range");
                assertThat(TestKafka.awaitCommitted("g-crafted", retry, 4, Duration.ofSeconds(30))).isTrue();
                assertThat(broken.bodies()).as("only the good one was tried").hasSize(1);
                assertThat(d.health().status()).isEqualTo(DispatcherHealth.Status.UP);
            }
        }
    }

    // ---- the consumer thread's sends, bounded per turn ---------------------------------------------------------

    /**
     * Each dead letter of a disabled endpoint is sent on the consumer thread, and a send waits {@code max.block.ms}
     * for its topic's metadata: with the dead-letter topic gone (the broker creates none on its own, and the parking
     * producer never wrote to it, so it has no metadata for it), a turn of 5 such sends held the consumer thread 50 s
     * (30 records: 300 s, past {@code max.poll.interval.ms}). The turn's sends wait within its budget
     * ({@link Dispatcher#BROKER_CALL_TIMEOUT}): the consumer thread sends only while the turn has a send's whole wait
     * left, the rest go to the retry thread, and each record is dead-lettered once the topic is back.
     */
    @Test
    void aTurnsParkingSendsHoldTheConsumerThreadNoLongerThanOneSendsWait() throws Exception {
        String topic = TestKafka.topic("turnbound", 1);
        String group = "g-turnbound";
        String dlq = group + ".dlq";
        try (Endpoint a = Endpoint.start(200)) {
            String yaml = DispatchIT.source(topic, group) + "endpoints:\n  - { id: a, url: \"" + a.url() + "\" }\n";
            ConcurrentLinkedQueue<String> log = new ConcurrentLinkedQueue<>();
            try (Dispatcher d = start(yaml, log)) {
                org.apache.kafka.clients.producer.RecordMetadata written;
                try (KafkaProducer<byte[], byte[]> p = new KafkaProducer<>(Map.of(
                        ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, TestKafka.bootstrap(),
                        ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class,
                        ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class))) {
                    written = p.send(new ProducerRecord<>(group + ".state", "a/disabled".getBytes(StandardCharsets.UTF_8),
                            "{\"reason\":\"410 Gone\"}".getBytes(StandardCharsets.UTF_8))).get(30, TimeUnit.SECONDS);
                }
                // this wait once ran out in CI: the message says what the dispatcher logged meanwhile
                assertThat(TestKafka.await(Duration.ofSeconds(60), () -> d.health().endpointsDisabled() == 1))
                        .as("the disable written to %s reached the dispatcher; its log: %s", written, log).isTrue();
                try (Admin admin = KafkaAdmin.admin(TestKafka.bootstrap())) {
                    admin.deleteTopics(List.of(dlq)).all().get(30, TimeUnit.SECONDS);
                    assertThat(TestKafka.await(Duration.ofSeconds(30), () -> {
                        try {
                            return !admin.listTopics().names().get(10, TimeUnit.SECONDS).contains(dlq);
                        } catch (Exception e) {
                            return false;
                        }
                    })).isTrue();
                }
                LongestTurn longestTurn = LongestTurn.of(d);
                try (longestTurn) {
                    TestKafka.produce(topic, List.of("{\"n\":1}", "{\"n\":2}", "{\"n\":3}", "{\"n\":4}",
                            "{\"n\":5}"), null);
                    // three sends timed out (9 s each): before the turn's bound, all on the consumer thread, in one or
                    // two turns, so a turn had lasted 20 s or more by then
                    assertThat(TestKafka.await(Duration.ofSeconds(90), () -> d.health().parkFailures() >= 3)).isTrue();
                }
                System.out.println("longest consumer turn with the dead-letter topic gone: " + longestTurn.ms() + " ms");
                assertThat(longestTurn.ms()).as("a send reached the missing topic on the consumer thread")
                        .isGreaterThanOrEqualTo(Duration.ofSeconds(5).toMillis());
                assertThat(longestTurn.ms()).as("the longest consumer turn, ms").isLessThanOrEqualTo(
                        Dispatcher.BROKER_CALL_TIMEOUT.plus(Duration.ofSeconds(3)).toMillis());
                createTopic(dlq, Map.of());
                List<ConsumerRecord<byte[], byte[]>> dead = new java.util.ArrayList<>();
                assertThat(TestKafka.await(Duration.ofSeconds(90), () -> {
                    try {
                        dead.clear();
                        dead.addAll(TestKafka.readAll(dlq, 5));
                        return dead.size() >= 5;
                    } catch (Exception e) {
                        return false;
                    }
                })).as("every record dead-lettered once the topic is back").isTrue();
                assertThat(dead.stream().map(r -> new String(r.value(), StandardCharsets.UTF_8)).distinct())
                        .hasSize(5);
                assertThat(a.bodies()).isEmpty();
                assertThat(d.health().recordsLost()).isZero();
            }
        }
    }
}
