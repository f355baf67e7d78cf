package dev.weft.client;

/**
 * The live state of one destination of a {@link Transport}, read when asked (each method reads the counters of
 * the moment, and allocates nothing): what a {@link TransportListener} samples for its gauges. Safe to call from
 * any thread, for as long as the transport lives.
 */
public interface DestinationState {
    Destination destination();

    /** Calls in flight to the destination now (bulkhead permits held). */
    int inFlight();

    /** The destination's in-flight limit ({@code max_in_flight}). */
    int maxInFlight();

    /** Whether the destination's circuit breaker is open now. */
    boolean breakerOpen();

    /** Times the destination's circuit breaker opened, since the transport started. */
    long breakerOpenings();

    /** Connections being opened now (TCP connect and TLS handshake; at most {@code max_connecting}). */
    int connecting();

    /** Calls waiting for a pooled or new connection now. */
    int connectWaiting();

    /** Connections open now (HTTP/1.1 leased and idle, and HTTP/2). */
    int connections();

    /** HTTP/2 streams in flight now. */
    int streams();

    /** Connections opened (TCP and TLS) that succeeded, since the transport started. */
    long connectsOk();

    /** Connections opened (TCP and TLS) that failed, since the transport started. */
    long connectsFailed();
}
