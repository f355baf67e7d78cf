package dev.weft.dispatch.config;

import java.net.URI;
import java.time.Duration;
import java.util.List;

/**
 * One destination of records.
 *
 * @param secret      the HMAC key decoded from {@code whsec_...}; null: requests are not signed
 * @param maxInFlight requests to this endpoint at once (its lane's workers)
 * @param queue       deliveries waiting in memory for a worker; past it, deliveries are parked on the
 *                    endpoint's wait topic
 * @param retry       delays before attempt 2, 3, ...; after the last, the dead-letter topic
 */
public record EndpointConfig(String id, URI url, Match match, byte[] secret, Duration timeout, int maxInFlight,
                             int queue, List<Duration> retry) {
    /** Attempts in all: the first plus one per retry delay. */
    public int maxAttempts() {
        return 1 + retry.size();
    }
}
