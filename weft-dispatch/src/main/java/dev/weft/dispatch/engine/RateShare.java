package dev.weft.dispatch.engine;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TopicDescription;

import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * How an endpoint's {@code rate_limit} is split over the instances of a group: each takes the fraction of
 * the group's partitions (every subscribed topic: source, retry and wait) it owns. Owners change only in
 * a rebalance, and a partition is revoked from its old owner before it is assigned to the new one, so the
 * shares of the live instances never add up to more than 1.
 */
final class RateShare {
    private RateShare() {
    }

    /** Partitions of {@code topics} in all. */
    static int partitions(String bootstrap, List<String> topics) throws DispatchException {
        try (Admin admin = KafkaAdmin.admin(bootstrap)) {
            int n = 0;
            for (TopicDescription d : admin.describeTopics(topics).allTopicNames().get(15, TimeUnit.SECONDS).values()) {
                n += d.partitions().size();
            }
            return Math.max(1, n);
        } catch (Exception e) {
            throw new DispatchException("describing topics " + topics + " on " + bootstrap + ": " + e.getMessage(), e);
        }
    }

    static double share(int owned, int total) {
        return total <= 0 ? 0 : Math.min(1, owned / (double) total);
    }
}
