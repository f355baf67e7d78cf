package dev.weft.dispatch.engine;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** The dispatcher's admin calls: topic checks and creation, with short timeouts. */
public final class KafkaAdmin {
    private KafkaAdmin() {
    }

    /** Creates each topic (name -> partitions, broker's replication) that does not exist yet. */
    public static void createTopics(String bootstrap, Map<String, Integer> topics) throws IOException {
        try (Admin admin = admin(bootstrap)) {
            var existing = admin.listTopics().names().get(30, TimeUnit.SECONDS);
            List<NewTopic> create = topics.entrySet().stream().filter(e -> !existing.contains(e.getKey()))
                    .map(e -> new NewTopic(e.getKey(), Optional.of(e.getValue()), Optional.empty()))
                    .toList();
            if (!create.isEmpty()) {
                admin.createTopics(create).all().get(30, TimeUnit.SECONDS);
            }
        } catch (ExecutionException e) {
            if (!(e.getCause() instanceof org.apache.kafka.common.errors.TopicExistsException)) {
                throw new IOException("creating topics " + topics.keySet() + " on " + bootstrap + ": "
                        + e.getCause().getMessage(), e.getCause());
            }
        } catch (InterruptedException | TimeoutException e) {
            throw new IOException("creating topics " + topics.keySet() + " on " + bootstrap + ": no answer in 30 s", e);
        }
    }

    /**
     * Creates {@code topic} with one partition and {@code cleanup.policy=compact} when it does not exist (the
     * endpoint state topic: the last record of each key is kept).
     */
    public static void createCompacted(String bootstrap, String topic) throws IOException {
        try (Admin admin = admin(bootstrap)) {
            if (admin.listTopics().names().get(30, TimeUnit.SECONDS).contains(topic)) {
                return;
            }
            admin.createTopics(List.of(new NewTopic(topic, Optional.of(1), Optional.empty())
                    .configs(Map.of("cleanup.policy", "compact")))).all().get(30, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (!(e.getCause() instanceof org.apache.kafka.common.errors.TopicExistsException)) {
                throw new IOException("creating topic " + topic + " on " + bootstrap + ": " + e.getCause().getMessage(),
                        e.getCause());
            }
        } catch (InterruptedException | TimeoutException e) {
            throw new IOException("creating topic " + topic + " on " + bootstrap + ": no answer in 30 s", e);
        }
    }

    /** An admin client with short timeouts, for checks and topic creation. */
    public static Admin admin(String bootstrap) {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) Duration.ofSeconds(10).toMillis(),
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) Duration.ofSeconds(20).toMillis()));
    }
}
