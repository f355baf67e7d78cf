package dev.weft.gateway.observe;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.common.AttributesBuilder;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.TraceFlags;
import io.opentelemetry.api.trace.TraceState;
import io.opentelemetry.context.Context;
import io.opentelemetry.exporter.internal.otlp.traces.TraceRequestMarshaler;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.SpanLimits;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link OtlpTraceEncoder} writes the bytes the OpenTelemetry SDK's own OTLP marshaler writes for the same spans
 * (random spans made by the SDK: every attribute type, arrays, events, links, remote and local parents, trace
 * state, statuses, dropped counts, strings of any Unicode and of lengths across the one-byte length boundary),
 * and those bytes decode with the opentelemetry-proto classes.
 */
class OtlpTraceEncoderTest {

    /** What to build one span from. */
    record SpanSpec(String name, SpanKind kind, int parent, List<Map.Entry<String, Object>> attributes,
                    List<String> events, int links, Map.Entry<StatusCode, String> status, String traceState) {
    }

    /** Spans made by the SDK from the specs, as its exporters receive them. */
    static List<SpanData> make(Resource resource, String scope, List<SpanSpec> specs) {
        List<SpanData> out = new ArrayList<>();
        SpanExporter collect = new SpanExporter() {
            @Override
            public CompletableResultCode export(Collection<SpanData> spans) {
                out.addAll(spans);
                return CompletableResultCode.ofSuccess();
            }

            @Override
            public CompletableResultCode flush() {
                return CompletableResultCode.ofSuccess();
            }

            @Override
            public CompletableResultCode shutdown() {
                return CompletableResultCode.ofSuccess();
            }
        };
        // a low attribute limit, so that some spans drop attributes and carry a dropped count
        try (SdkTracerProvider p = SdkTracerProvider.builder().setResource(resource)
                .setSpanLimits(SpanLimits.builder().setMaxNumberOfAttributes(6).setMaxNumberOfLinks(2)
                        .setMaxNumberOfEvents(2).build())
                .addSpanProcessor(SimpleSpanProcessor.create(collect)).build()) {
            io.opentelemetry.api.trace.Tracer t = p.tracerBuilder(scope).setInstrumentationVersion("1.2.3")
                    .setSchemaUrl("https://opentelemetry.io/schemas/1.24.0").build();
            Span local = t.spanBuilder("local parent").startSpan();
            int n = 0;
            for (SpanSpec s : specs) {
                n++;
                SpanBuilder b = t.spanBuilder(s.name()).setSpanKind(s.kind());
                TraceState state = s.traceState().isEmpty() ? TraceState.getDefault()
                        : TraceState.builder().put("weft", s.traceState()).put("k" + n, "v").build();
                String traceId = HexFormat.of().toHexDigits((long) n * 0x9E3779B97F4A7C15L) + "00000000000000a" + (n % 10);
                switch (s.parent()) {
                    case 0 -> b.setNoParent();
                    case 1 -> b.setParent(Context.root().with(local));
                    default -> b.setParent(Context.root().with(Span.wrap(SpanContext.createFromRemoteParent(
                            traceId, "00f067aa0ba902b" + (n % 10), TraceFlags.getSampled(), state))));
                }
                for (int l = 0; l < s.links(); l++) {
                    b.addLink(SpanContext.create(traceId, "0000000000000ab" + l, TraceFlags.getDefault(), state),
                            Attributes.of(AttributeKey.longKey("link"), (long) l));
                }
                Span span = b.startSpan();
                for (Map.Entry<String, Object> a : s.attributes()) {
                    set(span, a.getKey(), a.getValue());
                }
                for (String e : s.events()) {
                    span.addEvent(e, Attributes.of(AttributeKey.stringKey("e"), e, AttributeKey.booleanKey("b"), true));
                }
                if (s.status().getKey() != StatusCode.UNSET) {
                    span.setStatus(s.status().getKey(), s.status().getValue());
                }
                span.end();
            }
            // the local parent is not ended: only the specs' spans are exported
        }
        return out;
    }

    @SuppressWarnings("unchecked")
    private static void set(Span span, String key, Object v) {
        switch (v) {
            case String s -> span.setAttribute(key, s);
            case Long l -> span.setAttribute(key, l);
            case Double d -> span.setAttribute(key, d);
            case Boolean b -> span.setAttribute(key, b);
            case String[] a -> span.setAttribute(AttributeKey.stringArrayKey(key), Arrays.asList(a));
            case Long[] a -> span.setAttribute(AttributeKey.longArrayKey(key), Arrays.asList(a));
            case Double[] a -> span.setAttribute(AttributeKey.doubleArrayKey(key), Arrays.asList(a));
            case Boolean[] a -> span.setAttribute(AttributeKey.booleanArrayKey(key), Arrays.asList(a));
            default -> throw new IllegalArgumentException(v.toString());
        }
    }

    static byte[] sdk(Collection<SpanData> spans) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        TraceRequestMarshaler.create(spans).writeBinaryTo(out);
        return out.toByteArray();
    }

    static byte[] ours(OtlpTraceEncoder enc, Collection<SpanData> spans) {
        int n = enc.encode(spans);
        return Arrays.copyOf(enc.buffer(), n);
    }

    @Property(tries = 300)
    void writesTheSdksBytes(@ForAll("spans") List<SpanSpec> specs) throws IOException {
        Resource resource = Resource.create(Attributes.of(AttributeKey.stringKey("service.name"), "weft-gateway",
                AttributeKey.longKey("pid"), 42L), "https://opentelemetry.io/schemas/1.24.0");
        List<SpanData> spans = make(resource, "dev.weft.gateway", specs);
        OtlpTraceEncoder enc = new OtlpTraceEncoder();
        byte[] ours = ours(enc, spans);
        assertThat(ours).isEqualTo(sdk(spans));
        assertThat(ExportTraceServiceRequest.parseFrom(ours).getResourceSpans(0).getScopeSpans(0).getSpansCount())
                .isEqualTo(spans.size());
        // the buffer is reused: a second batch is written from its start, not after the first
        List<SpanData> half = spans.subList(0, spans.size() / 2 + 1);
        assertThat(ours(enc, half)).isEqualTo(sdk(half));
    }

    @Provide
    Arbitrary<List<SpanSpec>> spans() {
        Arbitrary<String> text = Arbitraries.oneOf(
                Arbitraries.strings().ofMaxLength(200),                                   // any char, surrogates too
                Arbitraries.strings().withCharRange(' ', '~').ofMinLength(100).ofMaxLength(300), // > 127 bytes
                Arbitraries.of("", "ok", "GET /a/{id}", "http://127.0.0.2:19001", "é", "日本", "😀"));
        Arbitrary<Object> value = Arbitraries.oneOf(
                text.map(s -> (Object) s),
                Arbitraries.longs().map(l -> (Object) l),
                Arbitraries.doubles().map(d -> (Object) d),
                Arbitraries.of(Double.NaN, -0.0, Double.POSITIVE_INFINITY).map(d -> (Object) d),
                Arbitraries.of(true, false).map(b -> (Object) b),
                text.array(String[].class).ofMaxSize(4).map(a -> (Object) a),
                Arbitraries.longs().map(l -> l).array(Long[].class).ofMaxSize(4).map(a -> (Object) a),
                Arbitraries.doubles().map(d -> d).array(Double[].class).ofMaxSize(3).map(a -> (Object) a),
                Arbitraries.of(true, false).array(Boolean[].class).ofMaxSize(3).map(a -> (Object) a));
        Arbitrary<Map.Entry<String, Object>> attribute = Combinators.combine(
                Arbitraries.of("http.route", "weft.call", "k", "url.path", "ключ").flatMap(k ->
                        Arbitraries.integers().between(0, 9).map(i -> k + (i == 0 ? "" : i))),
                value).as(Map::entry);
        Arbitrary<SpanSpec> spec = Combinators.combine(
                text.filter(s -> !s.isBlank()),
                Arbitraries.of(SpanKind.class),
                Arbitraries.integers().between(0, 2),
                attribute.list().ofMaxSize(9),
                text.list().ofMaxSize(3),
                Arbitraries.integers().between(0, 3),
                Combinators.combine(Arbitraries.of(StatusCode.class), text).as(Map::entry),
                Arbitraries.of("", "abc", "x-y"))
                .as(SpanSpec::new);
        return spec.list().ofMinSize(1).ofMaxSize(12);
    }

    @Test
    void spansOfTwoResourcesAndScopesAreGroupedAsTheSdkGroupsThem() throws IOException {
        SpanSpec one = new SpanSpec("a", SpanKind.SERVER, 0, List.of(), List.of(), 0, Map.entry(StatusCode.UNSET, ""), "");
        SpanSpec two = new SpanSpec("b", SpanKind.CLIENT, 1, List.of(Map.entry("k", "v")), List.of(), 0,
                Map.entry(StatusCode.ERROR, "status-503"), "");
        Resource r1 = Resource.create(Attributes.of(AttributeKey.stringKey("service.name"), "one"));
        Resource r2 = Resource.create(Attributes.of(AttributeKey.stringKey("service.name"), "two"));
        List<SpanData> spans = new ArrayList<>();
        spans.addAll(make(r1, "s1", List.of(one, two)));
        spans.addAll(make(r2, "s1", List.of(two)));
        spans.addAll(make(r1, "s2", List.of(one)));
        ExportTraceServiceRequest ours = ExportTraceServiceRequest.parseFrom(ours(new OtlpTraceEncoder(), spans));
        ExportTraceServiceRequest sdk = ExportTraceServiceRequest.parseFrom(sdk(spans));
        assertThat(grouped(ours)).isEqualTo(grouped(sdk));
        assertThat(ours.getResourceSpansCount()).isEqualTo(2);
        assertThat(ours.getResourceSpansList().stream().mapToInt(ResourceSpans::getScopeSpansCount).sum()).isEqualTo(3);
    }

    /** Each resource's scopes and their spans, in an order that does not depend on the writer's. */
    private static Map<String, Map<String, List<String>>> grouped(ExportTraceServiceRequest r) {
        Map<String, Map<String, List<String>>> g = new TreeMap<>();
        for (ResourceSpans rs : r.getResourceSpansList()) {
            Map<String, List<String>> scopes = g.computeIfAbsent(rs.getResource().toString(), k -> new TreeMap<>());
            for (ScopeSpans ss : rs.getScopeSpansList()) {
                scopes.computeIfAbsent(ss.getScope().toString(), k -> new ArrayList<>())
                        .addAll(ss.getSpansList().stream().map(Object::toString).toList());
            }
        }
        return g;
    }

    @Test
    void noSpansWriteNothing() {
        assertThat(new OtlpTraceEncoder().encode(List.of())).isZero();
    }
}
