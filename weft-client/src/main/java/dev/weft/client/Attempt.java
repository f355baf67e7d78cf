package dev.weft.client;

/**
 * One try of a call.
 *
 * @param number      1 for the first
 * @param kind        first, retry or hedge
 * @param status      the HTTP status, or 0 when no answer arrived
 * @param reason      why it failed, or null when it succeeded
 * @param startNanos  when it started, relative to the call's start
 * @param tookNanos   how long it ran
 * @param won         whether its answer is the call's result
 */
public record Attempt(int number, Kind kind, int status, Reason reason, long startNanos, long tookNanos,
                      boolean won) {
    public enum Kind { FIRST, RETRY, HEDGE }

    /** {@code ok}, {@code status-503}, {@code timeout-body}, ... */
    public String outcome() {
        return CallFailure.label(reason, status);
    }
}
