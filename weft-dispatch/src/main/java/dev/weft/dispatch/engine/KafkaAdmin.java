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
                List<String> refused = refusedCreations(admin.createTopics(create).values());
                if (!refused.isEmpty()) {
                    throw new IOException("creating topics on " + bootstrap + ": " + String.join("; ", refused));
                }
                // the controller has made them; the broker that answers the next listing may not know them for a
                // few milliseconds more (a dispatcher started at once said "topic not found")
                long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (!admin.listTopics().names().get(30, TimeUnit.SECONDS).containsAll(topics.keySet())) {
                    if (System.nanoTime() > end) {
                        throw new IOException("created topics " + topics.keySet() + " on " + bootstrap
                                + ", but they were not listed within 30 s");
                    }
                    Thread.sleep(50);
                }
            }
        } catch (ExecutionException e) {
            throw new IOException("creating topics " + topics.keySet() + " on " + bootstrap + ": "
                    + e.getCause().getMessage(), e.getCause());
        } catch (InterruptedException | TimeoutException e) {
            throw new IOException("creating topics " + topics.keySet() + " on " + bootstrap + ": no answer in 30 s", e);
        }
    }

    /**
     * What a parking topic must be.
     *
     * @param retentionMs     the shortest {@code retention.ms} it may have; -1: no deletion by time
     * @param maxMessageBytes the smallest {@code max.message.bytes} it may have
     */
    public record ParkingTopic(String name, int partitions, long retentionMs, int maxMessageBytes) {
    }

    /**
     * Creates each parking topic that is missing, with its retention and size; raises the {@code retention.ms} of
     * an existing one that would delete parked records before they are due, and its {@code max.message.bytes} when
     * it takes less than a parked copy may need ({@code IncrementalAlterConfigs}).
     * Where the broker refuses, nothing starts: one line per topic gives the {@code kafka-configs} command that
     * fixes it.
     *
     * @return the largest {@code max.message.bytes} of the topics (the producer's {@code max.request.size})
     */
    public static int ensureParkingTopics(String bootstrap, List<ParkingTopic> topics, Consumer<String> log)
            throws IOException {
        return ensureParkingTopics(bootstrap, topics, log, true);
    }

    /**
     * As above; with {@code createMissing} false, only the topics that exist are checked and raised (retired parking
     * topics: one deleted since it was listed is not made again).
     */
    public static int ensureParkingTopics(String bootstrap, List<ParkingTopic> topics, Consumer<String> log,
                                          boolean createMissing) throws IOException {
        try (Admin admin = admin(bootstrap)) {
            var existing = admin.listTopics().names().get(30, TimeUnit.SECONDS);
            if (!createMissing) {
                topics = topics.stream().filter(t -> existing.contains(t.name())).toList();
                if (topics.isEmpty()) {
                    return 0;
                }
            }
            List<NewTopic> create = topics.stream().filter(t -> !existing.contains(t.name()))
                    .map(t -> new NewTopic(t.name(), Optional.of(t.partitions()), Optional.empty()).configs(Map.of(
                            TopicConfig.RETENTION_MS_CONFIG, Long.toString(t.retentionMs()),
                            TopicConfig.MAX_MESSAGE_BYTES_CONFIG, Integer.toString(t.maxMessageBytes()))))
                    .toList();
            if (!create.isEmpty()) {
                // another instance creating some at once is fine (the check below covers them); any other refusal
                // of any topic is reported, not hidden behind the first answer of the batch
                List<String> refused = refusedCreations(admin.createTopics(create).values());
                if (!refused.isEmpty()) {
                    Map<String, ParkingTopic> byName = new HashMap<>();
                    topics.forEach(t -> byName.put(t.name(), t));
                    List<String> lines = new ArrayList<>();
                    for (String r : refused) {
                        String topic = r.substring("topic ".length(), r.indexOf(':'));
                        ParkingTopic t = byName.get(topic);
                        lines.add(r + "; create it by hand: kafka-topics.sh --bootstrap-server " + bootstrap
                                + " --create --topic " + topic + " --partitions " + t.partitions() + " --config "
                                + TopicConfig.RETENTION_MS_CONFIG + "=" + t.retentionMs() + " --config "
                                + TopicConfig.MAX_MESSAGE_BYTES_CONFIG + "=" + t.maxMessageBytes());
                    }
                    throw new IOException(String.join("\n", lines));
                }
            }
            Map<String, Config> configs = configs(admin, topics.stream().map(ParkingTopic::name).toList());
            Map<String, List<Raise>> raise = new LinkedHashMap<>(); // per topic
            int maxBytes = 0;
            for (ParkingTopic t : topics) {
                Config c = configs.get(t.name());
                List<Raise> change = new ArrayList<>();
                String retention = c.get(TopicConfig.RETENTION_MS_CONFIG).value();
                if (tooShort(Long.parseLong(retention), t.retentionMs())) {
                    change.add(new Raise(TopicConfig.RETENTION_MS_CONFIG, retention, Long.toString(t.retentionMs())));
                }
                int bytes = Integer.parseInt(c.get(TopicConfig.MAX_MESSAGE_BYTES_CONFIG).value());
                if (bytes < t.maxMessageBytes()) { // a parked copy of a source record at its limit must fit
                    change.add(new Raise(TopicConfig.MAX_MESSAGE_BYTES_CONFIG, Integer.toString(bytes),
                            Integer.toString(t.maxMessageBytes())));
                    bytes = t.maxMessageBytes();
                }
                maxBytes = Math.max(maxBytes, bytes);
                if (!change.isEmpty()) {
                    raise.put(t.name(), change);
                }
            }
            Map<ConfigResource, Collection<AlterConfigOp>> ops = new LinkedHashMap<>();
            raise.forEach((topic, change) -> ops.put(new ConfigResource(ConfigResource.Type.TOPIC, topic),
                    change.stream().map(r -> new AlterConfigOp(new ConfigEntry(r.key(), r.wants()),
                            AlterConfigOp.OpType.SET)).toList()));
            List<String> refused = new ArrayList<>();
            for (var e : admin.incrementalAlterConfigs(ops).values().entrySet()) {
                String topic = e.getKey().name();
                List<Raise> change = raise.get(topic);
                try {
                    e.getValue().get(30, TimeUnit.SECONDS);
                    log.accept("topic " + topic + ": " + String.join(", ", change.stream().map(r -> r.key()
                            + " raised from " + r.has() + " to " + r.wants()).toList()) + " (" + WHY + ")");
                } catch (ExecutionException x) {
                    String set = String.join(",", change.stream().map(r -> r.key() + "=" + r.wants()).toList());
                    refused.add("topic " + topic + ": the broker refused to set " + set.replace(",", ", ") + " (it has "
                            + String.join(", ", change.stream().map(r -> r.key() + "=" + r.has()).toList()) + "; " + WHY
                            + "): " + x.getCause().getMessage() + "; run: kafka-configs.sh "
                            + "--bootstrap-server " + bootstrap + " --alter --entity-type topics --entity-name " + topic
                            + " --add-config " + set);
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

    /**
     * Waits for each topic's creation (30 s in all) and says which the broker refused, one line each ({@code topic
     * NAME: the broker refused to create it: WHY}), sorted; a topic that exists already (made by another instance at
     * the same moment) is not a refusal. A batch's {@code all()} would give only its first failure: a
     * {@code TopicExistsException} there hid a policy's refusal of another topic, which then surfaced 30 s later as
     * an unknown topic.
     */
    static List<String> refusedCreations(Map<String, org.apache.kafka.common.KafkaFuture<Void>> outcomes)
            throws InterruptedException, TimeoutException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        List<String> refused = new ArrayList<>();
        for (var e : new java.util.TreeMap<>(outcomes).entrySet()) {
            try {
                e.getValue().get(Math.max(0, end - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (ExecutionException x) {
                if (!(x.getCause() instanceof org.apache.kafka.common.errors.TopicExistsException)) {
                    refused.add("topic " + e.getKey() + ": the broker refused to create it: " + x.getCause().getMessage());
                }
            }
        }
        return refused;
    }

    /** A topic setting to raise: what it {@code has}, what parking {@code wants}. */
    private record Raise(String key, String has, String wants) {
    }

    private static final String WHY = "a parked record must outlive its wait and fit with Weft's headers";

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
                    + e.getCause().getMessage() + (e.getCause() instanceof org.apache.kafka.common.errors.AuthorizationException
                    ? " (the dispatcher's principal needs DescribeConfigs on the source topics: it sizes the parking "
                    + "topics by their max.message.bytes)" : ""), e.getCause());
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
