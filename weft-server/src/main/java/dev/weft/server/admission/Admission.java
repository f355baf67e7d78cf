package dev.weft.server.admission;

import dev.weft.server.ServerRequest;

/**
 * Who may be handled now: asked by {@link dev.weft.server.HttpServer} once per request, before its handler
 * runs (so before any backend call starts). A refused request is answered 503 with {@code Retry-After}.
 */
public interface Admission extends AutoCloseable {
    /**
     * Admits {@code r} (possibly after a short, bounded wait) or refuses it.
     *
     * @return a ticket; when admitted, {@link Ticket#exit()} must be called exactly once when the request is done
     */
    Ticket enter(ServerRequest r);

    /** Requests admitted and not yet done, over all keys. */
    int inFlight();

    /** Requests refused so far. */
    long shed();

    @Override
    default void close() {
    }

    /** An admission's answer for one request. */
    interface Ticket {
        /** Null when admitted; else why not (the 503's message). */
        String refusal();

        default boolean admitted() {
            return refusal() == null;
        }

        /** The request is done (call once, only when admitted). */
        void exit();
    }

    /** A refusal: nothing to release. */
    record Refused(String refusal) implements Ticket {
        @Override
        public void exit() {
        }
    }
}
