package dev.weft.dispatch.engine;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;

import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.function.Consumer;
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
     * What a parking topic must be.
     *
     * @param retentionMs     the shortest {@code retention.ms} it may have; -1: no deletion by time
     * @param maxMessageBytes its {@code max.message.bytes} when it is created (an existing topic keeps its own)
     */
    public record ParkingTopic(String name, int partitions, long retentionMs, int maxMessageBytes) {
    }

    /**
     * Creates each parking topic that is missing, with its retention and size; raises the {@code retention.ms} of
     * an existing one that would delete parked records before they are due ({@code IncrementalAlterConfigs}).
     * Where the broker refuses, nothing starts: one line per topic gives the {@code kafka-configs} command that
     * fixes it.
     *
     * @return the largest {@code max.message.bytes} of the topics (the producer's {@code max.request.size})
     */
    public static int ensureParkingTopics(String bootstrap, List<ParkingTopic> topics, Consumer<String> log)
            throws IOException {
        try (Admin admin = admin(bootstrap)) {
            var existing = admin.listTopics().names().get(30, TimeUnit.SECONDS);
            List<NewTopic> create = topics.stream().filter(t -> !existing.contains(t.name()))
                    .map(t -> new NewTopic(t.name(), Optional.of(t.partitions()), Optional.empty()).configs(Map.of(
                            TopicConfig.RETENTION_MS_CONFIG, Long.toString(t.retentionMs()),
                            TopicConfig.MAX_MESSAGE_BYTES_CONFIG, Integer.toString(t.maxMessageBytes()))))
                    .toList();
            if (!create.isEmpty()) {
                try {
                    admin.createTopics(create).all().get(30, TimeUnit.SECONDS);
                } catch (ExecutionException e) {
                    if (!(e.getCause() instanceof org.apache.kafka.common.errors.TopicExistsException)) {
                        throw e; // another instance creating them at once is fine; the check below covers it
                    }
                }
            }
            Map<String, Config> configs = configs(admin, topics.stream().map(ParkingTopic::name).toList());
            Map<ConfigResource, Collection<AlterConfigOp>> raise = new LinkedHashMap<>();
            int maxBytes = 0;
            for (ParkingTopic t : topics) {
                Config c = configs.get(t.name());
                maxBytes = Math.max(maxBytes, Integer.parseInt(c.get(TopicConfig.MAX_MESSAGE_BYTES_CONFIG).value()));
                long has = Long.parseLong(c.get(TopicConfig.RETENTION_MS_CONFIG).value());
                if (tooShort(has, t.retentionMs())) {
                    raise.put(new ConfigResource(ConfigResource.Type.TOPIC, t.name()), List.of(new AlterConfigOp(
                            new ConfigEntry(TopicConfig.RETENTION_MS_CONFIG, Long.toString(t.retentionMs())),
                            AlterConfigOp.OpType.SET)));
                }
            }
            List<String> refused = new ArrayList<>();
            for (var e : admin.incrementalAlterConfigs(raise).values().entrySet()) {
                String topic = e.getKey().name();
                ParkingTopic t = topics.stream().filter(x -> x.name().equals(topic)).findFirst().orElseThrow();
                String had = configs.get(topic).get(TopicConfig.RETENTION_MS_CONFIG).value();
                try {
                    e.getValue().get(30, TimeUnit.SECONDS);
                    log.accept("topic " + topic + ": retention.ms raised from " + had + " to " + t.retentionMs()
                            + " (parked records must outlive their wait)");
                } catch (ExecutionException x) {
                    refused.add("topic " + topic + " keeps records for retention.ms=" + had + ", shorter than its parked "
                            + "records may wait, and the broker refused to raise it (" + x.getCause().getMessage()
                            + "); run: kafka-configs.sh --bootstrap-server " + bootstrap + " --alter --entity-type topics"
                            + " --entity-name " + topic + " --add-config retention.ms=" + t.retentionMs());
                }
            }
            if (!refused.isEmpty()) {
                refused.sort(null);
                throw new IOException(String.join("\n", refused));
            }
            return maxBytes;
        } catch (ExecutionException e) {
            throw new IOException("setting up topics " + topics.stream().map(ParkingTopic::name).toList() + " on "
                    + bootstrap + ": " + e.getCause().getMessage(), e.getCause());
        } catch (InterruptedException | TimeoutException e) {
            throw new IOException("setting up topics on " + bootstrap + ": no answer in 30 s", e);
        }
    }

    /** Whether {@code has} (a topic's retention.ms) deletes sooner than {@code needs} allows (-1: never). */
    static boolean tooShort(long has, long needs) {
        if (has < 0) {
            return false;
        }
        return needs < 0 || has < needs;
    }

    /** The largest {@code max.message.bytes} of {@code topics}. */
    public static int maxMessageBytes(String bootstrap, List<String> topics) throws IOException {
        try (Admin admin = admin(bootstrap)) {
            int max = 0;
            for (Config c : configs(admin, topics).values()) {
                max = Math.max(max, Integer.parseInt(c.get(TopicConfig.MAX_MESSAGE_BYTES_CONFIG).value()));
            }
            return max;
        } catch (ExecutionException e) {
            throw new IOException("reading the configs of " + topics + " on " + bootstrap + ": "
                    + e.getCause().getMessage(), e.getCause());
        } catch (InterruptedException | TimeoutException e) {
            throw new IOException("reading the configs of " + topics + " on " + bootstrap + ": no answer in 30 s", e);
        }
    }

    /**
     * The configs of {@code topics}. A topic created a moment ago may be unknown to the broker that answers until
     * the metadata reaches it: asked again every 100 ms, for up to 30 s.
     */
    private static Map<String, Config> configs(Admin admin, List<String> topics)
            throws ExecutionException, InterruptedException, TimeoutException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            try {
                Map<String, Config> out = new HashMap<>();
                admin.describeConfigs(topics.stream().map(t -> new ConfigResource(ConfigResource.Type.TOPIC, t)).toList())
                        .all().get(30, TimeUnit.SECONDS).forEach((r, c) -> out.put(r.name(), c));
                return out;
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof org.apache.kafka.common.errors.UnknownTopicOrPartitionException)
                        || System.nanoTime() > end) {
                    throw e;
                }
                Thread.sleep(100);
            }
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
