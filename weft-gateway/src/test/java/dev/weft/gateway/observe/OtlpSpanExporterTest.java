package dev.weft.gateway.observe;

import com.sun.net.httpserver.HttpServer;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link OtlpSpanExporter} against a real OTLP/HTTP receiver on loopback (the JDK's HTTP server, decoding the
 * payload with the opentelemetry-proto classes): a batch arrives once and whole; a receiver that is briefly
 * unavailable gets the batch again; one that refuses it, or none at all, costs the batch, counted as lost.
 */
class OtlpSpanExporterTest {
    private final List<ExportTraceServiceRequest> received = new CopyOnWriteArrayList<>();
    private final AtomicInteger requests = new AtomicInteger();
    private HttpServer receiver;

    private URI receiver(int... statuses) throws IOException {
        receiver = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        receiver.createContext("/v1/traces", ex -> {
            int n = requests.getAndIncrement();
            int status = n < statuses.length ? statuses[n] : 200;
            byte[] body = ex.getRequestBody().readAllBytes();
            if (status == 200) {
                assertThat(ex.getRequestHeaders().getFirst("Content-Type")).isEqualTo("application/x-protobuf");
                received.add(ExportTraceServiceRequest.parseFrom(body));
            }
            ex.sendResponseHeaders(status, -1);
            ex.close();
        });
        receiver.start();
        return URI.create("http://127.0.0.1:" + receiver.getAddress().getPort() + "/v1/traces");
    }

    @AfterEach
    void stop() {
        if (receiver != null) {
            receiver.stop(0);
        }
    }

    /** A request of {@code n} spans, each a request's span of route {@code GET /a/{id}}. */
    private static byte[] spans(int n) {
        List<byte[]> spans = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            ProtoWriter w = new ProtoWriter(64);
            OtlpTraceEncoder.serverSpan(w, 1, 2, i + 1, 0, false, null, 1_700_000_000_000_000_000L,
                    1_700_000_000_001_000_000L, "GET", "/a/" + i, "GET /a/{id}", 200);
            spans.add(w.toByteArray());
        }
        return new OtlpTraceEncoder(Map.of("service.name", "weft-gateway"), "dev.weft.gateway").request(spans);
    }

    private static boolean export(OtlpSpanExporter e, int n) {
        return e.export(spans(n), n);
    }

    @Test
    void aBatchArrivesOnceAndWhole() throws IOException {
        OtlpSpanExporter e = new OtlpSpanExporter(receiver(), Duration.ofSeconds(5), Duration.ofMillis(50));
        assertThat(export(e, 3)).isTrue();
        assertThat(export(e, 5)).isTrue();
        assertThat(received).hasSize(2);
        assertThat(received.get(0).getResourceSpans(0).getScopeSpans(0).getSpansCount()).isEqualTo(3);
        assertThat(received.get(1).getResourceSpans(0).getScopeSpans(0).getSpansList())
                .allSatisfy(s -> assertThat(s.getName()).isEqualTo("GET /a/{id}")).hasSize(5);
        assertThat(e.exported()).isEqualTo(8);
        assertThat(e.lost()).isZero();
        e.shutdown();
        assertThat(export(e, 1)).isFalse();
        assertThat(e.lost()).isEqualTo(1);
    }

    @Test
    void aBatchTheReceiverCannotTakeYetIsSentAgain() throws IOException {
        OtlpSpanExporter e = new OtlpSpanExporter(receiver(503, 429), Duration.ofSeconds(5), Duration.ofMillis(50));
        assertThat(export(e, 4)).isTrue();
        assertThat(requests.get()).isEqualTo(3);
        assertThat(received).hasSize(1);
        assertThat(e.exported()).isEqualTo(4);
        assertThat(e.lost()).isZero();
    }

    @Test
    void aBatchTheReceiverRefusesIsLostAndCounted() throws IOException {
        OtlpSpanExporter e = new OtlpSpanExporter(receiver(400), Duration.ofSeconds(5), Duration.ofMillis(50));
        assertThat(export(e, 4)).isFalse();
        assertThat(requests.get()).isEqualTo(1); // 400 will not pass: not tried again
        assertThat(e.lost()).isEqualTo(4);
        assertThat(export(e, 2)).isTrue(); // the next batch goes through
        assertThat(e.exported()).isEqualTo(2);
    }

    @Test
    void withNoReceiverABatchIsLostAndCounted() throws IOException {
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort(); // closed again: nothing listens there
        }
        OtlpSpanExporter e = new OtlpSpanExporter(URI.create("http://127.0.0.1:" + port + "/v1/traces"),
                Duration.ofSeconds(2), Duration.ofMillis(20));
        assertThat(export(e, 7)).isFalse();
        assertThat(e.lost()).isEqualTo(7);
        assertThat(e.exported()).isZero();
    }
}
