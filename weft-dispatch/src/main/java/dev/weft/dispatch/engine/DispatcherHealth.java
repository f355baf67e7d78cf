package dev.weft.dispatch.engine;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;

/**
 * The dispatcher as {@code /-/health} shows it (the JSON names are the snake_case ones below).
 *
 * @param failure     why the consumer stopped, or why a delivery is stuck; left out while neither
 * @param brokerUnansweredMs how long since Kafka last answered (asked every second); the broker's address is
 *                    not shown (this is served without a token)
 * @param consumerTurnMs how long the consumer thread has been in its current turn of the poll loop: under a second
 *                    while it goes round; a broker that does not answer holds a turn up to
 *                    {@link Dispatcher#BROKER_CALL_TIMEOUT}, its broker steps (commits, positioning, sends) together
 * @param recordsLost records deleted from a topic (retention) before they were read, skipped
 * @param lastLoss    the last such loss: topic, partition and offsets; left out while none
 */
@JsonPropertyOrder({"status", "failure", "broker_unanswered_ms", "consumer_turn_ms", "group", "assigned_partitions", "paused_partitions",
        "outstanding_records", "records", "consumer_lag", "endpoints_disabled", "park_failures", "records_lost",
        "last_loss"})
public record DispatcherHealth(
        Status status,
        @JsonInclude(JsonInclude.Include.NON_NULL) String failure,
        @JsonProperty("broker_unanswered_ms") long brokerUnansweredMs,
        @JsonProperty("consumer_turn_ms") long consumerTurnMs,
        String group,
        @JsonProperty("assigned_partitions") int assignedPartitions,
        @JsonProperty("paused_partitions") int pausedPartitions,
        @JsonProperty("outstanding_records") int outstandingRecords,
        long records,
        @JsonProperty("consumer_lag") long consumerLag,
        @JsonProperty("endpoints_disabled") long endpointsDisabled,
        @JsonProperty("park_failures") long parkFailures,
        @JsonProperty("records_lost") long recordsLost,
        @JsonProperty("last_loss") @JsonInclude(JsonInclude.Include.NON_NULL) String lastLoss) {

    public enum Status {
        UP, STOPPING, FAILED;

        @com.fasterxml.jackson.annotation.JsonValue
        public String text() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }
}
