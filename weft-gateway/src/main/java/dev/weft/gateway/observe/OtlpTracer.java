package dev.weft.gateway.observe;

import dev.weft.client.CallResult;
import dev.weft.core.OncePer;
import dev.weft.core.WeftVersion;
import dev.weft.observe.TraceParent;

import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.LockSupport;

/**
 * Records a span for each sampled request (kind SERVER) and one for each of its backend calls (kind CLIENT, its id
 * the span id the call sends), and exports them over OTLP/HTTP protobuf. A span is written as protobuf when it
 * ends, on the request's thread ({@link OtlpTraceEncoder}), into a bounded queue of {@link #QUEUE} spans (past it
 * a span is dropped and counted, never waited for); one platform thread sends them in batches of up to
 * {@link #BATCH}, as soon as a batch is full (it looks every 50 ms) and at least every {@link #EXPORT_EVERY}
 * ({@link OtlpSpanExporter}).
 * <p>
 * Sampling, as the OpenTelemetry SDK's {@code parentBased(traceIdRatioBased(sample))}: a request whose
 * traceparent is valid is recorded when its sampled flag is set; a new trace when the last 64 bits of its id,
 * taken as a signed number, are below {@code sample} of the largest in absolute value (so that services sampling
 * by the same rule agree on a trace). The calls of an unsampled request send a new span id with flags 00 and
 * record nothing.
 * <p>
 * The OpenTelemetry SDK recorded the spans at first: with its span objects and its batch processor's copy of
 * each span before export, the export thread took 5x the CPU it takes now and the request's thread allocated 1.6x
 * the bytes, and the process 1.75x the CPU per recorded request (docs/design/observability.md).
 */
final class OtlpTracer implements Tracer {
    /**
     * Spans held for export at most: about a second of spans at the ~30,000 spans/s that 2 cores produce at
     * sample 1.0.
     */
    static final int QUEUE = 32_768;
    /** Spans in one export: each export is an HTTP request; ~900 KB at the gateway's ~220 bytes a span. */
    static final int BATCH = 4_096;
    /** A batch that is not full is sent after this long at the latest. */
    static final Duration EXPORT_EVERY = Duration.ofSeconds(5);
    /** How long {@link #close} waits for the queued spans to be sent. */
    static final Duration CLOSE_WAIT = Duration.ofSeconds(10);
    private static final long LOOK_EVERY_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
    /** Reusable writers, by thread id: a span's bytes are written in one and copied out at their length. */
    private static final int WRITERS = 16;
    private static final System.Logger LOG = System.getLogger("weft.tracing");

    private final boolean sampleAll;
    private final long sampleBound;
    private final ArrayBlockingQueue<byte[]> queue;
    private final int batch;
    private final long exportEveryNanos;
    private final OtlpTraceEncoder encoder;
    private final OtlpSpanExporter exporter;
    private final AtomicLong dropped = new AtomicLong();
    private final OncePer dropReport = new OncePer(Duration.ofSeconds(10));
    private final AtomicReferenceArray<ProtoWriter> writers = new AtomicReferenceArray<>(WRITERS);
    private final Thread worker;
    private volatile boolean closing;

    OtlpTracer(URI otlp, double sample, String serviceName) {
        this(new OtlpSpanExporter(URI.create(otlp + "/v1/traces"), Duration.ofSeconds(10)), sample, serviceName,
                QUEUE, BATCH, EXPORT_EVERY);
    }

    OtlpTracer(OtlpSpanExporter exporter, double sample, String serviceName, int queue, int batch,
               Duration exportEvery) {
        this.sampleAll = sample >= 1.0;
        this.sampleBound = sample <= 0 ? Long.MIN_VALUE : (long) (sample * Long.MAX_VALUE);
        this.queue = new ArrayBlockingQueue<>(queue);
        this.batch = batch;
        this.exportEveryNanos = exportEvery.toNanos();
        this.exporter = exporter;
        this.encoder = new OtlpTraceEncoder(resource(serviceName), "dev.weft.gateway");
        this.worker = Thread.ofPlatform().name("weft-otlp-export").daemon().start(this::exportLoop);
    }

    /** The resource's attributes: the service's name and what wrote the spans. */
    private static Map<String, String> resource(String serviceName) {
        Map<String, String> r = new LinkedHashMap<>();
        r.put("service.name", serviceName);
        r.put("telemetry.sdk.language", "java");
        r.put("telemetry.sdk.name", "weft");
        String version = WeftVersion.get();
        if (version != null) {
            r.put("telemetry.sdk.version", version);
        }
        return r;
    }

    /** Spans the receiver took. */
    long exported() {
        return exporter.exported();
    }

    /** Spans dropped because the queue was full (or the tracer closed). */
    long dropped() {
        return dropped.get();
    }

    /** Spans waiting in the queue. */
    int queued() {
        return queue.size();
    }

    /** Spans the receiver did not take (see {@link OtlpSpanExporter}). */
    long lost() {
        return exporter.lost();
    }

    /** Whether a new trace with these last 64 bits of its id is recorded. */
    boolean samples(long traceLo) {
        return sampleAll || Math.abs(traceLo) < sampleBound;
    }

    @Override
    public RequestTrace begin(String traceparent, String tracestate, String method, String path) {
        TraceParent in = TraceParent.parse(traceparent);
        if (in != null) {
            String state = TraceParent.cleanState(tracestate);
            if (!in.sampled()) { // passed on with flags 00
                return new Propagated(new TraceParent(in.traceHi(), in.traceLo(), in.spanId(), 0), state);
            }
            return new Recording(in.traceHi(), in.traceLo(), in.spanId(), true, state, method, path);
        }
        TraceParent t = TraceParent.newTrace(false); // its ids; sampled or not is decided here
        return samples(t.traceLo()) ? new Recording(t.traceHi(), t.traceLo(), 0, false, null, method, path)
                : new Propagated(t, null);
    }

    /** A writer for one span: the calling thread's slot's, or a new one when another thread holds it. */
    private ProtoWriter writer() {
        ProtoWriter w = writers.getAndSet(slot(), null);
        if (w == null) {
            w = new ProtoWriter(512);
        }
        w.reset();
        return w;
    }

    private static int slot() {
        return (int) (Thread.currentThread().threadId() & (WRITERS - 1));
    }

    /** Queues the span {@code w} holds, giving the writer back; drops the span (counted) when the queue is full. */
    private void record(ProtoWriter w) {
        byte[] span = w.toByteArray();
        writers.set(slot(), w);
        if (closing || !queue.offer(span)) {
            drop();
        }
    }

    private void drop() {
        dropped(1, closing ? "the tracer is closed" : "the export queue of " + (queue.size() + queue.remainingCapacity())
                + " spans is full: the receiver is slow, or spans are made faster than they can be sent");
    }

    private void dropped(int spans, String why) {
        long n = dropped.addAndGet(spans);
        if (dropReport.due()) {
            LOG.log(System.Logger.Level.WARNING, "tracing: " + spans + " spans dropped (" + why + "); " + n
                    + " dropped since start");
        }
    }

    /** Sends full batches as they fill, and whatever is queued every {@link #exportEveryNanos}; all of it at close. */
    private void exportLoop() {
        List<byte[]> spans = new ArrayList<>(batch);
        long last = System.nanoTime();
        while (true) {
            boolean stop = closing;
            boolean due = stop || System.nanoTime() - last >= exportEveryNanos;
            // full batches; and when due, the part batch that is there: once (not what arrives while it is sent,
            // which would send small batches back to back under load), or until the queue is empty when stopping
            boolean rest = due;
            while (true) {
                int n = queue.size();
                if (n == 0 || n < batch && !rest) {
                    break;
                }
                if (n < batch && !stop) {
                    rest = false;
                }
                queue.drainTo(spans, batch);
                try {
                    exporter.export(encoder.request(spans), spans.size());
                } catch (RuntimeException e) { // not expected (the exporter reports failures); the thread goes on
                    dropped(spans.size(), "export failed: " + e);
                }
                spans.clear();
            }
            if (due) {
                last = System.nanoTime();
            }
            if (stop) {
                return;
            }
            LockSupport.parkNanos(this, LOOK_EVERY_NANOS);
        }
    }

    /** Sends what is queued (waiting up to {@link #CLOSE_WAIT}), then stops; spans that end later are dropped. */
    @Override
    public void close() {
        closing = true;
        LockSupport.unpark(worker);
        try {
            worker.join(CLOSE_WAIT);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        exporter.shutdown();
    }

    /** A request that is recorded: its span, and one for each call. */
    private final class Recording implements RequestTrace {
        private final long traceHi;
        private final long traceLo;
        private final long spanId = TraceParent.newSpanId();
        private final long parentId;
        private final boolean parentRemote;
        private final String state;
        private final String method;
        private final String path;
        private final long startEpochNanos = epochNanos();
        private final long startNanos = System.nanoTime();
        private String traceId;
        private boolean ended;

        Recording(long traceHi, long traceLo, long parentId, boolean parentRemote, String state, String method,
                  String path) {
            this.traceHi = traceHi;
            this.traceLo = traceLo;
            this.parentId = parentId;
            this.parentRemote = parentRemote;
            this.state = state;
            this.method = method;
            this.path = path;
        }

        /** Now as nanoseconds since the epoch, for this request: its start plus the monotonic time since. */
        long epochNanosAt(long nanoTime) {
            return startEpochNanos + (nanoTime - startNanos);
        }

        @Override
        public String traceId() {
            if (traceId == null) {
                traceId = TraceParent.traceId(traceHi, traceLo);
            }
            return traceId;
        }

        @Override
        public String tracestate() {
            return state;
        }

        @Override
        public CallTrace call(String name, URI destination) {
            return new Call(this, name, destination);
        }

        @Override
        public void end(String route, int status) {
            if (ended) {
                return;
            }
            ended = true;
            ProtoWriter w = writer();
            OtlpTraceEncoder.serverSpan(w, traceHi, traceLo, spanId, parentId, parentRemote, state, startEpochNanos,
                    epochNanosAt(System.nanoTime()), method, path, route, status);
            record(w);
        }
    }

    /** One call of a recorded request. */
    private final class Call implements CallTrace {
        private final Recording request;
        private final String name;
        private final URI destination;
        private final long spanId = TraceParent.newSpanId();
        private final long startNanos = System.nanoTime();
        private final String traceparent;
        private boolean ended;

        Call(Recording request, String name, URI destination) {
            this.request = request;
            this.name = name;
            this.destination = destination;
            this.traceparent = TraceParent.header(request.traceHi, request.traceLo, spanId, 1);
        }

        @Override
        public String traceparent() {
            return traceparent;
        }

        @Override
        public void end(CallResult result) {
            if (ended) {
                return;
            }
            ended = true;
            Recording q = request;
            long end = q.epochNanosAt(System.nanoTime());
            ProtoWriter w = writer();
            OtlpTraceEncoder.callSpan(w, q.traceHi, q.traceLo, spanId, q.spanId, q.state, q.epochNanosAt(startNanos),
                    end, name, destination.getScheme() + "://" + destination.getAuthority(), result);
            record(w);
        }
    }

    private static long epochNanos() {
        Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000_000L + now.getNano();
    }
}
