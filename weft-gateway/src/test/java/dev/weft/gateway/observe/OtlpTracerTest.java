package dev.weft.gateway.observe;

import com.sun.net.httpserver.HttpServer;
import dev.weft.client.Attempt;
import dev.weft.client.CallResult;
import dev.weft.http.Headers;
import dev.weft.observe.TraceParent;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.trace.v1.Span;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@link OtlpTracer} against a real OTLP/HTTP receiver on loopback (the JDK's HTTP server, decoding with the
 * opentelemetry-proto classes): what is sampled, what a request and its calls record, full batches sent without
 * waiting for the period, a full queue dropping and counting instead of waiting, and close sending what is queued.
 */
class OtlpTracerTest {
    private static final URI BACKEND = URI.create("http://127.0.0.2:19001/b/1?x=y");
    private static final CallResult OK = new CallResult(null, 200, Headers.EMPTY, new byte[0], null,
            CallResult.Timings.NONE, List.of(new Attempt(1, Attempt.Kind.FIRST, 200, null, 0, 1, true)));

    private final List<Span> received = new CopyOnWriteArrayList<>();
    private final List<Integer> batches = new CopyOnWriteArrayList<>();
    private final CountDownLatch release = new CountDownLatch(1);
    private volatile boolean hold;
    private HttpServer receiver;
    private OtlpTracer tracer;

    private OtlpSpanExporter receiver() throws IOException {
        receiver = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        receiver.createContext("/v1/traces", ex -> {
            try {
                if (hold) {
                    release.await(20, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            ExportTraceServiceRequest req = ExportTraceServiceRequest.parseFrom(ex.getRequestBody().readAllBytes());
            List<Span> spans = req.getResourceSpans(0).getScopeSpans(0).getSpansList();
            batches.add(spans.size());
            received.addAll(spans);
            ex.sendResponseHeaders(200, -1);
            ex.close();
        });
        receiver.start();
        return new OtlpSpanExporter(URI.create("http://127.0.0.1:" + receiver.getAddress().getPort() + "/v1/traces"),
                Duration.ofSeconds(30), Duration.ofMillis(50));
    }

    @AfterEach
    void stop() {
        release.countDown();
        if (tracer != null) {
            tracer.close();
        }
        if (receiver != null) {
            receiver.stop(0);
        }
    }

    private void request(String traceparent) {
        Tracer.RequestTrace r = tracer.begin(traceparent, null, "GET", "/a/1");
        for (int i = 0; i < 3; i++) {
            r.call("c" + i, BACKEND).end(OK);
        }
        r.end("GET /a/{id}", 200);
    }

    @Test
    void aRequestAndEachOfItsCallsAreRecordedUnderTheCallersTrace() throws Exception {
        tracer = new OtlpTracer(receiver(), 1.0, "svc", 100, 100, Duration.ofHours(1));
        Tracer.RequestTrace r = tracer.begin("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "k=v", "GET",
                "/a/1");
        assertThat(r.traceId()).isEqualTo("4bf92f3577b34da6a3ce929d0e0e4736");
        assertThat(r.tracestate()).isEqualTo("k=v");
        Tracer.CallTrace c = r.call("b", BACKEND);
        TraceParent sent = TraceParent.parse(c.traceparent());
        assertThat(sent.traceId()).isEqualTo("4bf92f3577b34da6a3ce929d0e0e4736");
        assertThat(sent.sampled()).isTrue();
        c.end(OK);
        c.end(OK); // a second end records nothing more
        r.end("GET /a/{id}", 502);
        r.end("GET /a/{id}", 502);
        tracer.close();
        assertThat(received).hasSize(2);
        Span call = received.get(0);
        Span server = received.get(1);
        assertThat(server.getKind()).isEqualTo(Span.SpanKind.SPAN_KIND_SERVER);
        assertThat(server.getName()).isEqualTo("GET /a/{id}");
        assertThat(hex(server.getParentSpanId().toByteArray())).isEqualTo("00f067aa0ba902b7");
        assertThat(server.getTraceState()).isEqualTo("k=v");
        assertThat(server.getFlags()).isEqualTo(0x301); // sampled, parent remote
        assertThat(server.getStatus().getCode().getNumber()).isEqualTo(OtlpTraceEncoder.STATUS_ERROR);
        assertThat(call.getKind()).isEqualTo(Span.SpanKind.SPAN_KIND_CLIENT);
        assertThat(ByteBuffer.wrap(call.getSpanId().toByteArray()).getLong()).isEqualTo(sent.spanId());
        assertThat(call.getParentSpanId()).isEqualTo(server.getSpanId());
        assertThat(call.getStartTimeUnixNano()).isBetween(server.getStartTimeUnixNano(), call.getEndTimeUnixNano());
        assertThat(call.getEndTimeUnixNano()).isLessThanOrEqualTo(server.getEndTimeUnixNano());
        long now = System.currentTimeMillis() * 1_000_000L;
        assertThat(server.getStartTimeUnixNano()).isBetween(now - 60_000_000_000L, now);
        assertThat(call.getAttributesList().stream().filter(kv -> kv.getKey().equals("weft.destination")).findFirst()
                .orElseThrow().getValue().getStringValue()).isEqualTo("http://127.0.0.2:19001");
        assertThat(tracer.exported()).isEqualTo(2);
        assertThat(tracer.dropped()).isZero();
    }

    @Test
    void samplingFollowsTheCallerOrElseTheShareOfNewTraces() throws Exception {
        tracer = new OtlpTracer(receiver(), 0.0, "svc", 100, 100, Duration.ofHours(1));
        request(null); // a new trace at sample 0: not recorded
        Tracer.RequestTrace unsampled = tracer.begin("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", null,
                "GET", "/a/1");
        TraceParent sent = TraceParent.parse(unsampled.call("b", BACKEND).traceparent());
        assertThat(sent.traceId()).isEqualTo("4bf92f3577b34da6a3ce929d0e0e4736");
        assertThat(sent.sampled()).isFalse();
        assertThat(sent.spanId()).isNotEqualTo(0x00f067aa0ba902b7L);
        unsampled.end("GET /a/{id}", 200);
        request("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"); // the caller sampled it: recorded
        tracer.close();
        assertThat(received).hasSize(4);
        // the SDK's traceIdRatioBased rule on the trace id's last 64 bits
        OtlpTracer half = new OtlpTracer(receiver(), 0.5, "svc", 1, 1, Duration.ofHours(1));
        try {
            long bound = (long) (0.5 * Long.MAX_VALUE);
            assertThat(half.samples(bound - 1)).isTrue();
            assertThat(half.samples(-(bound - 1))).isTrue();
            assertThat(half.samples(bound)).isFalse();
            assertThat(half.samples(Long.MAX_VALUE)).isFalse();
            assertThat(half.samples(0)).isTrue();
        } finally {
            half.close();
        }
    }

    @Test
    void aFullBatchIsSentWithoutWaitingForThePeriodAndCloseSendsTheRest() throws Exception {
        tracer = new OtlpTracer(receiver(), 1.0, "svc", 1_000, 8, Duration.ofHours(1));
        for (int i = 0; i < 5; i++) {
            request(null); // 20 spans: two batches of 8, and 4 left
        }
        await("two full batches received").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(10))
                .until(() -> received.size() >= 16);
        assertThat(batches).containsExactly(8, 8);
        tracer.close();
        assertThat(batches).containsExactly(8, 8, 4);
        assertThat(tracer.exported()).isEqualTo(20);
    }

    @Test
    void aFullQueueDropsAndCountsSpansInsteadOfWaiting() throws Exception {
        hold = true; // the receiver holds the first export: the queue behind it fills
        tracer = new OtlpTracer(receiver(), 1.0, "svc", 10, 4, Duration.ofHours(1));
        request(null); // 4 spans: one batch, taken by the export thread, held by the receiver
        await("the first batch was taken").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(10))
                .until(() -> tracer.queued() == 0);
        long t0 = System.nanoTime();
        for (int i = 0; i < 10; i++) {
            request(null); // 40 more spans while the export is held: 10 fit in the queue
        }
        assertThat(TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - t0)).as("no request waited").isLessThan(5);
        assertThat(tracer.dropped()).isEqualTo(30);
        assertThat(tracer.queued()).isEqualTo(10);
        release.countDown();
        tracer.close();
        assertThat(tracer.exported()).isEqualTo(14);
        assertThat(received).hasSize(14);
    }

    private static String hex(byte[] b) {
        return java.util.HexFormat.of().formatHex(b);
    }
}
