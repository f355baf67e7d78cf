package dev.weft.gateway.observe;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.util.ByteArrayBuilder;
import dev.weft.observe.LineSink;
import dev.weft.observe.TraceParent;
import dev.weft.gateway.config.GatewayConfig;
import dev.weft.gateway.plan.CallOutcome;
import dev.weft.server.ServerRequest;
import dev.weft.server.ServerResponse;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.time.Instant;
import java.util.Collection;

/**
 * The gateway's access log and tracer, as the config at start asks ({@code access_log}, {@code tracing}).
 * One JSON object per request and line, written off the request's thread through a bounded buffer
 * ({@link LineSink}): under overload lines are dropped and counted in {@code weft_access_log_dropped_total},
 * a request never waits for the log. With {@code tracing.otlp}, the spans exported, dropped (export queue full)
 * and lost (refused by the receiver) are counted in {@code weft_tracing_spans_*_total}.
 */
public final class GatewayObserver implements AutoCloseable {
    private static final JsonFactory JSON = new JsonFactory();

    private final Tracer tracer;
    private final LineSink accessLog;

    private GatewayObserver(Tracer tracer, LineSink accessLog) {
        this.tracer = tracer;
        this.accessLog = accessLog;
    }

    /** What {@code config} asks for; the drop counter is registered in {@code registry}. */
    public static GatewayObserver start(GatewayConfig config, MeterRegistry registry) throws IOException {
        LineSink sink = config.accessLog() == null ? null
                : LineSink.open(config.accessLog(), LineSink.DEFAULT_CAPACITY, "weft-access-log");
        if (sink != null) {
            FunctionCounter.builder("weft.access_log.dropped", sink, LineSink::dropped)
                    .description("access-log lines dropped because the log's buffer was full").register(registry);
            FunctionCounter.builder("weft.access_log.written", sink, LineSink::written)
                    .description("access-log lines written").register(registry);
        }
        Tracer tracer = Tracer.of(config.tracing(), "weft-gateway");
        if (tracer instanceof OtlpTracer t) {
            FunctionCounter.builder("weft.tracing.spans.exported", t, OtlpTracer::exported)
                    .description("spans the OTLP receiver took").register(registry);
            FunctionCounter.builder("weft.tracing.spans.dropped", t, OtlpTracer::dropped)
                    .description("spans dropped because the export queue was full").register(registry);
            FunctionCounter.builder("weft.tracing.spans.lost", t, OtlpTracer::lost)
                    .description("spans the OTLP receiver did not take after every try").register(registry);
        }
        return new GatewayObserver(tracer, sink);
    }

    /** Starts observing one request. */
    public Observed begin(ServerRequest r) {
        return new Observed(tracer.begin(r.header("traceparent"), r.header("tracestate"), r.method(), r.path()));
    }

    /** The request is answered: ends its span and queues its access-log line. */
    public void end(ServerRequest r, Observed o, ServerResponse resp, long startNanos) {
        o.trace.end(o.route, resp.status());
        if (accessLog != null) {
            accessLog.offer(line(r, o, resp, System.nanoTime() - startNanos));
        }
    }

    /**
     * A streamed answer ({@link ServerResponse#stream()}) whose head is out: its span and access-log line wait for its
     * end. Returns the answer with its stream wrapped, which ends them when the body ends ({@code completed} as the
     * status and calls say, and not when the answer's {@code grpc-status} trailer is other than 0), fails or is
     * cancelled ({@code completed: false}); the line then has the bytes handed to the connection, the time to the end,
     * and {@code "streamed": true}.
     */
    public ServerResponse endWhenStreamed(ServerRequest r, Observed o, ServerResponse resp, long startNanos) {
        dev.weft.server.BodySource inner = resp.stream();
        dev.weft.server.BodySource observed = dev.weft.server.BodySource.watched(inner, (whole, bytes) -> {
            o.trace.end(o.route, resp.status());
            if (accessLog != null) {
                accessLog.offer(line(r.method(), r.path(), o.route, resp, System.nanoTime() - startNanos, r.remote(),
                        o.trace.traceId(), o.outcomes.values(), null, bytes, whole && grpcOk(inner.trailers())));
            }
        });
        return new ServerResponse(resp.status(), resp.headers(), resp.body(), resp.trailers(), observed);
    }

    /** Whether there is an access log to write to. */
    public boolean logsAccess() {
        return accessLog != null;
    }

    /**
     * An answer the server gave without the gateway's handler ({@link dev.weft.server.HttpServer.Refusals}): a
     * 503 of the admission or of a full handler queue, or the error answer to a request that could not be read
     * ({@code r} null: no method, path or duration). Its line has {@code refused_by}; no span is recorded.
     */
    public void refused(ServerRequest r, InetSocketAddress remote, String route, ServerResponse resp,
                        dev.weft.server.HttpServer.RefusedBy by) {
        if (accessLog == null) {
            return;
        }
        TraceParent tp = r == null ? null : TraceParent.parse(r.header("traceparent"));
        accessLog.offer(line(r == null ? null : r.method(), r == null ? null : r.path(), route, resp,
                r == null ? -1 : System.nanoTime() - r.receivedNanos(), remote, tp == null ? null : tp.traceId(),
                java.util.List.of(), by));
    }

    static byte[] line(ServerRequest r, Observed o, ServerResponse resp, long nanos) {
        // a gRPC failure is an HTTP 200 whose grpc-status (in trailers, or in the head of a Trailers-Only answer) is not 0
        return line(r.method(), r.path(), o.route, resp, nanos, r.remote(), o.trace.traceId(), o.outcomes.values(),
                null, -1, grpcOk(resp.headers()) && grpcOk(resp.trailers()));
    }

    /** Whether {@code fields} say no gRPC failure: no {@code grpc-status}, or 0. */
    private static boolean grpcOk(dev.weft.http.Headers fields) {
        String s = fields.first("grpc-status");
        return s == null || s.equals("0");
    }

    private static byte[] line(String method, String path, String route, ServerResponse resp, long nanos,
                               InetSocketAddress remote, String traceId, Collection<CallOutcome> outcomes,
                               dev.weft.server.HttpServer.RefusedBy refusedBy) {
        return line(method, path, route, resp, nanos, remote, traceId, outcomes, refusedBy, -1, true);
    }

    /**
     * @param nanos       negative: unknown (written as null)
     * @param refusedBy   null for a request the handler answered
     * @param streamed    a streamed answer's body bytes, or -1 for an answer with a whole body
     * @param streamWhole whether a streamed answer ended whole
     */
    private static byte[] line(String method, String path, String route, ServerResponse resp, long nanos,
                               InetSocketAddress remote, String traceId, Collection<CallOutcome> outcomes,
                               dev.weft.server.HttpServer.RefusedBy refusedBy, long streamed, boolean streamWhole) {
        ByteArrayBuilder buf = new ByteArrayBuilder(256);
        try (JsonGenerator g = JSON.createGenerator(buf)) {
            g.writeStartObject();
            g.writeStringField("ts", Instant.now().toString());
            g.writeStringField("method", method);
            g.writeStringField("path", path);
            g.writeStringField("route", route);
            g.writeNumberField("status", resp.status());
            if (nanos < 0) {
                g.writeNullField("duration_ms");
            } else {
                g.writeNumberField("duration_ms", Math.round(nanos / 1000.0) / 1000.0);
            }
            g.writeNumberField("bytes", streamed >= 0 ? streamed : resp.body() == null ? 0 : resp.body().length);
            g.writeStringField("remote", remote == null || remote.getAddress() == null ? null
                    : remote.getAddress().getHostAddress() + ":" + remote.getPort());
            g.writeStringField("trace_id", traceId);
            boolean completed = resp.status() < 500 && refusedBy == null && streamWhole;
            for (CallOutcome c : outcomes) {
                completed &= c.ok();
            }
            g.writeBooleanField("completed", completed);
            if (refusedBy != null) {
                g.writeStringField("refused_by", refusedBy.label());
            }
            if (streamed >= 0) {
                g.writeBooleanField("streamed", true);
            }
            g.writeArrayFieldStart("failed");
            for (CallOutcome c : outcomes) {
                if (!c.ok()) {
                    g.writeStartObject();
                    g.writeStringField("call", c.name());
                    g.writeStringField("reason", c.failure().label());
                    g.writeStringField("message", c.failure().message());
                    g.writeEndObject();
                }
            }
            g.writeEndArray();
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return buf.toByteArray();
    }

    @Override
    public void close() {
        tracer.close();
        if (accessLog != null) {
            accessLog.close();
        }
    }
}
