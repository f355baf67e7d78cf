package dev.weft.gateway.observe;

import dev.weft.client.CallRequest;
import dev.weft.client.CallResult;
import dev.weft.client.Transport;
import dev.weft.client.policy.RetryPolicy;
import dev.weft.core.OncePer;

import java.net.URI;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Sends batches of spans, each already an OTLP/HTTP protobuf request ({@link OtlpTraceEncoder#request}), with
 * Weft's own HTTP client (not the JDK's: why, measured: docs/design/observability.md), on the tracer's export
 * thread, one
 * export at a time. A batch the receiver does not take is tried {@link #ATTEMPTS} times in all when the failure
 * may pass (no connection, 429, 502, 503, 504; a {@code Retry-After} is honoured), after pauses of 0.5-1 s and
 * 1-2 s ({@link #BACKOFF} doubling, jittered as {@link RetryPolicy} does), all within the timeout; then its spans
 * are counted as lost and reported on the {@code weft.tracing} logger (one line every 10 s at most, with the
 * counts). The receiver's other limits are weft-client's defaults (its breaker needs 100 calls in a window, more
 * than exports ever make).
 */
final class OtlpSpanExporter {
    static final int ATTEMPTS = 3;
    static final Duration BACKOFF = Duration.ofSeconds(1);
    private static final System.Logger LOG = System.getLogger("weft.tracing");

    private final URI endpoint;
    private final Duration timeout;
    private final RetryPolicy retry;
    private final Transport transport;
    private final OncePer report = new OncePer(Duration.ofSeconds(10));
    private final AtomicLong exported = new AtomicLong();
    private final AtomicLong lost = new AtomicLong();
    /** One export at a time, and shutdown not in the middle of one (held across the HTTP call). */
    private final ReentrantLock lock = new ReentrantLock();
    private volatile boolean shutdown;

    OtlpSpanExporter(URI endpoint, Duration timeout) {
        this(endpoint, timeout, BACKOFF);
    }

    /** With {@code backoff} as the base of the pauses between tries (each a random time in [d/2, d], d doubling). */
    OtlpSpanExporter(URI endpoint, Duration timeout, Duration backoff) {
        this.endpoint = endpoint;
        this.timeout = timeout;
        // an export may arrive twice (the receiver took it but its answer was lost), as with the SDK's exporter
        this.retry = new RetryPolicy(ATTEMPTS, backoff, backoff.multipliedBy(4), Set.of(429, 502, 503, 504), true);
        this.transport = Transport.builder().userAgent("weft-otlp-exporter").build();
    }

    /** Spans the receiver took. */
    long exported() {
        return exported.get();
    }

    /** Spans given up on: after {@link #ATTEMPTS} tries, a failure that would not pass, or after shutdown. */
    long lost() {
        return lost.get();
    }

    /** Sends one request of {@code spans} spans; true when the receiver took it. */
    boolean export(byte[] request, int spans) {
        lock.lock();
        try {
            return send(request, spans);
        } finally {
            lock.unlock();
        }
    }

    private boolean send(byte[] body, int spans) {
        if (spans == 0) {
            return true;
        }
        if (shutdown) {
            return giveUp(spans, "the exporter is shut down");
        }
        CallRequest request = CallRequest.builder("POST", endpoint)
                .body(body, "application/x-protobuf")
                .retry(retry)
                .build();
        CallResult r = transport.call(request, timeout);
        if (r.ok()) {
            exported.addAndGet(spans);
            return true;
        }
        return giveUp(spans, r.outcome() + (r.message() == null ? "" : ": " + r.message()));
    }

    private boolean giveUp(int spans, String why) {
        long total = lost.addAndGet(spans);
        if (report.due()) {
            LOG.log(System.Logger.Level.WARNING, "tracing: " + spans + " spans not exported to " + endpoint + " ("
                    + why + "); " + total + " lost since start, " + exported.get() + " exported");
        }
        return false;
    }

    /** Stops: a later export is lost; waits for one under way. */
    void shutdown() {
        lock.lock();
        try {
            shutdown = true;
            transport.close();
        } finally {
            lock.unlock();
        }
    }
}
