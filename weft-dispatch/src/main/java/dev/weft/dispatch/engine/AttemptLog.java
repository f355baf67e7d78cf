package dev.weft.dispatch.engine;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.util.ByteArrayBuilder;
import dev.weft.client.CallResult;
import dev.weft.observe.LineSink;
import dev.weft.observe.TraceParent;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;

/**
 * The dispatcher's access log (one JSON line per delivery attempt, off the lane's thread through a bounded
 * buffer: dropped and counted in {@code weft_access_log_dropped_total} when full) and the trace context of
 * each attempt: the record's own {@code traceparent} when it carries a valid one, else a trace of the record's
 * own, the same for every attempt of it (its id derived from the group and the record's first
 * topic/partition/offset, so a parked and retried delivery stays in its trace); a new span id per attempt.
 */
public final class AttemptLog implements AutoCloseable {
    private static final JsonFactory JSON = new JsonFactory();
    /** No access log: trace context only. */
    static final AttemptLog OFF = new AttemptLog(null);

    private final LineSink sink;

    private AttemptLog(LineSink sink) {
        this.sink = sink;
    }

    /** Opens {@code target} (null: off) and registers its counters. */
    public static AttemptLog open(LineSink.Target target, MeterRegistry registry) throws IOException {
        if (target == null) {
            return OFF;
        }
        LineSink s = LineSink.open(target, LineSink.DEFAULT_CAPACITY, "weft-dispatch-access-log");
        FunctionCounter.builder("weft.access_log.dropped", s, LineSink::dropped)
                .description("access-log lines dropped because the log's buffer was full").register(registry);
        FunctionCounter.builder("weft.access_log.written", s, LineSink::written)
                .description("access-log lines written").register(registry);
        return new AttemptLog(s);
    }

    /** The trace of {@code d}'s record (see the class comment). */
    static TraceParent traceOf(Delivery d, String group) {
        TraceParent own = TraceParent.parse(d.header(TraceParent.HEADER));
        if (own != null) {
            return own;
        }
        try {
            byte[] h = MessageDigest.getInstance("SHA-256")
                    .digest((group + "/" + d.origin()).getBytes(StandardCharsets.UTF_8));
            long hi = 0;
            long lo = 0;
            long span = 0;
            for (int i = 0; i < 8; i++) {
                hi = hi << 8 | (h[i] & 0xff);
                lo = lo << 8 | (h[8 + i] & 0xff);
                span = span << 8 | (h[16 + i] & 0xff);
            }
            return new TraceParent(hi == 0 && lo == 0 ? 1 : hi, lo, span == 0 ? 1 : span, 0);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The record's {@code tracestate} to pass on: only with its own valid traceparent, and when well formed. */
    static String stateOf(Delivery d) {
        return TraceParent.parse(d.header(TraceParent.HEADER)) == null ? null
                : TraceParent.cleanState(d.header(TraceParent.STATE_HEADER));
    }

    /** One attempt is over: it was sent in {@code trace} (a span of it). */
    void attempt(String endpoint, Delivery d, TraceParent trace, CallResult r, long nanos, AttemptOutcome outcome) {
        if (sink == null) {
            return;
        }
        ByteArrayBuilder buf = new ByteArrayBuilder(256);
        try (JsonGenerator g = JSON.createGenerator(buf)) {
            g.writeStartObject();
            g.writeStringField("ts", Instant.now().toString());
            g.writeStringField("endpoint", endpoint);
            g.writeStringField("webhook_id", d.webhookId());
            g.writeNumberField("attempt", d.attempts() + 1);
            g.writeNumberField("status", r.status());
            g.writeNumberField("duration_ms", Math.round(nanos / 1000.0) / 1000.0);
            g.writeStringField("outcome", outcome.label());
            if (r.message() != null) {
                g.writeStringField("reason", r.message());
            }
            g.writeStringField("origin", d.origin());
            g.writeStringField("trace_id", trace.traceId());
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        sink.offer(buf.toByteArray());
    }

    @Override
    public void close() {
        if (sink != null) {
            sink.close();
        }
    }
}
