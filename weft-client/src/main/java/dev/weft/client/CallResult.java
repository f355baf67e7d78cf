package dev.weft.client;

import dev.weft.http.Headers;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * What a call produced. Calls never throw for network or HTTP failures: the result says what happened.
 * The same type is what each attempt produces inside the transport (then {@code attempts} is empty and
 * the timings are the attempt's own).
 *
 * @param destination  where the call went
 * @param status       the HTTP status of the winning answer, or 0 when none arrived
 * @param headers      its headers (empty when none)
 * @param body         its body (empty when none), at most the destination's max body
 * @param failure      null on success (status below 400); otherwise why it failed
 * @param timings      where the time went
 * @param attempts     every try, in start order
 * @param trailers     the answer's trailer fields (empty when none came): HTTP/2 only, where a server sends them
 *                     (gRPC's {@code grpc-status}); weft-client reads and drops an HTTP/1.1 chunked answer's trailers
 */
public record CallResult(Destination destination, int status, Headers headers, byte[] body, CallFailure failure,
                         Timings timings, List<Attempt> attempts, Headers trailers) {

    public CallResult {
        trailers = trailers == null ? Headers.EMPTY : trailers;
    }

    /** A result without trailers. */
    public CallResult(Destination destination, int status, Headers headers, byte[] body, CallFailure failure,
                      Timings timings, List<Attempt> attempts) {
        this(destination, status, headers, body, failure, timings, attempts, Headers.EMPTY);
    }

    /**
     * Where the time of a call went, in nanoseconds.
     *
     * @param totalNanos   from the call's (or attempt's) start to its result
     * @param waitNanos    waiting for a bulkhead permit (winning attempt)
     * @param connectNanos from the winning attempt's start until it had a connection (pooled or new)
     * @param headersNanos from the winning attempt's start until the response headers arrived, or -1
     */
    public record Timings(long totalNanos, long waitNanos, long connectNanos, long headersNanos) {
        public static final Timings NONE = new Timings(0, 0, -1, -1);

        public double totalMillis() {
            return totalNanos / 1e6;
        }
    }

    static final byte[] NO_BODY = new byte[0];

    /** A failure that came without an answer, and took no time worth telling. */
    static CallResult failed(Destination destination, CallFailure failure) {
        return new CallResult(destination, 0, Headers.EMPTY, NO_BODY, failure, Timings.NONE, List.of());
    }

    /** This result after waiting {@code nanos} for a permit. */
    CallResult withWait(long nanos) {
        return new CallResult(destination, status, headers, body, failure,
                new Timings(timings.totalNanos, nanos, timings.connectNanos, timings.headersNanos), attempts, trailers);
    }

    /**
     * The call's result from its winning attempt's: the call's whole time, every attempt, and the failure
     * (when there is one) as the caller sees it, which may say more than the attempt's.
     */
    CallResult asCall(long totalNanos, CallFailure callFailure, List<Attempt> all) {
        return new CallResult(destination, status, headers, body, callFailure,
                new Timings(totalNanos, timings.waitNanos, timings.connectNanos, timings.headersNanos), List.copyOf(all),
                trailers);
    }

    public boolean ok() {
        return failure == null;
    }

    /** Why it failed, or null when it succeeded (the {@link CallFailure#reason()} of {@link #failure()}). */
    public Reason reason() {
        return failure == null ? null : failure.reason();
    }

    /** A human explanation of the failure, or null when it succeeded. */
    public String message() {
        return failure == null ? null : failure.message();
    }

    /** {@code ok}, {@code status-503}, {@code timeout-body}, ...: for logs and metrics. */
    public String outcome() {
        return failure == null ? "ok" : failure.label();
    }

    public String bodyText() {
        return new String(body, StandardCharsets.UTF_8);
    }

    @Override
    public String toString() {
        return "CallResult[" + destination + " " + outcome() + (status > 0 ? " " + status : "")
                + (failure != null ? " (" + failure.message() + ")" : "") + ", attempts=" + attempts.size() + ", "
                + String.format(java.util.Locale.ROOT, "%.1f", timings.totalMillis()) + " ms]";
    }
}
