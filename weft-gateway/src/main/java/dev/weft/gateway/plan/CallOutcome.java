package dev.weft.gateway.plan;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * What one call of a plan produced.
 *
 * @param json    the body parsed as JSON, or null when it is not JSON (or there is none)
 * @param reason  null on success; otherwise a named reason ({@code status-503}, {@code timeout-headers},
 *                {@code skipped}, {@code not-json}, {@code template}, ...)
 * @param message a human explanation of a failure
 */
public record CallOutcome(String name, int status, byte[] body, JsonNode json, String reason, String message,
                          long tookNanos, int attempts) {
    public boolean ok() {
        return reason == null;
    }

    static CallOutcome failed(String name, String reason, String message, long tookNanos) {
        return new CallOutcome(name, 0, new byte[0], null, reason, message, tookNanos, 0);
    }
}
