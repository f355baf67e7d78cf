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

    /**
     * Admits or refuses {@code r} without waiting, or answers {@link WouldWait#WOULD_WAIT} when only {@link #enter}
     * can tell (the request would wait in a queue). Called on the front door's selector thread, which must never
     * block. Never null (the door takes a null as {@link WouldWait#WOULD_WAIT}, and warns once).
     */
    default Decision tryEnter(ServerRequest r) {
        return WouldWait.WOULD_WAIT;
    }

    /**
     * After {@link #tryEnter} answered {@link WouldWait#WOULD_WAIT}: puts {@code r} in the queue without a thread to
     * wait in it, for the front door to {@link Queued#poll() poll}. Null when this admission cannot queue that way (the
     * door then runs {@link #enter} on a virtual thread).
     */
    default Queued queue(ServerRequest r) {
        return null;
    }

    /** A request in the queue, held by the front door's thread. */
    interface Queued {
        /** When it must leave the queue refused ({@link System#nanoTime()}). */
        long deadline();

        /** Its place, if one is free now (it leaves the queue {@link Admitted}), else {@link WouldWait#WOULD_WAIT}. */
        Decision poll();

        /**
         * It leaves the queue refused: its deadline passed. Never null (the door takes a null as {@link
         * WouldWait#WOULD_WAIT}, runs {@link #enter} on a virtual thread, and warns once).
         */
        Refused expire();

        /** It leaves the queue, neither admitted nor refused: its connection went away. */
        void leave();
    }

    /**
     * True: the server reads plain HTTP/1.1 requests on one selector thread (the front door) and answers this
     * admission's refusals there, so that a 503 does not wait for a carrier behind the work it refuses. An
     * admitted request still runs on a virtual thread of its own.
     */
    default boolean door() {
        return false;
    }

    /**
     * The nice value (Linux, -20..0) the front door's thread asks for as it starts ({@link #door()} only); 0 leaves
     * it at the process's.
     */
    default int doorNice() {
        return 0;
    }

    /**
     * What a front door that may not raise its thread to {@link #doorNice()} (no {@code CAP_SYS_NICE}) does instead:
     * lower the process's other threads by as many steps, so that it keeps its lead over them, or not.
     */
    default AdmissionPolicy.DoorFallback doorFallback() {
        return AdmissionPolicy.DoorFallback.NONE;
    }

    /**
     * Told by each front door as it starts (when {@link #door()}): what it has done so far, for an admission that
     * weighs the CPU its refusals cost.
     */
    default void doorOpened(DoorLoad load) {
    }

    /** What a front door has done so far (read by the admission at its revisions, on any thread). */
    interface DoorLoad {
        /** The door thread's CPU time so far (ns), or -1 when the JVM cannot tell. */
        long cpuNanos();

        /** Requests it read and gave to the admission (admitted, refused or queued). */
        long requests();

        /** Of those, refused (answered 503 by the door). */
        long refused();

        /** The nice value its thread runs at (Linux), or {@link Integer#MIN_VALUE} when not known (yet). */
        default int nice() {
            return Integer.MIN_VALUE;
        }

        /**
         * How many nice steps its thread runs ahead of the process's other threads (raised itself, or lowered them);
         * 0 when neither, {@link Integer#MIN_VALUE} when not known (yet).
         */
        default int lead() {
            return Integer.MIN_VALUE;
        }
    }

    /** Requests admitted and not yet done, over all keys. */
    int inFlight();

    /** Requests refused so far. */
    long shed();

    @Override
    default void close() {
    }

    /**
     * What an admission can tell of a request without waiting ({@link #tryEnter}, {@link Queued#poll}): a
     * {@link Ticket}, or {@link WouldWait#WOULD_WAIT}.
     */
    sealed interface Decision permits Ticket, WouldWait {
    }

    /** Not yet decided: the request would wait for a place, and only {@link #enter} (or its queue) can tell. */
    enum WouldWait implements Decision {
        WOULD_WAIT
    }

    /**
     * An admission's answer for one request: {@link Admitted} (a place to give back) or {@link Refused} with its
     * {@link Refusal}; nothing else, so that whoever answers the request knows which by its type.
     */
    sealed interface Ticket extends Decision permits Admitted, Refused {
        /** True when admitted; else the ticket is a {@link Refused}, which says why not. */
        boolean admitted();

        /** The request is done (call once, only when admitted; nothing to do for a {@link Refused}). */
        void exit();
    }

    /**
     * An admitted request's place. An admission hands out one instance per place or per request as it likes (a
     * {@link FixedAdmission} hands out one constant, so admitting allocates nothing).
     */
    non-sealed interface Admitted extends Ticket {
        @Override
        default boolean admitted() {
            return true;
        }

        /** The request is done: its place is free again. Call exactly once. */
        @Override
        void exit();
    }

    /** A refusal and why: nothing to release. */
    record Refused(Refusal why) implements Ticket {
        public Refused {
            java.util.Objects.requireNonNull(why, "why");
        }

        @Override
        public boolean admitted() {
            return false;
        }

        @Override
        public void exit() {
        }
    }
}
