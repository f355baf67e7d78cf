package dev.weft.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import dev.weft.config.ConfigException;
import dev.weft.gateway.config.GatewayConfig;
import dev.weft.gateway.config.GatewayConfigLoader;
import dev.weft.gateway.server.Gateway;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Access log, trace context and OTLP export of a real gateway, over loopback: the backend is a small
 * recording HTTP server, the OTLP receiver a small HTTP server that decodes the exporter's protobuf payload
 * with the opentelemetry-proto classes.
 */
class ObserveIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String INBOUND = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    /** Headers each backend request carried: traceparent, tracestate, path. */
    private final List<Map<String, String>> received = new CopyOnWriteArrayList<>();
    private final List<ExportTraceServiceRequest> exported = new CopyOnWriteArrayList<>();
    private HttpServer backend;
    private HttpServer otlp;
    private Gateway gw;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @TempDir
    Path dir;

    @BeforeEach
    void startServers() throws Exception {
        backend = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        backend.createContext("/", ex -> {
            String tp = ex.getRequestHeaders().getFirst("traceparent");
            String ts = ex.getRequestHeaders().getFirst("tracestate");
            received.add(Map.of("path", ex.getRequestURI().getPath(), "traceparent", tp == null ? "" : tp,
                    "tracestate", ts == null ? "" : ts));
            int status = ex.getRequestURI().getPath().startsWith("/fail") ? 503 : 200;
            byte[] body = "{\"ok\":true}".getBytes(StandardCharsets.UTF_8);
            ex.getResponseHeaders().add("Content-Type", "application/json");
            ex.sendResponseHeaders(status, body.length);
            ex.getResponseBody().write(body);
            ex.close();
        });
        backend.start();
        otlp = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        otlp.createContext("/v1/traces", ex -> {
            byte[] body = ex.getRequestBody().readAllBytes();
            exported.add(ExportTraceServiceRequest.parseFrom(body));
            ex.getResponseHeaders().add("Content-Type", "application/x-protobuf");
            ex.sendResponseHeaders(200, -1);
            ex.close();
        });
        otlp.start();
    }

    @AfterEach
    void stop() {
        if (gw != null) {
            gw.close();
        }
        backend.stop(0);
        otlp.stop(0);
        http.close();
    }

    private String backendUrl() {
        return "http://127.0.0.1:" + backend.getAddress().getPort();
    }

    private Path accessLog() {
        return dir.resolve("access.log");
    }

    private void start(String extra) throws Exception {
        Path f = dir.resolve("gw.yaml");
        Files.writeString(f, """
                access_log: %s
                %s
                routes:
                  - get: /two
                    calls:
                      a: {url: "B/a"}
                      b: {url: "B/b", needs: [a]}
                  - get: /fails
                    calls:
                      f: {url: "B/fail"}
                """.formatted(accessLog(), extra).replace("B/", backendUrl() + "/"));
        GatewayConfig cfg = GatewayConfigLoader.load(f);
        gw = Gateway.start(cfg, new InetSocketAddress("127.0.0.1", 0), null, line -> { });
    }

    private HttpResponse<String> get(String path, String... headers) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(gw.url() + path)).timeout(Duration.ofSeconds(30));
        if (headers.length > 0) {
            b.headers(headers);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private List<JsonNode> logLines() throws Exception {
        gw.close(); // flushes the access log
        gw = null;
        List<JsonNode> out = new ArrayList<>();
        for (String l : Files.readAllLines(accessLog())) {
            out.add(JSON.readTree(l));
        }
        return out;
    }

    @Test
    void everyBackendCallCarriesTheCallersTraceWithANewSpan() throws Exception {
        start("");
        HttpResponse<String> r = get("/two", "traceparent", INBOUND, "tracestate", "congo=t61rcWkgMzE");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(received).hasSize(2);
        List<String> spans = new ArrayList<>();
        for (Map<String, String> m : received) {
            String[] p = m.get("traceparent").split("-");
            assertThat(p).hasSize(4);
            assertThat(p[0]).isEqualTo("00");
            assertThat(p[1]).isEqualTo("4bf92f3577b34da6a3ce929d0e0e4736");
            assertThat(p[2]).matches("[0-9a-f]{16}").isNotEqualTo("00f067aa0ba902b7");
            assertThat(p[3]).isEqualTo("01");
            assertThat(m.get("tracestate")).isEqualTo("congo=t61rcWkgMzE");
            spans.add(p[2]);
        }
        assertThat(spans).doesNotHaveDuplicates();
        JsonNode line = logLines().getFirst();
        assertThat(line.get("trace_id").asText()).isEqualTo("4bf92f3577b34da6a3ce929d0e0e4736");
    }

    @Test
    void aMalformedTraceparentStartsANewTrace() throws Exception {
        start("");
        String bad = "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01"; // upper case: not W3C
        get("/two", "traceparent", bad, "tracestate", "congo=t61rcWkgMzE");
        get("/two");
        assertThat(received).hasSize(4);
        String first = received.get(0).get("traceparent").split("-")[1];
        String second = received.get(1).get("traceparent").split("-")[1];
        String third = received.get(2).get("traceparent").split("-")[1];
        assertThat(first).matches("[0-9a-f]{32}").isNotEqualTo("4bf92f3577b34da6a3ce929d0e0e4736")
                .isEqualTo(second).isNotEqualTo(third);
        assertThat(received.get(0).get("tracestate")).isEmpty(); // a tracestate belongs to the trace it came with
    }

    @Test
    void eachRequestWritesOneJsonLineWithItsStatusPathAndFailedCalls() throws Exception {
        start("");
        assertThat(get("/two").statusCode()).isEqualTo(200);
        int failedStatus = get("/fails").statusCode();
        assertThat(get("/nowhere").statusCode()).isEqualTo(404);
        List<JsonNode> lines = logLines();
        assertThat(lines).hasSize(3);
        JsonNode ok = lines.get(0);
        assertThat(ok.get("method").asText()).isEqualTo("GET");
        assertThat(ok.get("path").asText()).isEqualTo("/two");
        assertThat(ok.get("route").asText()).isEqualTo("GET /two");
        assertThat(ok.get("status").asInt()).isEqualTo(200);
        assertThat(ok.get("completed").asBoolean()).isTrue();
        assertThat(ok.get("bytes").asInt()).isPositive();
        assertThat(ok.get("duration_ms").isNumber()).isTrue();
        assertThat(ok.get("remote").asText()).startsWith("127.0.0.1:");
        assertThat(ok.get("trace_id").asText()).matches("[0-9a-f]{32}");
        assertThat(ok.get("ts").asText()).isNotEmpty();
        assertThat(ok.get("failed")).isEmpty();
        JsonNode failed = lines.get(1);
        assertThat(failed.get("status").asInt()).isEqualTo(failedStatus);
        assertThat(failed.get("completed").asBoolean()).isFalse();
        assertThat(failed.get("failed").get(0).get("call").asText()).isEqualTo("f");
        assertThat(failed.get("failed").get(0).get("reason").asText()).isEqualTo("status-503");
        JsonNode none = lines.get(2);
        assertThat(none.get("status").asInt()).isEqualTo(404);
        assertThat(none.get("route").isNull()).isTrue();
    }

    @Test
    void accessLogDropsAreCountedInMetrics() throws Exception {
        start("");
        get("/two");
        String metrics = get("/-/metrics").body();
        assertThat(metrics).contains("weft_access_log_dropped_total").contains("weft_access_log_written_total");
    }

    @Test
    void spansOfTheRequestAndEachCallAreExportedOverOtlp() throws Exception {
        start("tracing: {otlp: http://127.0.0.1:" + otlp.getAddress().getPort() + ", sample: 1.0}");
        get("/two", "traceparent", INBOUND);
        get("/fails");
        assertThat(get("/-/metrics").body()).contains("weft_tracing_spans_exported_total")
                .contains("weft_tracing_spans_dropped_total 0.0").contains("weft_tracing_spans_lost_total 0.0");
        gw.close(); // shutdown exports what is queued
        gw = null;
        List<Span> spans = new ArrayList<>();
        for (ExportTraceServiceRequest req : exported) {
            for (ResourceSpans rs : req.getResourceSpansList()) {
                assertThat(attr(rs.getResource().getAttributesList(), "service.name")).isEqualTo("weft-gateway");
                for (ScopeSpans ss : rs.getScopeSpansList()) {
                    spans.addAll(ss.getSpansList());
                }
            }
        }
        assertThat(spans).hasSize(6); // three requests (one to /-/metrics), three calls
        String inboundTrace = "4bf92f3577b34da6a3ce929d0e0e4736";
        Span server = spans.stream().filter(s -> s.getKind() == Span.SpanKind.SPAN_KIND_SERVER
                && hex(s.getTraceId().toByteArray()).equals(inboundTrace)).findFirst().orElseThrow();
        assertThat(hex(server.getParentSpanId().toByteArray())).isEqualTo("00f067aa0ba902b7");
        assertThat(attr(server.getAttributesList(), "http.route")).isEqualTo("GET /two");
        assertThat(attr(server.getAttributesList(), "http.request.method")).isEqualTo("GET");
        assertThat(attr(server.getAttributesList(), "url.path")).isEqualTo("/two");
        List<Span> calls = spans.stream().filter(s -> s.getKind() == Span.SpanKind.SPAN_KIND_CLIENT
                && hex(s.getTraceId().toByteArray()).equals(inboundTrace)).toList();
        assertThat(calls).hasSize(2);
        for (Span c : calls) {
            assertThat(c.getParentSpanId()).isEqualTo(server.getSpanId());
            assertThat(attr(c.getAttributesList(), "weft.destination")).isEqualTo(backendUrl());
            assertThat(attr(c.getAttributesList(), "weft.outcome")).isEqualTo("ok");
            assertThat(c.getAttributesList().stream().filter(kv -> kv.getKey().equals("weft.attempt_kinds"))
                    .findFirst().orElseThrow().getValue().getArrayValue().getValues(0).getStringValue())
                    .isEqualTo("first");
        }
        assertThat(calls.stream().map(c -> attr(c.getAttributesList(), "weft.call"))).containsExactlyInAnyOrder("a", "b");
        // the span id the backend received is the call span's
        List<String> sent = received.stream().limit(2).map(m -> m.get("traceparent").split("-")[2]).toList();
        assertThat(calls.stream().map(c -> hex(c.getSpanId().toByteArray()))).containsExactlyInAnyOrderElementsOf(sent);
        Span failed = spans.stream().filter(s -> "f".equals(attr(s.getAttributesList(), "weft.call"))).findFirst()
                .orElseThrow();
        assertThat(attr(failed.getAttributesList(), "weft.outcome")).isEqualTo("status-503");
        assertThat(failed.getStatus().getCode()).isEqualTo(io.opentelemetry.proto.trace.v1.Status.StatusCode.STATUS_CODE_ERROR);
    }

    @Test
    void anUnsampledRequestPropagatesItsTraceButRecordsNoSpan() throws Exception {
        start("tracing: {otlp: http://127.0.0.1:" + otlp.getAddress().getPort() + ", sample: 1.0}");
        String unsampled = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"; // flags 00: the caller did not sample
        get("/two", "traceparent", unsampled);
        get("/two", "traceparent", INBOUND);
        gw.close();
        gw = null;
        List<String> spanIds = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            String[] p = received.get(i).get("traceparent").split("-");
            assertThat(p[1]).isEqualTo("4bf92f3577b34da6a3ce929d0e0e4736");
            assertThat(p[2]).matches("[0-9a-f]{16}").isNotEqualTo("00f067aa0ba902b7").isNotEqualTo("0000000000000000");
            assertThat(p[3]).isEqualTo("00");
            spanIds.add(p[2]);
        }
        assertThat(spanIds).doesNotHaveDuplicates();
        List<Span> spans = new ArrayList<>();
        for (ExportTraceServiceRequest req : exported) {
            for (ResourceSpans rs : req.getResourceSpansList()) {
                for (ScopeSpans ss : rs.getScopeSpansList()) {
                    spans.addAll(ss.getSpansList());
                }
            }
        }
        assertThat(spans).as("only the sampled request's three spans").hasSize(3);
        assertThat(spans.stream().map(s -> hex(s.getSpanId().toByteArray()))).doesNotContainAnyElementsOf(spanIds);
    }

    @Test
    void checkNamesTheLineAndColumnOfBadKeys() {
        assertThatThrownBy(() -> GatewayConfigLoader.parse("gw.yaml", """
                access_log: ""
                tracing:
                  otlp: ftp://x
                  sample: 2
                  color: red
                routes:
                  - get: /a
                    calls:
                      a: {url: "http://127.0.0.1:1/a"}
                """)).isInstanceOf(ConfigException.class)
                .hasMessageContaining("gw.yaml:1:13").hasMessageContaining("access_log")
                .hasMessageContaining("gw.yaml:3:9").hasMessageContaining("tracing.otlp")
                .hasMessageContaining("gw.yaml:4:11")
                .hasMessageContaining("gw.yaml:5:3").hasMessageContaining("color");
    }

    private static String attr(List<KeyValue> kvs, String key) {
        return kvs.stream().filter(kv -> kv.getKey().equals(key)).map(kv -> kv.getValue().getStringValue())
                .findFirst().orElse(null);
    }

    private static String hex(byte[] b) {
        return HexFormat.of().formatHex(b);
    }
}
