package dev.weft.gateway.observe;

import dev.weft.client.Attempt;
import dev.weft.client.CallResult;
import dev.weft.core.trace.TraceParent;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.TraceFlags;
import io.opentelemetry.api.trace.TraceState;
import io.opentelemetry.context.Context;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.trace.IdGenerator;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;
import io.opentelemetry.sdk.trace.samplers.Sampler;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Records a span for each request (kind SERVER) and one for each backend call (kind CLIENT, its id the
 * span id the call sends), batched by the OpenTelemetry SDK ({@link BatchSpanProcessor}: a bounded queue of
 * {@link #QUEUE} spans, {@link #BATCH} a batch, at least every 5 s; spans past the queue are dropped by the SDK,
 * never waited for) and sent over OTLP/HTTP protobuf by {@link OtlpSpanExporter}. Sampling: the caller's decision
 * when the request carries a traceparent, else {@code sample} of new traces.
 */
final class OtelTracer implements Tracer {
    static final AttributeKey<String> ROUTE = AttributeKey.stringKey("http.route");
    static final AttributeKey<String> CALL = AttributeKey.stringKey("weft.call");
    static final AttributeKey<String> DESTINATION = AttributeKey.stringKey("weft.destination");
    static final AttributeKey<String> OUTCOME = AttributeKey.stringKey("weft.outcome");
    static final AttributeKey<List<String>> ATTEMPTS = AttributeKey.stringArrayKey("weft.attempt_kinds");
    static final AttributeKey<Long> STATUS = AttributeKey.longKey("http.response.status_code");
    static final AttributeKey<String> METHOD = AttributeKey.stringKey("http.request.method");
    static final AttributeKey<String> PATH = AttributeKey.stringKey("url.path");

    /**
     * Spans held for export at most (the SDK drops past it, never waits): about a second of spans at the
     * ~30,000 spans/s that 2 cores produce at sample 1.0 (the SDK's default of 2,048 dropped spans there).
     */
    static final int QUEUE = 32_768;
    /**
     * Spans in one export. Larger than the SDK's 512: each export is an HTTP request, and the JDK client's
     * per-request work was 4.8% of a traced gateway's JFR samples at 512, 1.4% at 4,096 (docs/benchmarks.md).
     */
    static final int BATCH = 4_096;
    /** {@code weft.attempt_kinds} of the usual call, one first attempt: one list for every such span. */
    private static final List<String> FIRST_ONLY = List.of("first");
    private static final String[] KIND_NAMES = kindNames();
    private static final IdGenerator IDS = IdGenerator.random();

    private final SdkTracerProvider provider;
    private final io.opentelemetry.api.trace.Tracer tracer;

    OtelTracer(URI otlp, double sample, String serviceName) {
        OtlpSpanExporter exporter = new OtlpSpanExporter(URI.create(otlp + "/v1/traces"), Duration.ofSeconds(10));
        provider = SdkTracerProvider.builder()
                .setResource(Resource.getDefault().merge(Resource.create(Attributes.of(
                        AttributeKey.stringKey("service.name"), serviceName))))
                .setSampler(Sampler.parentBased(Sampler.traceIdRatioBased(sample)))
                .addSpanProcessor(BatchSpanProcessor.builder(exporter)
                        .setMaxQueueSize(QUEUE).setMaxExportBatchSize(BATCH).build())
                .build();
        tracer = provider.get("dev.weft.gateway");
    }

    @Override
    public RequestTrace begin(String traceparent, String tracestate, String method, String path) {
        TraceParent in = TraceParent.parse(traceparent);
        Context parent = Context.root();
        String state = null;
        if (in != null) {
            state = TraceParent.cleanState(tracestate);
            parent = parent.with(Span.wrap(SpanContext.createFromRemoteParent(in.traceId(), in.spanIdHex(),
                    TraceFlags.fromByte((byte) in.flags()), TraceState.getDefault())));
        }
        // attributes go on the started span, not the builder: an unsampled span drops them at no cost (the
        // builder would copy them for the sampler, which does not read them)
        Span span = tracer.spanBuilder(method).setParent(parent).setSpanKind(SpanKind.SERVER).startSpan();
        boolean recording = span.isRecording();
        if (recording) {
            span.setAttribute(METHOD, method);
            span.setAttribute(PATH, path);
        }
        Context ctx = parent.with(span);
        String keptState = state;
        String unsampledPrefix = recording ? null : "00-" + span.getSpanContext().getTraceId() + "-";
        return new RequestTrace() {
            @Override
            public String traceId() {
                return span.getSpanContext().getTraceId();
            }

            @Override
            public String tracestate() {
                return keptState;
            }

            @Override
            public CallTrace call(String name, URI destination) {
                if (!recording) { // parent-based sampling: the calls of an unsampled request are not recorded either
                    return new Unrecorded(unsampledPrefix + IDS.generateSpanId() + "-00");
                }
                String dest = destination.getScheme() + "://" + destination.getAuthority();
                Span c = tracer.spanBuilder(name).setParent(ctx).setSpanKind(SpanKind.CLIENT)
                        .setAttribute(CALL, name).setAttribute(DESTINATION, dest).startSpan();
                SpanContext sc = c.getSpanContext();
                String header = "00-" + sc.getTraceId() + "-" + sc.getSpanId() + "-" + sc.getTraceFlags().asHex();
                return new CallTrace() {
                    @Override
                    public String traceparent() {
                        return header;
                    }

                    @Override
                    public void end(CallResult r) {
                        if (c.isRecording()) {
                            c.setAttribute(OUTCOME, r.outcome());
                            if (r.status() > 0) {
                                c.setAttribute(STATUS, (long) r.status());
                            }
                            c.setAttribute(ATTEMPTS, attemptKinds(r.attempts()));
                            if (!r.ok()) {
                                c.setStatus(StatusCode.ERROR, r.outcome());
                            }
                        }
                        c.end();
                    }
                };
            }

            @Override
            public void end(String route, int status) {
                if (span.isRecording()) {
                    if (route != null) {
                        span.updateName(route);
                        span.setAttribute(ROUTE, route);
                    }
                    span.setAttribute(STATUS, (long) status);
                    if (status >= 500) {
                        span.setStatus(StatusCode.ERROR);
                    }
                }
                span.end();
            }
        };
    }

    /** The call of an unsampled request: a new span id to propagate, nothing recorded. */
    private record Unrecorded(String traceparent) implements CallTrace {
        @Override
        public void end(CallResult result) {
        }
    }

    /** {@code weft.attempt_kinds}: the kind of each attempt in order ({@code first}, {@code retry}, {@code hedge}). */
    static List<String> attemptKinds(List<Attempt> attempts) {
        if (attempts.size() == 1 && attempts.get(0).kind() == Attempt.Kind.FIRST) {
            return FIRST_ONLY;
        }
        List<String> kinds = new ArrayList<>(attempts.size());
        for (Attempt a : attempts) {
            kinds.add(KIND_NAMES[a.kind().ordinal()]);
        }
        return kinds;
    }

    private static String[] kindNames() {
        Attempt.Kind[] kinds = Attempt.Kind.values();
        String[] names = new String[kinds.length];
        for (Attempt.Kind k : kinds) {
            names[k.ordinal()] = k.name().toLowerCase(java.util.Locale.ROOT);
        }
        return names;
    }

    /** Exports what is queued (up to 10 s), then stops. */
    @Override
    public void close() {
        provider.shutdown().join(10, TimeUnit.SECONDS);
    }
}
