package dev.weft.core.call;

import dev.weft.core.Deadline;
import org.apache.hc.client5.http.ConnectTimeoutException;
import org.apache.hc.client5.http.HttpHostConnectException;
import org.apache.hc.client5.http.classic.methods.HttpUriRequestBase;
import org.apache.hc.client5.http.config.RequestConfig;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.protocol.HttpClientContext;
import org.apache.hc.core5.http.ClassicHttpResponse;
import org.apache.hc.core5.http.ConnectionClosedException;
import org.apache.hc.core5.http.ConnectionRequestTimeoutException;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.Header;
import org.apache.hc.core5.http.HttpEntity;
import org.apache.hc.core5.http.HttpException;
import org.apache.hc.core5.http.NoHttpResponseException;
import org.apache.hc.core5.http.io.entity.ByteArrayEntity;
import org.apache.hc.core5.util.Timeout;

import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * One HTTP attempt on the calling (virtual) thread, under a deadline.
 *
 * <p>The deadline is enforced in two places: the connect timeout is set to the remaining budget, and
 * the {@link Watchdog} aborts the exchange once the deadline has passed (within a few milliseconds);
 * reads themselves are untimed. Aborting closes the
 * socket, which wakes a read blocked anywhere (waiting for headers, or between the bytes of a body
 * that drips), so no virtual thread outlives its deadline. An aborted connection is never reused.
 */
final class Exchange {
    /** Context attribute through which the chain tells this exchange that it has a connection. */
    static final String ATTRIBUTE = "weft.exchange";

    private static final int PHASE_CONNECTING = 0;
    private static final int PHASE_SENT = 1;
    private static final int PHASE_BODY = 2;

    private final HttpUriRequestBase request;
    private volatile int phase = PHASE_CONNECTING;
    private volatile boolean timedOut;
    private volatile boolean cancelled;
    private long startNanos;
    private volatile long deadlineNanos;
    private long connectedNanos = -1;
    private long headersNanos = -1;

    Exchange(CallRequest call) {
        this.request = new HttpUriRequestBase(call.method(), call.uri());
        ContentType contentType = null;
        for (Map.Entry<String, String> h : call.headers().fields()) {
            if (h.getKey().equalsIgnoreCase("content-length") || h.getKey().equalsIgnoreCase("host")) {
                continue; // the client writes these itself
            }
            if (h.getKey().equalsIgnoreCase("content-type")) {
                contentType = ContentType.parse(h.getValue());
            }
            request.addHeader(h.getKey(), h.getValue());
        }
        if (call.body() != null) {
            request.setEntity(new ByteArrayEntity(call.body(), contentType));
        }
    }

    /** Called from the exec chain once a connection (new or pooled) is ready. */
    void connected() {
        connectedNanos = System.nanoTime() - startNanos;
        phase = PHASE_SENT;
    }

    /** Cancels this attempt from any thread (the loser of a hedge). */
    void cancel() {
        cancelled = true;
        request.cancel();
    }

    /** The deadline of the running attempt, as a {@link System#nanoTime()} value. */
    long deadlineNanos() {
        return deadlineNanos;
    }

    /** Called by the {@link Watchdog} once the deadline has passed. */
    void deadlineReached() {
        timedOut = true;
        request.cancel();
    }

    Outcome run(DestinationRuntime dest, Deadline deadline) {
        startNanos = System.nanoTime();
        long remaining = deadline.remainingNanos();
        if (remaining <= 0) {
            return Outcome.failure(Reason.DEADLINE, "the deadline passed before the call started");
        }
        if (cancelled) {
            return Outcome.failure(Reason.CANCELLED, "cancelled before it started");
        }
        DestinationLimits limits = dest.config().limits();
        Timeout budget = Timeout.of(remaining, TimeUnit.NANOSECONDS);
        Timeout connect = limits.connectTimeout().toNanos() < remaining
                ? Timeout.of(limits.connectTimeout().toNanos(), TimeUnit.NANOSECONDS) : budget;
        HttpClientContext context = HttpClientContext.create();
        // Reads are untimed: the Watchdog aborts the exchange at its deadline. A read with a socket timeout
        // parks its virtual thread with a timer, and with 13,500 reads waiting at once (`weft lab system-a`
        // at 1 s) arming and cancelling those timers was the gateway's largest single CPU cost.
        context.setRequestConfig(RequestConfig.custom()
                .setConnectionRequestTimeout(budget)
                .setConnectTimeout(connect)
                .setResponseTimeout(Timeout.DISABLED)
                .build());
        context.setAttribute(ATTRIBUTE, this);
        deadlineNanos = deadline.nanoTime();
        Watchdog.watch(this);
        ClassicHttpResponse response = null;
        try {
            response = dest.client().executeOpen(dest.host(), request, context);
            headersNanos = System.nanoTime() - startNanos;
            phase = PHASE_BODY;
            int status = response.getCode();
            Headers headers = copy(response.getHeaders());
            HttpEntity entity = response.getEntity();
            byte[] body = new byte[0];
            if (entity != null) {
                long declared = entity.getContentLength();
                if (declared > limits.maxBodyBytes()) {
                    request.cancel(); // do not read it, do not reuse the connection
                    return Outcome.failure(Reason.TOO_LARGE, "body of " + declared + " bytes is over the limit of "
                            + limits.maxBodyBytes()).withAnswer(status, headers, timings());
                }
                body = readBounded(entity, declared, limits.maxBodyBytes());
                if (body == null) {
                    request.cancel();
                    return Outcome.failure(Reason.TOO_LARGE, "body is over the limit of " + limits.maxBodyBytes()
                            + " bytes").withAnswer(status, headers, timings());
                }
            }
            Reason reason = status >= 400 ? Reason.STATUS : null;
            String message = reason == null ? null : "answered " + status;
            return new Outcome(status, headers, body, reason, message, timings());
        } catch (IOException | RuntimeException e) {
            return classify(e);
        } finally {
            Watchdog.unwatch(this);
            closeQuietly(response);
        }
    }

    /**
     * Releases the connection: back to the pool when the body was read to its end, closed otherwise.
     * Closing an aborted exchange may throw; the outcome is already decided by then.
     */
    private static void closeQuietly(ClassicHttpResponse response) {
        if (response == null) {
            return;
        }
        try {
            response.close();
        } catch (IOException | RuntimeException ignored) {
            // the connection is discarded either way
        }
    }

    private long[] timings() {
        return new long[] {connectedNanos, headersNanos};
    }

    private Outcome classify(Exception e) {
        long[] t = timings();
        if (cancelled) {
            return Outcome.failure(Reason.CANCELLED, "cancelled").withTimings(t);
        }
        if (timedOut) {
            return Outcome.failure(timeoutForPhase(), "deadline reached " + phaseName()).withTimings(t);
        }
        Reason reason;
        String message = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        if (e instanceof ConnectTimeoutException) {
            reason = Reason.TIMEOUT_CONNECT;
        } else if (e instanceof ConnectionRequestTimeoutException) {
            reason = Reason.TIMEOUT_CONNECT;
            message = "no pooled connection became free in time (max_connections)";
        } else if (e instanceof HttpHostConnectException || e instanceof ConnectException) {
            reason = Reason.REFUSED;
        } else if (e instanceof SocketTimeoutException) {
            reason = timeoutForPhase();
        } else if (e instanceof UnknownHostException) {
            reason = Reason.UNKNOWN_HOST;
        } else if (e instanceof NoHttpResponseException) {
            reason = Reason.RESET;
            message = "closed the connection without answering";
        } else if (e instanceof ConnectionClosedException || e instanceof SocketException) {
            reason = Reason.RESET;
        } else if (e instanceof IOException && e.getCause() instanceof HttpException
                || e instanceof org.apache.hc.client5.http.ClientProtocolException
                || e instanceof org.apache.hc.core5.http.MalformedChunkCodingException) {
            reason = Reason.PROTOCOL;
        } else if (e instanceof IOException) {
            reason = Reason.IO;
        } else {
            reason = Reason.IO;
            message = e.toString();
        }
        return Outcome.failure(reason, message).withTimings(t);
    }

    private Reason timeoutForPhase() {
        return switch (phase) {
            case PHASE_CONNECTING -> Reason.TIMEOUT_CONNECT;
            case PHASE_SENT -> Reason.TIMEOUT_HEADERS;
            default -> Reason.TIMEOUT_BODY;
        };
    }

    private String phaseName() {
        return switch (phase) {
            case PHASE_CONNECTING -> "while connecting";
            case PHASE_SENT -> "while waiting for headers";
            default -> "while reading the body";
        };
    }

    /** Reads at most {@code max} bytes; null when the body is longer. */
    private static byte[] readBounded(HttpEntity entity, long declared, long max) throws IOException {
        try (InputStream in = entity.getContent()) {
            if (in == null) {
                return new byte[0];
            }
            int capacity = declared >= 0 ? (int) declared : (int) Math.min(max, 8192);
            byte[] buf = new byte[Math.max(capacity, 16)];
            int n = 0;
            while (true) {
                if (n == buf.length) {
                    if (n > max) {
                        return null;
                    }
                    buf = Arrays.copyOf(buf, (int) Math.min((long) buf.length * 2, max + 1));
                }
                int r = in.read(buf, n, buf.length - n);
                if (r < 0) {
                    break;
                }
                n += r;
                if (n > max) {
                    return null;
                }
            }
            return n == buf.length ? buf : Arrays.copyOf(buf, n);
        }
    }

    private static Headers copy(Header[] hs) {
        List<Map.Entry<String, String>> l = new ArrayList<>(hs.length);
        for (Header h : hs) {
            l.add(Map.entry(h.getName(), h.getValue()));
        }
        return Headers.of(l);
    }

    /** What one attempt produced. */
    record Outcome(int status, Headers headers, byte[] body, Reason reason, String message, long[] timings) {
        static final byte[] NO_BODY = new byte[0];

        static Outcome failure(Reason reason, String message) {
            return new Outcome(0, Headers.EMPTY, NO_BODY, reason, message, new long[] {-1, -1});
        }

        Outcome withAnswer(int s, Headers h, long[] t) {
            return new Outcome(s, h, NO_BODY, reason, message, t);
        }

        Outcome withTimings(long[] t) {
            return new Outcome(status, headers, body, reason, message, t);
        }

        boolean ok() {
            return reason == null;
        }
    }
}
