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
 * @param allowPrivate the URL may resolve to a loopback, link-local or private address ({@link TargetGuard})
 * @param rateLimit   deliveries per second across the group, with a burst; null: no limit
 */
public record EndpointConfig(String id, URI url, Match match, byte[] secret, Duration timeout, int maxInFlight,
                             int queue, List<Duration> retry, boolean allowPrivate, RateLimit rateLimit) {
    /** {@code rate_limit}: {@code perSecond} deliveries a second on average, {@code burst} more at once. */
    public record RateLimit(double perSecond, int burst) {
        @Override
        public String toString() {
            return (perSecond == Math.rint(perSecond) ? Long.toString((long) perSecond) : Double.toString(perSecond))
                    + "/s, burst " + burst;
        }
    }

    /** Attempts in all: the first plus one per retry delay. */
    public int maxAttempts() {
        return 1 + retry.size();
    }
}
