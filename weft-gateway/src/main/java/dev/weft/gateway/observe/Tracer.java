package dev.weft.gateway.observe;

import dev.weft.client.CallResult;
import dev.weft.observe.ObserveReaders;
import dev.weft.observe.TraceParent;

import java.net.URI;

/**
 * Trace context for the gateway's requests: {@link #begin} reads the request's W3C {@code traceparent} (a new
 * trace when absent or malformed); each call of the plan gets the same trace id and a span id of its own.
 * {@link #propagating()} only propagates; {@link OtlpTracer} also records spans and exports them over OTLP.
 */
public interface Tracer extends AutoCloseable {

    /** The request's trace: what its calls send, and the span of the request itself. */
    interface RequestTrace {
        String traceId();

        /** The inbound {@code tracestate} when well formed, passed on unchanged; null for none. */
        String tracestate();

        /** Starts one backend call: the {@code traceparent} it sends names a new span of this trace. */
        CallTrace call(String name, URI destination);

        /** The request is answered. */
        void end(String route, int status);
    }

    /** One backend call of a request. */
    interface CallTrace {
        /** The value of the {@code traceparent} header to send. */
        String traceparent();

        /** The call is over. */
        void end(CallResult result);
    }

    RequestTrace begin(String traceparent, String tracestate, String method, String path);

    @Override
    void close();

    /** The tracer that {@code tracing} asks for: spans exported when it names an OTLP receiver. */
    static Tracer of(ObserveReaders.Tracing t, String serviceName) {
        return t == null || t.otlp() == null ? propagating() : new OtlpTracer(t.otlp(), t.sample(), serviceName);
    }

    /** Propagation only: no spans recorded, nothing exported; a new trace is not sampled (flags 00). */
    static Tracer propagating() {
        return Propagating.INSTANCE;
    }

    /**
     * A request whose trace is only passed on (no tracing, or not sampled): each call sends {@code trace}'s id and
     * flags with a span id of its own; nothing is recorded.
     */
    record Propagated(TraceParent trace, String tracestate) implements RequestTrace {
        @Override
        public String traceId() {
            return trace.traceId();
        }

        @Override
        public CallTrace call(String name, URI destination) {
            return new Sent(TraceParent.header(trace.traceHi(), trace.traceLo(), TraceParent.newSpanId(), trace.flags()));
        }

        @Override
        public void end(String route, int status) {
        }
    }

    /** A call whose {@code traceparent} is only sent: nothing is recorded. */
    record Sent(String traceparent) implements CallTrace {
        @Override
        public void end(CallResult result) {
        }
    }

    /** Propagation only. */
    final class Propagating implements Tracer {
        static final Propagating INSTANCE = new Propagating();

        private Propagating() {
        }

        @Override
        public RequestTrace begin(String traceparent, String tracestate, String method, String path) {
            TraceParent in = TraceParent.parse(traceparent);
            return in != null ? new Propagated(in, TraceParent.cleanState(tracestate))
                    : new Propagated(TraceParent.newTrace(false), null);
        }

        @Override
        public void close() {
        }
    }
}
