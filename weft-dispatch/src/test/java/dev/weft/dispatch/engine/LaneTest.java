package dev.weft.dispatch.engine;

import dev.weft.dispatch.config.DispatchConfig;
import dev.weft.dispatch.config.DispatchConfigLoader;
import dev.weft.server.HttpServer;
import dev.weft.server.ServerResponse;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

import dev.weft.observe.TraceParent;
import org.apache.kafka.common.header.internals.RecordHeader;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Base64;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** A lane against a real endpoint on loopback (answering 500): a failed attempt's errors never cost a worker. */
class LaneTest {
    /** Records dead letters; parks throw while {@code parkFails} is set. */
    static final class Copies implements Parker {
        final ConcurrentLinkedQueue<String> dead = new ConcurrentLinkedQueue<>();
        final ConcurrentLinkedQueue<String> parked = new ConcurrentLinkedQueue<>();
        volatile RuntimeException parkFails;

        @Override
        public void park(Delivery d, String topic, ParkedRecord.Reason reason, String status, long dueMillis,
                         Runnable onDurable) {
            if (parkFails != null) {
                throw parkFails;
            }
            parked.add(d.webhookId() + " " + topic + " attempts=" + d.attempts());
            d.ticket().done();
        }

        @Override
        public void deadLetter(Delivery d, String status, String reason, Runnable onDurable) {
            dead.add(d.webhookId() + " attempts=" + d.attempts() + " " + reason);
            d.ticket().done();
        }

        @Override
        public void stuck(Delivery d, String why) {
            dead.add("STUCK " + why);
        }
    }

    @Test
    void errorsAfterAFailedAttemptDeadLetterTheDeliveryAndTheWorkerGoesOn() throws Exception {
        AtomicInteger requests = new AtomicInteger();
        try (HttpServer endpoint = HttpServer.builder(r -> {
                    requests.incrementAndGet();
                    return ServerResponse.json(500, new byte[0]);
                }).listen(new InetSocketAddress("127.0.0.1", 0)).start()) {
            DispatchConfig cfg = DispatchConfigLoader.parse("lane.yaml", """
                    source: { topics: [events], group: g }
                    endpoints:
                      - { id: a, url: "%s", max_in_flight: 1, queue: 10, retry: [1s, 2s], allow_private: true }
                    """.formatted(endpoint.url()));
            Copies copies = new Copies();
            Lane lane = new Lane(cfg.endpoints().getFirst(), cfg, copies, new SimpleMeterRegistry(), l -> { });
            lane.start();
            PartitionTracker tracker = new PartitionTracker(new TopicPartition("g.retry.1000", 0), 0);
            try {
                // 1: a count read back as the largest int: its next attempt overflows the retry schedule's index
                Ticket t1 = tracker.take(0);
                t1.add();
                assertThat(lane.offer(new Delivery("a", t1, "msg_1", null, "{}".getBytes(StandardCharsets.UTF_8),
                        List.of(), Integer.MAX_VALUE, "events/0/0"))).isTrue();
                t1.done();
                await("dead-lettered, not lost").atMost(Duration.ofSeconds(20))
                        .until(() -> copies.dead.size() == 1);
                assertThat(copies.dead.peek()).startsWith("msg_1 attempts=2147483647 ");
                // 2: parking the failed attempt throws (a bug): dead-lettered with both errors, the worker goes on
                copies.parkFails = new IllegalStateException("no park");
                Ticket t2 = tracker.take(1);
                t2.add();
                assertThat(lane.offer(new Delivery("a", t2, "msg_2", null, "{}".getBytes(StandardCharsets.UTF_8),
                        List.of(), 0, "events/0/1"))).isTrue();
                t2.done();
                await("copies.dead.size() == 2").atMost(Duration.ofSeconds(20))
                        .until(() -> copies.dead.size() == 2);
                assertThat(copies.dead).element(1).asString().startsWith("msg_2 attempts=0 internal error: ")
                        .contains("no park");
                // 3: the one worker still works
                copies.parkFails = null;
                Ticket t3 = tracker.take(2);
                t3.add();
                assertThat(lane.offer(new Delivery("a", t3, "msg_3", null, "{}".getBytes(StandardCharsets.UTF_8),
                        List.of(), 0, "events/0/2"))).isTrue();
                t3.done();
                await("the lane's worker is alive").atMost(Duration.ofSeconds(20))
                        .until(() -> copies.parked.size() == 1);
                assertThat(copies.parked.peek()).isEqualTo("msg_3 g.retry.1000 attempts=1");
                await("every delivery settled").atMost(Duration.ofSeconds(20))
                        .until(() -> tracker.outstanding() == 0);
                assertThat(requests.get()).isEqualTo(3);
            } finally {
                lane.stop(Duration.ofSeconds(1));
            }
        }
    }

    /**
     * The bytes of a delivery on the wire (part of the compatibility contract): the lane's own fields, then the
     * signature and the trace context its transport's exchange interceptors add, in this order; the signature over
     * id, timestamp and body; a new span of the record's own trace, and its tracestate.
     */
    @Test
    void aDeliveryGoesSignedAndTracedWithItsFieldsInTheirOrder() throws Exception {
        BlockingQueue<String> heads = new LinkedBlockingQueue<>();
        try (ServerSocket endpoint = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            Thread.ofVirtual().start(() -> {
                try (Socket s = endpoint.accept(); InputStream in = s.getInputStream();
                     OutputStream out = s.getOutputStream()) {
                    ByteArrayOutputStream head = new ByteArrayOutputStream();
                    while (!head.toString(StandardCharsets.ISO_8859_1).endsWith("\r\n\r\n")) {
                        head.write(in.read());
                    }
                    heads.add(head.toString(StandardCharsets.ISO_8859_1));
                    in.readNBytes(2); // the body, {}
                    out.write("HTTP/1.1 204 No Content\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
                    out.flush();
                } catch (java.io.IOException e) {
                    heads.add("failed: " + e);
                }
            });
            String secret = "whsec_" + Base64.getEncoder().encodeToString("0123456789abcdef0123456789abcdef".getBytes(StandardCharsets.UTF_8));
            DispatchConfig cfg = DispatchConfigLoader.parse("lane.yaml", """
                    source: { topics: [events], group: g }
                    endpoints:
                      - { id: a, url: "http://127.0.0.1:%d/hook", secret: %s, allow_private: true }
                    """.formatted(endpoint.getLocalPort(), secret));
            Copies copies = new Copies();
            Lane lane = new Lane(cfg.endpoints().getFirst(), cfg, copies, new SimpleMeterRegistry(), l -> { });
            lane.start();
            String own = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
            try {
                PartitionTracker tracker = new PartitionTracker(new TopicPartition("events", 0), 0);
                Ticket t = tracker.take(0);
                t.add();
                assertThat(lane.offer(new Delivery("a", t, "msg_1", null, "{}".getBytes(StandardCharsets.UTF_8),
                        List.of(new RecordHeader("traceparent", own.getBytes(StandardCharsets.UTF_8)),
                                new RecordHeader("tracestate", "k=v".getBytes(StandardCharsets.UTF_8))),
                        0, "events/0/0"))).isTrue();
                t.done();
                String head = heads.poll(20, TimeUnit.SECONDS);
                assertThat(head).isNotNull().startsWith("POST /hook HTTP/1.1\r\n");
                List<String> lines = List.of(head.split("\r\n"));
                List<String> names = lines.stream().skip(1).map(l -> l.substring(0, l.indexOf(':')))
                        .filter(n -> n.startsWith("webhook-") || n.startsWith("trace") || n.equals("content-type"))
                        .toList();
                assertThat(names).containsExactly("content-type", "webhook-id", "webhook-timestamp",
                        "webhook-signature", "traceparent", "tracestate");
                java.util.function.Function<String, String> field = n -> lines.stream()
                        .filter(l -> l.startsWith(n + ": ")).findFirst().orElseThrow().substring(n.length() + 2);
                assertThat(field.apply("webhook-id")).isEqualTo("msg_1");
                assertThat(field.apply("webhook-signature")).isEqualTo(WebhookSigning.signature(
                        "0123456789abcdef0123456789abcdef".getBytes(StandardCharsets.UTF_8), "msg_1",
                        Long.parseLong(field.apply("webhook-timestamp")), "{}".getBytes(StandardCharsets.UTF_8)));
                TraceParent sent = TraceParent.parse(field.apply("traceparent"));
                assertThat(sent.traceId()).isEqualTo("4bf92f3577b34da6a3ce929d0e0e4736");
                assertThat(field.apply("traceparent")).doesNotContain("00f067aa0ba902b7");
                assertThat(field.apply("tracestate")).isEqualTo("k=v");
                await("delivered").atMost(Duration.ofSeconds(20)).until(() -> lane.delivered() == 1);
            } finally {
                lane.stop(Duration.ofSeconds(1));
            }
        }
    }
}
