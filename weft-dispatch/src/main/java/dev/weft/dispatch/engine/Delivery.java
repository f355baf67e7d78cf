package dev.weft.dispatch.engine;

import org.apache.kafka.common.header.Header;

import java.util.List;
import java.util.Objects;

/**
 * One record for one endpoint.
 *
 * @param endpoint  the endpoint's id; "" for a record dead-lettered before it matched any endpoint
 * @param webhookId its {@code webhook-id}; "" when not known (dead-lettered before it got one)
 * @param attempts  attempts already made (0 for a fresh record)
 * @param origin    {@code topic/partition/offset} of the record as first consumed
 * @param headers   the record's own headers (without Weft's parking headers), kept when it is parked
 */
public record Delivery(String endpoint, Ticket ticket, String webhookId, byte[] key, byte[] body, List<Header> headers,
                       int attempts, String origin) {
    public Delivery {
        Objects.requireNonNull(endpoint, "endpoint");
        Objects.requireNonNull(ticket, "ticket");
        webhookId = webhookId == null ? "" : webhookId;
        if (attempts < 0) {
            throw new IllegalArgumentException("attempts " + attempts);
        }
    }

    public Delivery withAttempts(int n) {
        return new Delivery(endpoint, ticket, webhookId, key, body, headers, n, origin);
    }

    /** A record header's value as text, or null. */
    public String header(String name) {
        for (Header h : headers) {
            if (h.key().equalsIgnoreCase(name) && h.value() != null) {
                return new String(h.value(), java.nio.charset.StandardCharsets.UTF_8);
            }
        }
        return null;
    }
}
