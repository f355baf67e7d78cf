package dev.weft.client;

/**
 * Why a call failed. {@link #label()} is the stable name shown in answers, logs and metrics.
 */
public enum Reason {
    /** The TCP connect (and TLS handshake) did not finish within the destination's connect timeout. */
    TIMEOUT_CONNECT("timeout-connect"),
    /**
     * The gateway's own wait: no pooled connection became free and no new one was made for this call
     * before its deadline (the destination's {@code max_connections} or {@code max_connecting} held it
     * back). A connect is never cut short by a caller's deadline; it finishes for the pool. Never counts
     * against the destination.
     */
    CONNECT_WAIT("connect-wait"),
    /**
     * The process ran out of file descriptors (its open-file limit) opening a connection: the gateway's own
     * shortage, so the call fails at once and never counts against the destination.
     */
    NO_DESCRIPTORS("no-descriptors"),
    /**
     * The TLS handshake failed: the certificate was not trusted or did not name the host, or no common protocol. (A
     * server that closes or resets the connection in the middle of the handshake is {@link #RESET}.)
     */
    TLS("tls-error"),
    /** Connected, but the response headers did not arrive in time. */
    TIMEOUT_HEADERS("timeout-headers"),
    /** Headers arrived, but the body did not finish in time (a dripping backend). */
    TIMEOUT_BODY("timeout-body"),
    /** The destination refused the connection. */
    REFUSED("refused"),
    /** The connection was reset or closed before a whole answer arrived. */
    RESET("reset"),
    /** The body was larger than the destination's max body. */
    TOO_LARGE("too-large"),
    /** The destination's circuit breaker is open. */
    CIRCUIT_OPEN("circuit-open"),
    /** The destination's in-flight limit stayed full for longer than its max wait. */
    BULKHEAD_FULL("bulkhead-full"),
    /** The destination answered with a status of 400 or more; the label is {@code status-NNN}. */
    STATUS("status"),
    /** The host name did not resolve. */
    UNKNOWN_HOST("unknown-host"),
    /** The answer was not valid HTTP/1.1. */
    PROTOCOL("protocol-error"),
    /** The call was cancelled: the losing copy of a hedge, or the caller gave up. */
    CANCELLED("cancelled"),
    /** The deadline had already passed before the call could start (or before a retry). */
    DEADLINE("deadline"),
    /**
     * An interceptor of the caller's ({@link CallInterceptor}) threw, or returned no result: the caller's own code
     * failed, not the destination. The message names the interceptor's kind and what it threw. Never tried again by
     * the transport, never counts against the destination.
     */
    INTERCEPTOR("interceptor-error"),
    /** Any other I/O failure; the message says more. */
    IO("io-error");

    private final String label;

    Reason(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }

    /**
     * THE rule of which failures count against a backend (its circuit breaker): only what the backend itself
     * caused. Every reason is named here on purpose (no default branch), so that a new reason must be placed.
     * <ul>
     *   <li>counts: refused, reset, protocol error, a failed TLS handshake, other I/O errors, unknown host,
     *       timeouts of the connect, the headers and the body (the call had its own timeout to run; a call the gateway itself starved
     *       never got one: it fails with {@code deadline} or {@code bulkhead-full} first), and a status of 500
     *       or more;</li>
     *   <li>never counts, because the gateway caused it or it says nothing about the backend: a status below
     *       500, {@code bulkhead-full} (the gateway's own limit), {@code deadline} (the request's time ran out
     *       before the call could start), {@code circuit-open}, {@code cancelled} (a hedge's loser, a caller
     *       that gave up), {@code too-large} (the gateway's own body limit), {@code connect-wait} (the gateway's
     *       own wait for a connection: {@code max_connecting}, {@code max_connections}), {@code no-descriptors}
     *       (the gateway's own open-file limit), {@code interceptor-error} (the caller's own interceptor).</li>
     * </ul>
     * The client also ignores a timeout whose attempt spent more than half its time waiting for a pooled
     * connection ({@code DestinationRuntime.starvedByThePool}), or during which a ready virtual thread waited an
     * eighth of its time or more (at least 100 ms) for a CPU ({@code DestinationRuntime.starvedByTheScheduler}): the
     * gateway starved that call, not the backend.
     *
     * @param status the answer's status for {@link #STATUS}, ignored otherwise
     */
    public boolean countsAgainstBackend(int status) {
        return switch (this) {
            case REFUSED, RESET, PROTOCOL, IO, UNKNOWN_HOST, TLS -> true;
            case TIMEOUT_CONNECT, TIMEOUT_HEADERS, TIMEOUT_BODY -> true;
            case STATUS -> status >= 500;
            case BULKHEAD_FULL, DEADLINE, CIRCUIT_OPEN, CANCELLED, TOO_LARGE, CONNECT_WAIT, NO_DESCRIPTORS,
                 INTERCEPTOR -> false;
        };
    }

    public boolean isTimeout() {
        return this == TIMEOUT_CONNECT || this == CONNECT_WAIT || this == TIMEOUT_HEADERS || this == TIMEOUT_BODY || this == DEADLINE;
    }
}
