package dev.weft.dispatch.engine;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;

/**
 * One endpoint as {@code /-/endpoints} shows it (the JSON names are the snake_case ones below).
 *
 * @param disabled       why it is disabled; left out while it is not
 * @param throttledUntil until when a Retry-After holds its lane (ISO-8601); left out when it does not
 * @param lastError      the last failed attempt, or null
 */
@JsonPropertyOrder({"id", "url", "state", "disabled", "throttled_until", "match", "in_flight", "max_in_flight",
        "queued", "queue", "delivered", "failed_attempts", "parked_room", "parked_retry", "dead_lettered", "not_json",
        "last_error"})
public record EndpointStatus(
        String id,
        String url,
        State state,
        @JsonInclude(JsonInclude.Include.NON_NULL) String disabled,
        @JsonProperty("throttled_until") @JsonInclude(JsonInclude.Include.NON_NULL) String throttledUntil,
        String match,
        @JsonProperty("in_flight") int inFlight,
        @JsonProperty("max_in_flight") int maxInFlight,
        int queued,
        int queue,
        long delivered,
        @JsonProperty("failed_attempts") long failedAttempts,
        @JsonProperty("parked_room") long parkedRoom,
        @JsonProperty("parked_retry") long parkedRetry,
        @JsonProperty("dead_lettered") long deadLettered,
        @JsonProperty("not_json") long notJson,
        @JsonProperty("last_error") String lastError) {

    public enum State {
        ACTIVE, THROTTLED, PAUSED, DISABLED;

        @com.fasterxml.jackson.annotation.JsonValue
        public String text() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }
}
