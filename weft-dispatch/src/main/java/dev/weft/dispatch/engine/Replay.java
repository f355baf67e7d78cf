package dev.weft.dispatch.engine;

import dev.weft.dispatch.config.DispatchConfig;
import dev.weft.dispatch.config.EndpointConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * {@code weft dispatch replay}: puts dead letters of one endpoint (from {@code GROUP.dlq}), or the source
 * records it matches in a time range, back on that endpoint's wait topic {@code GROUP.wait.ID} as due now, with
 * the webhook-id they had (a source record's is derived from topic, partition, offset and endpoint as always).
 * A running dispatcher takes them from there for that endpoint only; the other endpoints do not see them.
 * <p>
 * Idempotent per arguments: what it read is committed (after Kafka acknowledged every copy) under a consumer
 * group named from the arguments, {@code GROUP.replay.ID.HASH}; a second run with the same arguments starts
 * there and replays only records it had not replayed (in DLQ mode: dead letters written since). A crash between
 * the copies and the commit replays those again (at least once; the webhook-id lets the endpoint drop them).
 */
public final class Replay {
    /** Header on each replayed copy: the replay group that wrote it. */
    public static final String MARKER = "weft-replay";
    static final int MAX_PENDING = 10_000;

    /** @param read records read in range; matched those for the endpoint; replayed copies written (0 on --dry-run) */
    public record Result(String group, long read, long matched, long replayed, boolean dryRun) {
    }

    private Replay() {
    }

    /** The consumer group that keeps a replay's position: the same arguments, the same group. */
    public static String group(DispatchConfig cfg, String endpoint, boolean fromDlq, Instant since, Instant until) {
        String args = (fromDlq ? "dlq" : "source:" + String.join(",", cfg.topics())) + "|" + since + "|" + until;
        try {
            byte[] h = MessageDigest.getInstance("SHA-256").digest(args.getBytes(StandardCharsets.UTF_8));
            return cfg.group() + ".replay." + endpoint + "." + HexFormat.of().formatHex(h, 0, 6);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Runs one replay. Without {@code fromDlq}, {@code since} is required (the source topics are not replayed
     * from their very start by accident).
     */
    public static Result run(DispatchConfig cfg, String bootstrap, String endpointId, boolean fromDlq, Instant since,
                             Instant until, boolean dryRun, Consumer<String> progress) throws IOException {
        EndpointConfig endpoint = cfg.endpoint(endpointId);
        if (endpoint == null) {
            throw new IOException("no endpoint '" + endpointId + "' in " + cfg.source() + "; its endpoints: "
                    + String.join(", ", cfg.endpoints().stream().map(EndpointConfig::id).toList()));
        }
        if (!fromDlq && since == null) {
            throw new IOException("replaying source records needs --since (or --from-dlq for dead letters)");
        }
        if (since != null && until != null && !since.isBefore(until)) {
            throw new IOException("--since " + since + " is not before --until " + until);
        }
        String group = group(cfg, endpointId, fromDlq, since, until);
        List<String> topics = fromDlq ? List.of(cfg.deadLetterTopic()) : cfg.topics();
        String waitTopic = cfg.waitTopic(endpointId);
        Matcher matcher = new Matcher(List.of(endpoint), cfg.typePointer());
        Map<String, Object> c = new HashMap<>();
        c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        c.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        c.put(ConsumerConfig.CLIENT_ID_CONFIG, group);
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"); // an aborted transaction's records are not replayed
        c.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 1000);
        c.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 30_000);
        c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        Map<String, Object> p = new HashMap<>();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.CLIENT_ID_CONFIG, group);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 30_000);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(c);
             KafkaProducer<byte[], byte[]> producer = dryRun ? null : new KafkaProducer<>(p)) {
            List<TopicPartition> tps = new ArrayList<>();
            for (String t : topics) {
                List<PartitionInfo> parts = consumer.partitionsFor(t, Duration.ofSeconds(20));
                if (parts == null || parts.isEmpty()) {
                    throw new IOException("topic " + t + " not found on " + bootstrap
                            + (fromDlq ? " (no dead letters yet)" : ""));
                }
                parts.forEach(pi -> tps.add(new TopicPartition(t, pi.partition())));
            }
            if (!dryRun && consumer.partitionsFor(waitTopic, Duration.ofSeconds(20)).isEmpty()) {
                throw new IOException("topic " + waitTopic + " not found on " + bootstrap
                        + ": start weft dispatch with this config once, it creates it");
            }
            consumer.assign(tps);
            Map<TopicPartition, Long> start = positions(consumer, tps, since, true);
            Map<TopicPartition, Long> stop = positions(consumer, tps, until, false);
            Map<TopicPartition, OffsetAndMetadata> committed = consumer.committed(new java.util.HashSet<>(tps));
            for (TopicPartition tp : tps) {
                OffsetAndMetadata done = committed.get(tp);
                long from = done != null ? Math.max(done.offset(), start.get(tp)) : start.get(tp);
                consumer.seek(tp, from);
            }
            long read = 0;
            long matched = 0;
            long replayed = 0;
            long lastReport = System.nanoTime();
            List<Future<RecordMetadata>> pending = new ArrayList<>();
            while (tps.stream().anyMatch(tp -> consumer.position(tp) < stop.get(tp))) {
                for (TopicPartition tp : tps) {
                    if (consumer.position(tp) >= stop.get(tp)) {
                        consumer.pause(List.of(tp));
                    }
                }
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                    TopicPartition tp = new TopicPartition(r.topic(), r.partition());
                    if (r.offset() >= stop.get(tp)) {
                        continue;
                    }
                    read++;
                    ProducerRecord<byte[], byte[]> copy = fromDlq ? fromDeadLetter(r, endpointId, waitTopic, group)
                            : fromSource(r, matcher, endpointId, waitTopic, group);
                    if (copy == null) {
                        continue;
                    }
                    matched++;
                    if (!dryRun) {
                        pending.add(producer.send(copy));
                    }
                }
                if (pending.size() >= MAX_PENDING) {
                    replayed += settle(pending);
                    commit(consumer, tps, stop);
                }
                if (System.nanoTime() - lastReport > TimeUnit.SECONDS.toNanos(5)) {
                    lastReport = System.nanoTime();
                    progress.accept("read " + read + ", for " + endpointId + " " + matched + (dryRun ? " (dry run)"
                            : ", replayed " + (replayed + pending.size())));
                }
            }
            if (!dryRun) {
                replayed += settle(pending);
                commit(consumer, tps, stop);
            }
            return new Result(group, read, matched, replayed, dryRun);
        } catch (org.apache.kafka.common.KafkaException e) {
            throw new IOException("replay on " + bootstrap + ": " + e.getMessage(), e);
        }
    }

    /** Where to start (first offset at or after {@code at}) or stop (first offset at or after {@code at}); null: the ends. */
    private static Map<TopicPartition, Long> positions(KafkaConsumer<byte[], byte[]> consumer, List<TopicPartition> tps,
                                                       Instant at, boolean start) {
        Map<TopicPartition, Long> ends = consumer.endOffsets(tps);
        if (at == null) {
            return start ? consumer.beginningOffsets(tps) : ends;
        }
        Map<TopicPartition, Long> query = new HashMap<>();
        tps.forEach(tp -> query.put(tp, at.toEpochMilli()));
        Map<TopicPartition, OffsetAndTimestamp> found = consumer.offsetsForTimes(query);
        Map<TopicPartition, Long> out = new HashMap<>();
        for (TopicPartition tp : tps) {
            OffsetAndTimestamp o = found.get(tp);
            out.put(tp, o == null ? ends.get(tp) : o.offset());
        }
        return out;
    }

    private static void commit(KafkaConsumer<byte[], byte[]> consumer, List<TopicPartition> tps,
                               Map<TopicPartition, Long> stop) {
        Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
        for (TopicPartition tp : tps) {
            offsets.put(tp, new OffsetAndMetadata(Math.min(consumer.position(tp), stop.get(tp))));
        }
        consumer.commitSync(offsets, Duration.ofSeconds(30));
    }

    private static long settle(List<Future<RecordMetadata>> pending) throws IOException {
        long n = 0;
        try {
            for (Future<RecordMetadata> f : pending) {
                f.get(60, TimeUnit.SECONDS);
                n++;
            }
        } catch (Exception e) {
            throw new IOException("writing replayed copies: " + (e.getCause() != null ? e.getCause().getMessage()
                    : e.getMessage()) + "; nothing of this batch was committed: run it again", e);
        }
        pending.clear();
        return n;
    }

    private static ProducerRecord<byte[], byte[]> fromDeadLetter(ConsumerRecord<byte[], byte[]> r, String endpoint,
                                                                 String waitTopic, String group) {
        if (!endpoint.equals(header(r, ParkedRecord.ENDPOINT))) {
            return null;
        }
        String id = header(r, ParkedRecord.WEBHOOK_ID);
        if (id == null || id.isEmpty()) {
            return null;
        }
        String origin = header(r, ParkedRecord.ORIGIN);
        return copy(r, waitTopic, new ParkedRecord(endpoint, id, 0, 0, ParkedRecord.Reason.ROOM, "replay",
                origin == null || origin.isEmpty() ? null : origin), group);
    }

    private static ProducerRecord<byte[], byte[]> fromSource(ConsumerRecord<byte[], byte[]> r, Matcher matcher,
                                                             String endpoint, String waitTopic, String group) {
        if (matcher.match(r.headers(), r.value()).endpoints().isEmpty()) {
            return null;
        }
        String origin = r.topic() + "/" + r.partition() + "/" + r.offset();
        return copy(r, waitTopic, new ParkedRecord(endpoint, WebhookSigning.webhookId(r.topic(), r.partition(),
                r.offset(), endpoint), 0, 0, ParkedRecord.Reason.ROOM, "replay", origin), group);
    }

    private static ProducerRecord<byte[], byte[]> copy(ConsumerRecord<byte[], byte[]> r, String waitTopic,
                                                       ParkedRecord parked, String group) {
        List<Header> own = new ArrayList<>();
        for (Header h : r.headers()) {
            if (!ParkedRecord.OURS.contains(h.key()) && !MARKER.equals(h.key())) {
                own.add(h);
            }
        }
        own.add(new RecordHeader(MARKER, group.getBytes(StandardCharsets.UTF_8)));
        return new ProducerRecord<>(waitTopic, null, r.key(), r.value(), parked.headers(own));
    }

    private static String header(ConsumerRecord<byte[], byte[]> r, String name) {
        Header h = r.headers().lastHeader(name);
        return h == null || h.value() == null ? null : new String(h.value(), StandardCharsets.UTF_8);
    }
}
