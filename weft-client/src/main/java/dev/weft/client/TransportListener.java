package dev.weft.client;

/**
 * What a {@link Transport} reports about its calls, for metrics: the way to observe the client without it
 * depending on a metrics library (weft-observe's {@code ClientMeters} binds it to Micrometer). Set with
 * {@link Transport.Builder#listener}; {@link #NONE} (the default) does nothing and costs nothing per call.
 *
 * <p>The transport asks for one {@link DestinationListener} per destination, when the destination is first used,
 * and hands it the destination's live {@link DestinationState} to sample. Listeners are called on the threads of
 * the calls, concurrently: they must be thread-safe, fast, and must not throw or block.
 */
@FunctionalInterface
public interface TransportListener {
    /** Reports nothing: every destination gets {@link DestinationListener#NONE}. */
    TransportListener NONE = state -> DestinationListener.NONE;

    /**
     * A destination is used for the first time (or again after the transport dropped it): the listener of its
     * events. {@code state} reads the destination's live state for as long as the transport lives.
     */
    DestinationListener destinationOpened(DestinationState state);

    /** The events of one destination; every method does nothing by default. */
    interface DestinationListener {
        /** Reports nothing. */
        DestinationListener NONE = new DestinationListener() {
        };

        /**
         * A call ended (every call once, after its retries and hedges): its result ({@link CallResult#outcome()}
         * names it) and its whole time, {@code result.timings().totalNanos()}.
         */
        default void callEnded(CallResult result) {
        }

        /** A try of a call starts toward the destination's permits: the first, a retry, or a hedge's copy. */
        default void attemptStarted(Attempt.Kind kind) {
        }

        /**
         * A timeout the circuit breaker did not count because the client itself starved the call (see
         * {@link Starved}).
         */
        default void starved(Starved by) {
        }

        /**
         * The transport stops reporting this destination ({@link Transport#detachListener}): a listener that
         * publishes meters removes them, so that the transport's successor's are the ones published.
         */
        default void detached() {
        }
    }

    /** What starved a call whose timeout the circuit breaker did not count. */
    enum Starved {
        /** It spent more than half of its time waiting for a pooled connection. */
        POOL,
        /** A ready virtual thread of the process waited an eighth of the call's time, and at least 100 ms, for a CPU. */
        SCHEDULER
    }
}
