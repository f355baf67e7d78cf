package dev.weft.gateway.observe;

import dev.weft.client.Attempt;
import dev.weft.client.CallFailure;
import dev.weft.client.CallResult;
import dev.weft.http.Headers;
import dev.weft.client.Reason;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import io.opentelemetry.proto.trace.v1.Status;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What {@link OtlpTraceEncoder} writes decodes with the opentelemetry-proto classes (the reference decoder) into the
 * spans it was given: random ids, times, statuses and outcomes, names, paths and routes of any Unicode and of
 * lengths across the one-byte length boundaries, batches of 0 to many spans.
 */
class OtlpTraceEncoderTest {
    private static final Map<String, String> RESOURCE = resource();

    private static Map<String, String> resource() {
        Map<String, String> r = new LinkedHashMap<>();
        r.put("service.name", "weft-gateway");
        r.put("telemetry.sdk.name", "weft");
        return r;
    }

    /** A request's span as the test gives it. */
    record Server(long traceHi, long traceLo, long spanId, long parentId, boolean remote, String state, long start,
                  long duration, String method, String path, String route, int status) {
        byte[] write() {
            ProtoWriter w = new ProtoWriter(8); // small, so that every write grows it
            OtlpTraceEncoder.serverSpan(w, traceHi, traceLo, spanId, parentId, remote, state, start, start + duration,
                    method, path, route, status);
            return w.toByteArray();
        }
    }

    /** A call's span as the test gives it. */
    record Call(long traceHi, long traceLo, long spanId, long parentId, long start, long duration, String name,
                String destination, CallResult result) {
        byte[] write() {
            ProtoWriter w = new ProtoWriter(8);
            OtlpTraceEncoder.callSpan(w, traceHi, traceLo, spanId, parentId, null, start, start + duration, name,
                    destination, result);
            return w.toByteArray();
        }
    }

    @Property(tries = 300)
    void aRequestsSpanDecodesAsWritten(@ForAll("servers") Server s) throws Exception {
        Span span = only(decode(List.of(s.write())));
        assertThat(span.getTraceId().toByteArray()).isEqualTo(bytes(s.traceHi(), s.traceLo()));
        assertThat(span.getSpanId().toByteArray()).isEqualTo(bytes(s.spanId()));
        assertThat(span.getParentSpanId().toByteArray()).isEqualTo(s.parentId() == 0 ? new byte[0] : bytes(s.parentId()));
        assertThat(span.getTraceState()).isEqualTo(s.state() == null ? "" : s.state());
        assertThat(span.getName()).isEqualTo(s.route() != null ? s.route() : s.method());
        assertThat(span.getKind()).isEqualTo(Span.SpanKind.SPAN_KIND_SERVER);
        assertThat(span.getStartTimeUnixNano()).isEqualTo(s.start());
        assertThat(span.getEndTimeUnixNano()).isEqualTo(s.start() + s.duration());
        Map<String, AnyValue> attrs = attributes(span.getAttributesList());
        assertThat(attrs.get("http.request.method").getStringValue()).isEqualTo(s.method());
        assertThat(attrs.get("url.path").getStringValue()).isEqualTo(s.path());
        if (s.route() == null) {
            assertThat(attrs).doesNotContainKey("http.route");
        } else {
            assertThat(attrs.get("http.route").getStringValue()).isEqualTo(s.route());
        }
        assertThat(attrs.get("http.response.status_code").getIntValue()).isEqualTo(s.status());
        assertThat(span.getStatus().getCode()).isEqualTo(s.status() >= 500 ? Status.StatusCode.STATUS_CODE_ERROR
                : Status.StatusCode.STATUS_CODE_UNSET);
        assertThat(span.getFlags()).isEqualTo(0x101 | (s.remote() ? 0x200 : 0));
    }

    @Property(tries = 300)
    void aCallsSpanDecodesAsWritten(@ForAll("calls") Call c) throws Exception {
        Span span = only(decode(List.of(c.write())));
        assertThat(span.getTraceId().toByteArray()).isEqualTo(bytes(c.traceHi(), c.traceLo()));
        assertThat(span.getSpanId().toByteArray()).isEqualTo(bytes(c.spanId()));
        assertThat(span.getParentSpanId().toByteArray()).isEqualTo(bytes(c.parentId()));
        assertThat(span.getName()).isEqualTo(c.name());
        assertThat(span.getKind()).isEqualTo(Span.SpanKind.SPAN_KIND_CLIENT);
        assertThat(span.getEndTimeUnixNano() - span.getStartTimeUnixNano()).isEqualTo(c.duration());
        Map<String, AnyValue> attrs = attributes(span.getAttributesList());
        CallResult r = c.result();
        assertThat(attrs.get("weft.call").getStringValue()).isEqualTo(c.name());
        assertThat(attrs.get("weft.destination").getStringValue()).isEqualTo(c.destination());
        assertThat(attrs.get("weft.outcome").getStringValue()).isEqualTo(r.outcome());
        if (r.status() > 0) {
            assertThat(attrs.get("http.response.status_code").getIntValue()).isEqualTo(r.status());
        } else {
            assertThat(attrs).doesNotContainKey("http.response.status_code");
        }
        assertThat(attrs.get("weft.attempt_kinds").getArrayValue().getValuesList().stream()
                .map(AnyValue::getStringValue).toList())
                .isEqualTo(r.attempts().stream().map(a -> a.kind().name().toLowerCase(java.util.Locale.ROOT)).toList());
        if (r.ok()) {
            assertThat(span.getStatus()).isEqualTo(Status.getDefaultInstance());
        } else {
            assertThat(span.getStatus().getCode()).isEqualTo(Status.StatusCode.STATUS_CODE_ERROR);
            assertThat(span.getStatus().getMessage()).isEqualTo(r.outcome());
        }
        assertThat(span.getFlags()).isEqualTo(0x101);
    }

    @Property(tries = 50)
    void aBatchHoldsItsSpansInOrderUnderTheResourceAndScope(@ForAll("batches") List<Server> batch) throws Exception {
        List<byte[]> written = new ArrayList<>();
        for (Server s : batch) {
            written.add(s.write());
        }
        ExportTraceServiceRequest req = decode(written);
        if (batch.isEmpty()) {
            assertThat(req.getResourceSpans(0).getScopeSpans(0).getSpansList()).isEmpty();
        }
        ResourceSpans rs = req.getResourceSpans(0);
        assertThat(req.getResourceSpansCount()).isEqualTo(1);
        assertThat(attributes(rs.getResource().getAttributesList()).get("service.name").getStringValue())
                .isEqualTo("weft-gateway");
        assertThat(rs.getResource().getAttributesList().stream().map(KeyValue::getKey).toList())
                .containsExactly("service.name", "telemetry.sdk.name");
        ScopeSpans ss = rs.getScopeSpans(0);
        assertThat(ss.getScope().getName()).isEqualTo("dev.weft.gateway");
        assertThat(ss.getSpansList().stream().map(sp -> ByteBuffer.wrap(sp.getSpanId().toByteArray()).getLong()).toList())
                .isEqualTo(batch.stream().map(Server::spanId).toList());
    }

    @Test
    void aLongPathMovesTheLengthsOfEveryEnclosingMessage() throws Exception {
        // a path longer than 127 and than 16,383 bytes: the KeyValue and AnyValue lengths take two, then three bytes
        for (int n : new int[] {100, 127, 128, 200, 16_383, 16_384, 70_000}) {
            Server s = new Server(1, 2, 3, 0, false, null, 1_700_000_000_000_000_000L, 5, "GET", "/" + "é".repeat(n),
                    "GET /x", 200);
            assertThat(attributes(only(decode(List.of(s.write()))).getAttributesList()).get("url.path").getStringValue())
                    .isEqualTo(s.path());
        }
    }

    @Test
    void aLoneSurrogateIsWrittenAsAQuestionMark() throws Exception {
        Server s = new Server(1, 2, 3, 0, false, null, 1, 5, "GET", "/a\uD800b", null, 200);
        assertThat(only(decode(List.of(s.write()))).getAttributesList().stream()
                .filter(kv -> kv.getKey().equals("url.path")).findFirst().orElseThrow().getValue().getStringValue())
                .isEqualTo("/a?b");
    }

    private static ExportTraceServiceRequest decode(List<byte[]> spans) throws Exception {
        return ExportTraceServiceRequest.parseFrom(new OtlpTraceEncoder(RESOURCE, "dev.weft.gateway").request(spans));
    }

    private static Span only(ExportTraceServiceRequest req) {
        assertThat(req.getResourceSpansCount()).isEqualTo(1);
        assertThat(req.getResourceSpans(0).getScopeSpansCount()).isEqualTo(1);
        assertThat(req.getResourceSpans(0).getScopeSpans(0).getSpansCount()).isEqualTo(1);
        return req.getResourceSpans(0).getScopeSpans(0).getSpans(0);
    }

    private static Map<String, AnyValue> attributes(List<KeyValue> kvs) {
        Map<String, AnyValue> m = new LinkedHashMap<>();
        for (KeyValue kv : kvs) {
            assertThat(m.put(kv.getKey(), kv.getValue())).as("attribute %s written once", kv.getKey()).isNull();
        }
        return m;
    }

    private static byte[] bytes(long... longs) {
        ByteBuffer b = ByteBuffer.allocate(8 * longs.length);
        for (long l : longs) {
            b.putLong(l);
        }
        return b.array();
    }

    /**
     * Any Unicode (surrogate pairs included), of lengths around the one- and two-byte length boundaries; not a lone
     * surrogate, which UTF-8 cannot carry (it is written as {@code ?}, as by {@link String#getBytes}).
     */
    private static Arbitrary<String> text() {
        return Arbitraries.<String>oneOf(
                Arbitraries.strings().ofMinLength(1).ofMaxLength(300),
                Arbitraries.strings().ascii().ofMinLength(120).ofMaxLength(140),
                Arbitraries.strings().withCharRange('\u0080', '\uffff').ofMinLength(1).ofMaxLength(60),
                Arbitraries.of("GET /a/{id}", "b", "http://127.0.0.2:19001", "\uD83D\uDE00"))
                .filter(t -> new String(t.getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8).equals(t));
    }

    @Provide
    Arbitrary<Server> servers() {
        Arbitrary<Long> ids = Arbitraries.longs().filter(l -> l != 0);
        return Combinators.combine(
                Combinators.combine(ids, Arbitraries.longs(), ids, Arbitraries.oneOf(Arbitraries.just(0L), ids),
                        Arbitraries.of(true, false), text().injectNull(0.5)).as(java.util.Arrays::asList),
                Combinators.combine(Arbitraries.longs().between(0, Long.MAX_VALUE / 2),
                        Arbitraries.longs().between(0, 10_000_000_000L), text(), text(), text().injectNull(0.3),
                        Arbitraries.integers().between(100, 599)).as(java.util.Arrays::asList))
                .as((a, b) -> new Server((Long) a.get(0), (Long) a.get(1), (Long) a.get(2), (Long) a.get(3),
                        (Boolean) a.get(4), (String) a.get(5), (Long) b.get(0), (Long) b.get(1), (String) b.get(2),
                        (String) b.get(3), (String) b.get(4), (Integer) b.get(5)));
    }

    @Provide
    Arbitrary<Call> calls() {
        Arbitrary<Long> ids = Arbitraries.longs().filter(l -> l != 0);
        Arbitrary<List<Attempt>> attempts = Arbitraries.of(Attempt.Kind.values()).list().ofMaxSize(4)
                .map(kinds -> {
                    List<Attempt> out = new ArrayList<>();
                    for (int i = 0; i < kinds.size(); i++) {
                        out.add(new Attempt(i + 1, kinds.get(i), 200, null, 0, 1, i == 0));
                    }
                    return out;
                });
        Arbitrary<CallResult> results = Combinators.combine(Arbitraries.integers().between(0, 599),
                Arbitraries.of(Reason.values()).injectNull(0.4), attempts).as((status, reason, as) -> {
                    CallFailure f = reason == null ? null
                            : reason == Reason.STATUS ? CallFailure.status(Math.max(status, 400))
                            : CallFailure.of(reason, "why");
                    int st = f != null && f.isStatus() ? f.status() : reason == null ? Math.max(status, 100) : status;
                    return new CallResult(null, st, Headers.EMPTY, new byte[0], f, CallResult.Timings.NONE, as);
                });
        return Combinators.combine(ids, Arbitraries.longs(), ids, ids, Arbitraries.longs().between(0, 10_000_000_000L),
                text(), text(), results).as((hi, lo, span, parent, d, name, dest, r) ->
                new Call(hi, lo, span, parent, 1_700_000_000_000_000_000L, d, name, dest, r));
    }

    @Provide
    Arbitrary<List<Server>> batches() {
        return servers().list().ofMaxSize(200);
    }
}
