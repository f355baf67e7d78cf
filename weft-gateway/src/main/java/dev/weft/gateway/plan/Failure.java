package dev.weft.gateway.plan;

import dev.weft.client.CallFailure;

/**
 * Why one call of a plan failed, kept as a type from where it happens to the composed answer. {@link #label()}
 * is the reason shown on the wire ({@code status-503}, {@code timeout-headers}, {@code skipped}, ...; see
 * docs/gateway.md); nothing reads a label back.
 */
public sealed interface Failure {

    /** A human explanation. */
    String message();

    /** The call went out and failed in the transport: a timeout, a refused connection, an error status, ... */
    record Call(CallFailure cause) implements Failure {
        @Override
        public String message() {
            return cause.message();
        }
    }

    /** The route's deadline passed before the call finished (or started). */
    record Deadline(String message) implements Failure {
    }

    /** A call this one needs failed, so it was not made. */
    record Skipped(String needs, Failure cause) implements Failure {
        @Override
        public String message() {
            return "needs '" + needs + "', which failed (" + cause.label() + ")";
        }
    }

    /** A template asked for a value that is not there (or {@code foreach} for an array that is not one). */
    record Template(String message) implements Failure {
    }

    /** A template read into a body that is not JSON. */
    record NotJson(String message) implements Failure {
    }

    /** The rendered URL is not a valid absolute URL. */
    record BadUrl(String url, String problem) implements Failure {
        @Override
        public String message() {
            return "'" + url + "' is not a valid URL: " + problem;
        }
    }

    /** {@code foreach} over more items than {@link CallSpec#MAX_ITEMS}. */
    record TooManyItems(String message) implements Failure {
    }

    /** One item of a {@code foreach} failed: the call failed with that item's failure. */
    record Item(int index, Failure cause) implements Failure {
        @Override
        public String message() {
            return "item " + index + ": " + cause.message();
        }
    }

    /** A bug: something threw where nothing should. */
    record Internal(String message) implements Failure {
    }

    /** The reason shown in answers: {@code status-503}, {@code timeout-body}, {@code skipped}, ... */
    default String label() {
        return switch (this) {
            case Call c -> c.cause().label();
            case Deadline d -> "deadline";
            case Skipped s -> "skipped";
            case Template t -> "template";
            case NotJson n -> "not-json";
            case BadUrl b -> "bad-url";
            case TooManyItems t -> "too-many-items";
            case Item i -> i.cause().label();
            case Internal i -> "internal";
        };
    }

    /** Whether time ran out (a transport timeout or the route's deadline): with the deadline passed, a 504. */
    default boolean isTimeout() {
        return switch (this) {
            case Call c -> c.cause().isTimeout();
            case Deadline d -> true;
            case Item i -> i.cause().isTimeout();
            case Skipped s -> false;
            case Template t -> false;
            case NotJson n -> false;
            case BadUrl b -> false;
            case TooManyItems t -> false;
            case Internal i -> false;
        };
    }

    /**
     * Whether the backend answered with an error status (and nothing else went wrong): {@code status_from}
     * passes such a status through, but not a failure of another kind that happened to come with a status.
     */
    default boolean isStatus() {
        return switch (this) {
            case Call c -> c.cause().isStatus();
            case Item i -> i.cause().isStatus();
            case Deadline d -> false;
            case Skipped s -> false;
            case Template t -> false;
            case NotJson n -> false;
            case BadUrl b -> false;
            case TooManyItems t -> false;
            case Internal i -> false;
        };
    }
}
