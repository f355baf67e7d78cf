import dev.weft.gateway.observe.OtlpTraceEncoder;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.exporter.internal.otlp.traces.LowAllocationTraceRequestMarshaler;
import io.opentelemetry.exporter.internal.otlp.traces.TraceRequestMarshaler;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;

import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;

/**
 * What writing a batch of spans as an OTLP protobuf request costs, per span, in one process: the SDK's two
 * marshalers (the OTLP exporter's default, {@code LowAllocationTraceRequestMarshaler}, and
 * {@code TraceRequestMarshaler}) against Weft's {@link OtlpTraceEncoder}, on one batch of 4,096 spans shaped like
 * the gateway's (per request: a SERVER span with method, path, route, status; three CLIENT spans with call,
 * destination, outcome, status, attempt kinds); eight rounds of 50 batches each; and whether the bytes are the
 * same. Run:
 * <pre>
 * lab/tracing/encoder-bench.sh   (weft.jar and the SDK's OTLP marshalers from the local Maven repository)
 * </pre>
 */
public class EncoderBench {
    static List<SpanData> spans() {
        List<SpanData> out = new ArrayList<>();
        SpanExporter collect = new SpanExporter() {
            public CompletableResultCode export(Collection<SpanData> s) {
                out.addAll(s);
                return CompletableResultCode.ofSuccess();
            }

            public CompletableResultCode flush() {
                return CompletableResultCode.ofSuccess();
            }

            public CompletableResultCode shutdown() {
                return CompletableResultCode.ofSuccess();
            }
        };
        SdkTracerProvider p = SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(collect)).build();
        Tracer t = p.get("dev.weft.gateway");
        for (int i = 0; i < 1024; i++) {
            Span r = t.spanBuilder("GET").setSpanKind(SpanKind.SERVER).startSpan();
            r.setAttribute("http.request.method", "GET");
            r.setAttribute("url.path", "/a/" + i);
            Context ctx = Context.root().with(r);
            for (String n : new String[] {"b", "c", "d"}) {
                Span c = t.spanBuilder(n).setParent(ctx).setSpanKind(SpanKind.CLIENT).setAttribute("weft.call", n)
                        .setAttribute("weft.destination", "http://127.0.0.2:19001").startSpan();
                c.setAttribute("weft.outcome", "ok");
                c.setAttribute("http.response.status_code", 200L);
                c.setAttribute(AttributeKey.stringArrayKey("weft.attempt_kinds"), List.of("first"));
                c.end();
            }
            r.updateName("GET /a/{id}");
            r.setAttribute("http.route", "GET /a/{id}");
            r.setAttribute("http.response.status_code", 200L);
            r.end();
        }
        p.close();
        return out;
    }

    public static void main(String[] args) throws Exception {
        System.out.println("command: lab/tracing/encoder-bench.sh (java lab/tracing/EncoderBench.java)");
        System.out.println("machine: " + Runtime.getRuntime().availableProcessors() + " cores, "
                + System.getProperty("os.name") + " " + System.getProperty("os.version") + ", JDK "
                + Runtime.version());
        List<SpanData> spans = spans();
        ByteArrayOutputStream sdk = new ByteArrayOutputStream(1 << 22);
        LowAllocationTraceRequestMarshaler low = new LowAllocationTraceRequestMarshaler();
        OtlpTraceEncoder ours = new OtlpTraceEncoder();
        int batches = 50;
        int n = batches * spans.size();
        for (int round = 0; round < 8; round++) {
            long t0 = System.nanoTime();
            for (int k = 0; k < batches; k++) {
                sdk.reset();
                low.initialize(spans);
                low.writeBinaryTo(sdk);
                low.reset();
            }
            long t1 = System.nanoTime();
            for (int k = 0; k < batches; k++) {
                sdk.reset();
                TraceRequestMarshaler.create(spans).writeBinaryTo(sdk);
            }
            long t2 = System.nanoTime();
            int length = 0;
            for (int k = 0; k < batches; k++) {
                length = ours.encode(spans);
            }
            long t3 = System.nanoTime();
            boolean same = Arrays.equals(Arrays.copyOf(ours.buffer(), length), sdk.toByteArray());
            System.out.printf("round %d: sdk (low allocation) %d ns/span, sdk (immutable) %d ns/span, weft %d ns/span;"
                    + " %d bytes/span, same bytes: %b%n", round, (t1 - t0) / n, (t2 - t1) / n, (t3 - t2) / n,
                    length / spans.size(), same);
        }
    }
}
