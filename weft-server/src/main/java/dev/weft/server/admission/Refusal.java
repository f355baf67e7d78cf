package dev.weft.server.admission;

import java.time.Duration;

/**
 * Why an admission refused a request: a type from where the refusal is made to where it is answered (the 503), whose
 * {@link #message()} is the answer's text.
 */
public sealed interface Refusal {
    /** The text of the 503's JSON {@code error}. */
    String message();

    /** The server is stopping: a request waiting for a place was interrupted. */
    record Stopping() implements Refusal {
        @Override
        public String message() {
            return "server is stopping";
        }
    }

    /** {@code limits.max_concurrent} requests were in flight for the whole of {@code max_wait}. */
    record OverCapacity(int maxConcurrent) implements Refusal {
        @Override
        public String message() {
            return "over capacity: " + maxConcurrent + " requests in flight (max_concurrent)";
        }
    }

    /**
     * A route's adaptive limit was reached: its requests in flight and its limit, and what the whole server had in
     * flight of its ceiling ({@code limits.max_concurrent}).
     */
    record RouteLimit(String route, int inFlight, int limit, int allInFlight, int ceiling) {
        String describe() {
            return inFlight + " requests of " + route + " in flight (admission limit " + limit + "; " + allInFlight
                    + " of limits.max_concurrent " + ceiling + " in flight in all)";
        }
    }

    /** The route's queue ({@code admission.queue}) was full: {@code waiting} requests waited already. */
    record QueueFull(RouteLimit at, int waiting) implements Refusal {
        @Override
        public String message() {
            return "over capacity: " + at.describe() + " and " + waiting + " waiting (admission.queue)";
        }
    }

    /** The request waited in the route's queue for the whole of {@code admission.max_wait}. */
    record WaitedTooLong(RouteLimit at, Duration waited) implements Refusal {
        @Override
        public String message() {
            return "over capacity: " + at.describe() + "; waited " + waited.toMillis() + " ms";
        }
    }
}
