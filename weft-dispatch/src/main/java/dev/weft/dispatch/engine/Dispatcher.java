package dev.weft.dispatch.engine;

import com.fasterxml.jackson.core.type.TypeReference;
import dev.weft.json.Json;
import dev.weft.dispatch.config.DispatchConfig;
import dev.weft.dispatch.config.EndpointConfig;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.NoOffsetForPartitionException;
import org.apache.kafka.clients.consumer.OffsetOutOfRangeException;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * The dispatch engine's poll loop: one Kafka consumer (one platform thread) reads the source topics and
 * the dispatcher's own parking topics (retry and wait) and gives each partition's records to the
 * {@link PartitionFlow}, which sends each record to the lanes of the endpoints it matches (never waiting
 * for them), tracks what is done, and holds (pauses) partitions. Offsets are committed per partition up to
 * the lowest record not yet done ({@link PartitionTracker}) every {@link #COMMIT_INTERVAL}.
 * <p>
 * A parked record (on a retry or wait topic) is taken when it is due and its lane has room; until then
 * its partition is paused at that record (records on one retry topic share one delay, so they come due
 * in order; each endpoint has its own wait topic, so one full lane holds back no other endpoint).
 */
public final class Dispatcher implements AutoCloseable {
    /** How often done offsets are committed. */
    public static final Duration COMMIT_INTERVAL = Duration.ofMillis(500);
    static final Duration SESSION_TIMEOUT = Duration.ofSeconds(10);
    /** How often Kafka is asked whether it answers ({@code /-/ready}); each ask waits up to 2 s. */
    static final Duration BROKER_PROBE_INTERVAL = Duration.ofSeconds(1);

    private final DispatchConfig cfg;
    private final String bootstrap;
    private final MeterRegistry registry;
    private final Consumer<String> log;
    private final Map<String, Lane> lanes = new LinkedHashMap<>();
    private final Parking parking;
    private final KafkaConsumer<byte[], byte[]> consumer;
    private final PartitionFlow flow;
    private final Map<TopicPartition, Long> lag = new ConcurrentHashMap<>();
    private final Map<TopicPartition, Meter> lagGauges = new HashMap<>();
    private final Thread thread;
    private final Admin probeAdmin;
    private final Thread probe;
    private volatile long brokerAnsweredNanos = System.nanoTime();
    /** When the consumer thread began its current turn of the loop (a poll, its rebalance callbacks, a commit). */
    private volatile long turnStartedNanos = System.nanoTime();
    private volatile boolean running = true;
    private volatile String failure;
    /** Why a delivery is stuck (neither parked nor dead-lettered: {@link Parker#stuck}); null while none is. */
    private volatile String stuck;
    private final AtomicLong lost = new AtomicLong();
    private volatile String lastLoss;
    private volatile int assigned;
    private volatile int groupPartitions = 1; // of every subscribed topic: the denominator of rate_limit shares
    private volatile StateTopic state;
    private long lastCommit; // consumer thread only
    /** A commit a turn had no budget left for: the next turn commits before anything else (consumer thread only). */
    private boolean commitOwed;
    /** What one turn of the consumer thread may wait for Kafka in all, its broker steps together. */
    private final TurnBudget turn = new TurnBudget(BROKER_CALL_TIMEOUT);
    private final Set<String> retiredKnown = ConcurrentHashMap.newKeySet(); // as the state topic says
    private final Set<TopicPartition> unpositioned = new java.util.HashSet<>(); // consumer thread only
    private final Rebalance rebalance = new Rebalance();

    private final AttemptLog attemptLog;

    private Dispatcher(DispatchConfig cfg, String bootstrap, MeterRegistry registry, Consumer<String> log,
                       AttemptLog attemptLog, int maxMessageBytes) {
        this.cfg = cfg;
        this.attemptLog = attemptLog;
        this.bootstrap = bootstrap;
        this.registry = registry;
        this.log = log;
        String clientId = "weft-dispatch-" + cfg.group();
        this.parking = new Parking(bootstrap, clientId, cfg.deadLetterTopic(), maxMessageBytes, turn, log);
        for (EndpointConfig e : cfg.endpoints()) {
            lanes.put(e.id(), new Lane(e, cfg, parking, registry, log, attemptLog));
        }
        parking.listener(new Parking.Listener() {
            @Override
            public void deadLettered(String endpoint) {
                Lane l = lanes.get(endpoint);
                if (l != null) {
                    l.countDeadLettered();
                }
            }

            @Override
            public void stuck(Delivery d, String why) {
                Dispatcher.this.stuck(d, why);
            }
        });
        Map<String, Object> props = new HashMap<>();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.GROUP_ID_CONFIG, cfg.group());
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        // Never a silent reset: a partition without a committed offset starts at its beginning (onPartitionsAssigned),
        // and a committed offset no longer in the log is an error naming what was lost (run()).
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "none");
        // Records of aborted transactions are never delivered, nor those of transactions still open.
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 500);
        props.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, (int) SESSION_TIMEOUT.toMillis());
        props.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, 2000);
        // A paused partition that resumes (due parked work, room in a lane) is fetched with the next fetch request,
        // which waits for the one in flight: at most this long when the other partitions have nothing new.
        props.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 100);
        // Incremental rebalances: only the partitions that change owner are revoked (docs/dispatch.md, "Several
        // instances"); the classic protocol keeps the session timeout in the dispatcher's hands.
        props.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG,
                org.apache.kafka.clients.consumer.CooperativeStickyAssignor.class.getName());
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        this.consumer = new KafkaConsumer<>(props);
        this.flow = new PartitionFlow(cfg, List.copyOf(lanes.values()), parking, new PartitionFlow.Partitions() {
            @Override
            public void holdAt(TopicPartition tp, long offset) {
                consumer.seek(tp, offset);
                consumer.pause(List.of(tp));
            }

            @Override
            public void resume(Collection<TopicPartition> tps) {
                consumer.resume(tps);
            }

            @Override
            public void pause(TopicPartition tp) {
                consumer.pause(List.of(tp));
            }
        }, Clock.systemUTC(), log);
        Gauge.builder("weft.dispatch.partitions.paused", flow, PartitionFlow::held)
                .description("partitions paused: max_outstanding reached, or parked work not yet due / no room")
                .register(registry);
        Gauge.builder("weft.dispatch.partitions.assigned", this, x -> x.assigned).register(registry);
        FunctionCounter.builder("weft.dispatch.records", flow.records(), AtomicLong::get)
                .description("records taken from Kafka (source and parking topics)").register(registry);
        FunctionCounter.builder("weft.dispatch.records_lost", lost, AtomicLong::get)
                .description("records deleted from a topic before they were read (retention), skipped").register(registry);
        FunctionCounter.builder("weft.dispatch.record_errors", flow.recordErrors(), AtomicLong::get)
                .description("records that hit an internal error or had bad parking headers; dead-lettered")
                .register(registry);
        this.thread = Thread.ofPlatform().name("weft-dispatch-consumer").unstarted(this::run);
        this.probeAdmin = KafkaAdmin.admin(bootstrap);
        this.probe = Thread.ofVirtual().name("weft-dispatch-broker-probe").unstarted(this::probeBroker);
    }

    /**
     * Asks Kafka every {@link #BROKER_PROBE_INTERVAL} whether it answers (a cluster description): what
     * {@code /-/ready} and {@code broker_unanswered_ms} in {@code /-/health} go by. The consumer does not say when
     * it cannot reach the broker (its poll just returns nothing), so the dispatcher asks on its own connection.
     */
    private void probeBroker() {
        while (running) {
            try {
                probeAdmin.describeCluster(new DescribeClusterOptions().timeoutMs(2000)).nodes().get(3, TimeUnit.SECONDS);
                brokerAnsweredNanos = System.nanoTime();
            } catch (InterruptedException e) {
                return;
            } catch (Exception e) {
                // no answer: readiness says so once it lasts broker_unready_after
            }
            try {
                Thread.sleep(BROKER_PROBE_INTERVAL);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    /**
     * Checks the broker and the topics, creates the parking and dead-letter topics when missing, and starts
     * consuming. Nothing starts when a check fails.
     */
    public static Dispatcher start(DispatchConfig cfg, String bootstrap, MeterRegistry registry,
                                   Consumer<String> log) throws DispatchException {
        return start(cfg, bootstrap, registry, log, List.of());
    }

    /**
     * As {@link #start(DispatchConfig, String, MeterRegistry, Consumer)}, also reading {@code retired}: parking
     * topics of the config before a reload that this one does not use (see {@link PartitionFlow#retire}).
     */
    public static Dispatcher start(DispatchConfig cfg, String bootstrap, MeterRegistry registry,
                                   Consumer<String> log, Collection<String> retired) throws DispatchException {
        int partitions = checkTopics(cfg, bootstrap);
        int maxMessageBytes;
        int sourceMaxBytes;
        try {
            sourceMaxBytes = KafkaAdmin.maxMessageBytes(bootstrap, cfg.topics());
            maxMessageBytes = KafkaAdmin.ensureParkingTopics(bootstrap, parkingTopics(cfg, partitions, sourceMaxBytes),
                    log);
        } catch (java.io.IOException e) {
            throw new DispatchException(e.getMessage(), e);
        }
        List<String> all = new ArrayList<>(cfg.topics());
        all.addAll(cfg.parkingTopics());
        int groupPartitions = RateShare.partitions(bootstrap, all);
        AttemptLog attempts;
        try {
            attempts = AttemptLog.open(cfg.accessLog(), registry);
        } catch (java.io.IOException e) {
            throw new DispatchException("access_log " + cfg.accessLog() + ": " + e, e);
        }
        Dispatcher d = new Dispatcher(cfg, bootstrap, registry, log, attempts, maxMessageBytes);
        d.groupPartitions = groupPartitions;
        try { // endpoint state (paused, disabled, throttled) before the first record: a restart keeps it
            d.state = StateTopic.open(bootstrap, cfg.stateTopic(), "weft-dispatch-" + cfg.group(), d::applyState, log);
        } catch (java.io.IOException | RuntimeException e) {
            d.close();
            throw new DispatchException("endpoint state topic " + cfg.stateTopic() + ": " + e.getMessage(), e);
        }
        for (Lane l : d.lanes.values()) {
            l.stateOut((f, v) -> d.state.publishLater(l.id(), f, v));
        }
        d.lanes.values().forEach(Lane::start);
        List<String> reading = d.retired(retired);
        try { // a retired topic still holds parked records: it must keep them as long as a parking topic would
            KafkaAdmin.ensureParkingTopics(bootstrap, retiredTopics(cfg, reading, partitions, sourceMaxBytes), log,
                    false);
        } catch (java.io.IOException e) {
            d.close();
            throw new DispatchException(e.getMessage(), e);
        }
        d.flow.retire(reading);
        all.addAll(reading);
        d.consumer.subscribe(all, d.rebalance);
        d.thread.start();
        d.probe.start();
        return d;
    }

    /**
     * The retired parking topics to read: those given (a reload's) and those kept on the state topic by earlier
     * starts, less those this config uses again and those deleted since. A change is written back to the state
     * topic ({@code *group*}/retired) before the first poll, so a restart reads them too.
     */
    private List<String> retired(Collection<String> given) throws DispatchException {
        Set<String> want = new TreeSet<>(retiredKnown);
        want.addAll(given);
        cfg.parkingTopics().forEach(want::remove);
        if (!want.isEmpty()) {
            Set<String> exist;
            try {
                exist = consumer.listTopics(Duration.ofSeconds(15)).keySet();
            } catch (org.apache.kafka.common.KafkaException e) {
                close();
                throw new DispatchException("listing topics on " + bootstrap + ": " + e.getMessage(), e);
            }
            want.retainAll(exist);
        }
        if (!want.equals(new TreeSet<>(retiredKnown))) {
            try {
                state.publish(StateTopic.GROUP, StateTopic.Field.RETIRED, List.copyOf(want));
            } catch (java.io.IOException e) {
                close();
                throw new DispatchException("writing the retired parking topics to " + cfg.stateTopic() + ": "
                        + e.getMessage(), e);
            }
            log.accept("retired parking topics read until they are deleted: " + (want.isEmpty() ? "none" : want)
                    + " (kept on " + cfg.stateTopic() + ")");
        }
        return List.copyOf(want);
    }

    /**
     * Room for Weft's headers on a parked copy: parking topics take records this much larger than the largest
     * source topic does ({@code max.message.bytes}).
     */
    static final int HEADER_ROOM_BYTES = 64 * 1024;

    /**
     * The parking topics of {@code cfg}: retry topics keep records {@link DispatchConfig#retryRetention}, wait topics
     * and the dead-letter topic until they are read; each takes records {@link #HEADER_ROOM_BYTES} larger than the
     * source topics.
     */
    static List<KafkaAdmin.ParkingTopic> parkingTopics(DispatchConfig cfg, int partitions, int sourceMaxBytes) {
        int bytes = (int) Math.min(Integer.MAX_VALUE, (long) sourceMaxBytes + HEADER_ROOM_BYTES);
        List<KafkaAdmin.ParkingTopic> out = new ArrayList<>();
        cfg.retryDelays().forEach(delay -> out.add(new KafkaAdmin.ParkingTopic(cfg.retryTopic(delay), partitions,
                DispatchConfig.retryRetention(delay).toMillis(), bytes)));
        cfg.endpoints().forEach(e -> out.add(new KafkaAdmin.ParkingTopic(cfg.waitTopic(e.id()), partitions, -1, bytes)));
        out.add(new KafkaAdmin.ParkingTopic(cfg.deadLetterTopic(), partitions, -1, bytes));
        return out;
    }

    /**
     * The retired parking topics as parking topics: a retry topic ({@code GROUP.retry.MILLIS}, of this group or an
     * earlier one) keeps records {@link DispatchConfig#retryRetention} of its delay; any other (a wait or dead-letter
     * topic, or a name that does not say its delay) never deletes by time.
     */
    static List<KafkaAdmin.ParkingTopic> retiredTopics(DispatchConfig cfg, List<String> retired, int partitions,
                                                       int sourceMaxBytes) {
        int bytes = (int) Math.min(Integer.MAX_VALUE, (long) sourceMaxBytes + HEADER_ROOM_BYTES);
        List<KafkaAdmin.ParkingTopic> out = new ArrayList<>();
        for (String t : retired) {
            long retention = -1;
            int at = t.lastIndexOf(".retry.");
            if (at >= 0) {
                try {
                    retention = DispatchConfig.retryRetention(Duration.ofMillis(
                            Long.parseLong(t.substring(at + ".retry.".length())))).toMillis();
                } catch (NumberFormatException | ArithmeticException e) {
                    retention = -1; // not a delay: keep for ever, the safe side
                }
            }
            out.add(new KafkaAdmin.ParkingTopic(t, partitions, retention, bytes));
        }
        return out;
    }

    /** The largest partition count of the source topics (parking topics get as many); fails clearly. */
    private static int checkTopics(DispatchConfig cfg, String bootstrap) throws DispatchException {
        try (Admin admin = KafkaAdmin.admin(bootstrap)) {
            try {
                admin.describeCluster().nodes().get(15, TimeUnit.SECONDS);
            } catch (Exception e) {
                throw new DispatchException("cannot reach Kafka at " + bootstrap + " (" + rootMessage(e)
                        + "); is the broker running? `weft kafka` starts one for development", e);
            }
            Set<String> existing = admin.listTopics().names().get(15, TimeUnit.SECONDS);
            List<String> missing = cfg.topics().stream().filter(t -> !existing.contains(t)).toList();
            if (!missing.isEmpty()) {
                throw new DispatchException("topic" + (missing.size() > 1 ? "s " : " ") + String.join(", ", missing)
                        + " not found on " + bootstrap + " (" + cfg.source() + "); topics there: "
                        + (existing.isEmpty() ? "none" : String.join(", ", new TreeSet<>(existing)))
                        + ". Create it first (weft kafka --topic NAME:PARTITIONS)", null);
            }
            int max = 1;
            for (TopicDescription d : admin.describeTopics(cfg.topics()).allTopicNames().get(15, TimeUnit.SECONDS)
                    .values()) {
                max = Math.max(max, d.partitions().size());
            }
            return max;
        } catch (DispatchException e) {
            throw e;
        } catch (Exception e) {
            throw new DispatchException("checking topics on " + bootstrap + ": " + rootMessage(e), e);
        }
    }

    private static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t.getMessage() != null ? t.getMessage() : t.toString();
    }

    // ---- the consumer thread ------------------------------------------------------------------------

    private void run() {
        try {
            while (running) {
                turnStartedNanos = System.nanoTime();
                turn.start();
                ConsumerRecords<byte[], byte[]> batch;
                try {
                    batch = consumer.poll(Duration.ofMillis(flow.held() == 0 ? 200 : flow.feeding() ? 10 : 50));
                } catch (OffsetOutOfRangeException e) {
                    outOfRange(e.offsetOutOfRangePartitions());
                    continue;
                } catch (NoOffsetForPartitionException e) {
                    log.accept("no committed offset for " + e.partitions() + ": starting at their beginning");
                    consumer.seekToBeginning(e.partitions());
                    continue;
                }
                if (commitOwed) {
                    // the last turn's budget ran out before its commit: this one goes before the positioning, so
                    // partitions that keep failing to be positioned never starve the commits of the others
                    lastCommit = System.nanoTime();
                    commitOwed = !commit(null);
                }
                rebalance.position();
                for (TopicPartition tp : batch.partitions()) {
                    flow.take(tp, batch.records(tp));
                }
                flow.resumeDue();
                long now = System.nanoTime();
                if (now - lastCommit >= COMMIT_INTERVAL.toNanos()) {
                    lastCommit = now;
                    commitOwed = !commit(null);
                    for (TopicPartition tp : flow.assigned()) {
                        consumer.currentLag(tp).ifPresent(l -> lag.put(tp, l));
                    }
                }
            }
            drain();
        } catch (Throwable t) {
            failure = t.toString();
            log.accept("ERROR: the consumer stopped: " + t);
        } finally {
            try {
                consumer.close(CloseOptions.timeout(Duration.ofSeconds(10)));
            } catch (RuntimeException e) {
                log.accept("closing the consumer: " + e);
            }
        }
    }

    /**
     * The committed position of a partition is no longer in its log: records were deleted (retention, or by hand)
     * before they were read. What is lost is named (topic, partition, offsets) in an ERROR line, counted
     * ({@code weft_dispatch_records_lost_total}, {@code records_lost} in {@code /-/health}), and the partition goes
     * on from its first record; a position past the log's end (a log truncated by an unclean leader election, or a
     * topic deleted and created again) goes on from the end; a position inside the log (it moved between the error
     * and the lookups) goes on from there. The partition's tracker starts again at the new position (records taken
     * below it are never taken twice by the old one). A broker that does not answer the lookups leaves the position
     * as it is: the next poll fails the same way and the lookups are tried again.
     */
    private void outOfRange(Map<TopicPartition, Long> positions) {
        Map<TopicPartition, Long> begin;
        Map<TopicPartition, Long> end;
        long started = System.nanoTime();
        try { // both look-ups within what is left of the turn's budget, together
            begin = consumer.beginningOffsets(positions.keySet(), turn.left());
            end = consumer.endOffsets(positions.keySet(), turn.left());
        } catch (org.apache.kafka.common.KafkaException e) {
            log.accept("looking up the offsets of " + positions.keySet() + " failed (" + e + "); trying again");
            pauseBriefly(started);
            return;
        }
        positions.forEach((tp, at) -> {
            Long firstOrNull = begin.get(tp);
            Long lastOrNull = end.get(tp);
            if (firstOrNull == null || lastOrNull == null) {
                return; // not answered for this partition: the next poll fails again and it is looked up again
            }
            long first = firstOrNull;
            long last = lastOrNull;
            String kind = flow.isParking(tp.topic()) ? "parking topic" : "source topic";
            long to;
            if (at < first) {
                lost.addAndGet(first - at);
                lastLoss = kind + " " + tp + ": offsets " + at + " to " + (first - 1) + " (" + (first - at)
                        + " records) were deleted before they were read";
                log.accept("ERROR: " + lastLoss + " (retention.ms, or records deleted by hand); going on from "
                        + first);
                to = first;
            } else if (at > last) {
                log.accept("ERROR: " + kind + " " + tp + ": position " + at + " is past the log's end " + last
                        + " (the log was truncated, or the topic deleted and created again: then its records " + first
                        + " to " + (last - 1) + " were not read); going on from " + last);
                to = last;
            } else {
                log.accept(kind + " " + tp + ": position " + at + " is in the log again (" + first + " to " + last
                        + "); going on from " + at);
                to = at;
            }
            consumer.seek(tp, to);
            flow.sought(tp, to);
        });
    }

    /**
     * How long the broker steps of one turn of the consumer thread's loop may wait in all ({@link TurnBudget}): a
     * commit, the committed offsets and positions of the partitions just assigned, the offset look-ups after an
     * out-of-range position, and the produces this thread makes (a park when a lane is full, a dead letter) for
     * metadata or buffer room ({@link Parking#SEND_BLOCK}). A step that runs out, or finds nothing left, is logged and
     * done again on a later turn; the thread goes on polling (docs/dispatch.md, {@code consumer_turn_ms}).
     */
    public static final Duration BROKER_CALL_TIMEOUT = Duration.ofSeconds(10);

    /** After a failed broker call begun at {@code startedNanos}: not a busy loop of them (500 ms since it began). */
    private void pauseBriefly(long startedNanos) {
        long left = Duration.ofMillis(500).toNanos() - (System.nanoTime() - startedNanos);
        if (left <= 0) {
            return; // the call itself waited that long
        }
        try {
            Thread.sleep(Duration.ofNanos(left));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            running = false;
        }
    }

    /**
     * Commits what is done in {@code tps} (all assigned partitions when null), within what is left of the turn's
     * budget. With nothing left, nothing is committed now (the loop's commit is then owed, {@link #commitOwed}, and
     * the next turn's comes first); the offsets stay where they were, so nothing is committed before its deliveries
     * settled.
     *
     * @return false when it was left for the next turn
     */
    private boolean commit(Collection<TopicPartition> tps) {
        Map<TopicPartition, Long> done = flow.committable(tps);
        if (done.isEmpty()) {
            return true;
        }
        if (turn.spent()) {
            return false;
        }
        Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
        done.forEach((tp, o) -> offsets.put(tp, new OffsetAndMetadata(o)));
        try {
            consumer.commitSync(offsets, turn.left());
            flow.committed(done);
        } catch (org.apache.kafka.common.KafkaException e) {
            log.accept("commit failed (" + e.getMessage() + "); the next commit covers it");
        }
        return true;
    }

    /** On stop: take nothing more, let deliveries in flight finish (drain_timeout), commit what is done. */
    private void drain() {
        consumer.pause(consumer.assignment());
        long end = System.nanoTime() + cfg.drainTimeout().toNanos();
        while (System.nanoTime() < end && flow.outstanding() > 0) {
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                break;
            }
        }
        turn.start(); // the last commit: a budget of its own, not what the last turn left
        commit(null);
        int left = flow.outstanding();
        if (left > 0) {
            log.accept(left + " records were not done at the drain timeout; they were not committed and will be "
                    + "delivered again after the restart (at least once)");
        }
    }

    private final class Rebalance implements ConsumerRebalanceListener {
        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            // what is done; the rest comes back to whoever gets the partition
            if (!commit(partitions)) {
                log.accept("no time left in this turn to commit what is done in " + partitions
                        + " before they go: their new owner delivers those records again (at least once)");
            }
            forget(partitions);
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> partitions) {
            forget(partitions);
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            unpositioned.addAll(partitions);
            position();
        }

        /**
         * Gives the partitions assigned and not yet positioned their position and tracker. A partition this group
         * never committed starts at its beginning (a new group, a new parking topic); auto.offset.reset=none makes
         * any other missing position an error instead of a silent jump. When the broker does not answer (a blip),
         * the partitions stay paused and this is tried again on the next loop: a failure here would otherwise
         * come out of poll() and stop the consumer.
         */
        void position() {
            if (unpositioned.isEmpty()) {
                return;
            }
            List<TopicPartition> todo = List.copyOf(unpositioned);
            if (turn.spent()) {
                // this turn's broker steps used its budget (a commit before, a positioning that failed in the
                // rebalance's callback): the partitions wait, paused, for the next turn's
                consumer.pause(todo);
                return;
            }
            Map<TopicPartition, Long> at = new HashMap<>();
            try {
                // all of them within the turn's budget, not each
                Map<TopicPartition, OffsetAndMetadata> committed = consumer.committed(new java.util.HashSet<>(todo),
                        turn.left());
                List<TopicPartition> fresh = todo.stream().filter(tp -> committed.get(tp) == null).toList();
                if (!fresh.isEmpty()) {
                    consumer.seekToBeginning(fresh);
                }
                for (TopicPartition tp : todo) {
                    at.put(tp, consumer.position(tp, turn.left()));
                }
            } catch (org.apache.kafka.common.KafkaException e) {
                log.accept("positioning " + todo + " failed (" + e + "); they wait and it is tried again");
                consumer.pause(todo);
                return;
            }
            for (TopicPartition tp : todo) {
                flow.assigned(tp, at.get(tp));
                lagGauges.computeIfAbsent(tp, k -> Gauge.builder("weft.dispatch.consumer.lag", lag,
                                m -> m.getOrDefault(k, 0L))
                        .tag("topic", k.topic()).tag("partition", Integer.toString(k.partition()))
                        .description("records in the partition after the consumer's position").register(registry));
            }
            unpositioned.removeAll(todo);
            consumer.resume(todo);
            assigned = flow.assigned().size();
            shareRates();
        }

        private void shareRates() {
            double share = RateShare.share(flow.assigned().size(), groupPartitions);
            lanes.values().forEach(l -> l.share(share));
        }

        private void forget(Collection<TopicPartition> partitions) {
            unpositioned.removeAll(partitions);
            flow.forget(partitions);
            for (TopicPartition tp : partitions) {
                lag.remove(tp);
                Meter g = lagGauges.remove(tp);
                if (g != null) {
                    registry.remove(g);
                }
            }
            assigned = flow.assigned().size();
            shareRates();
        }
    }

    // ---- endpoint state -----------------------------------------------------------------------------

    private void applyState(String endpoint, StateTopic.Field field, Object value) {
        if (field == StateTopic.Field.RETIRED) {
            if (StateTopic.GROUP.equals(endpoint) && value instanceof List<?> topics) {
                topics.forEach(t -> retiredKnown.add((String) t));
            }
            return;
        }
        Lane l = lanes.get(endpoint);
        if (l == null) {
            return;
        }
        // a pause or a disable read from the topic (another instance's, an operator's, or one written here before a
        // restart) is said once, when it changes this instance's state; throttles come and go too often to log
        String change = switch (field) {
            case PAUSED -> l.paused() == Boolean.TRUE.equals(value) ? null
                    : Boolean.TRUE.equals(value) ? "paused" : "resumed";
            case DISABLED -> java.util.Objects.equals(l.disabled(), value) ? null
                    : value == null ? "enabled" : "disabled (" + value + ")";
            default -> null;
        };
        l.apply(field, value);
        if (change != null) {
            log.accept("endpoint " + endpoint + ": " + change + ", as read from " + cfg.stateTopic());
        }
    }

    /** What an operator may do to an endpoint ({@code POST /-/endpoints/ID/ACTION}). */
    public enum Action {
        /** Its deliveries wait (parked on its wait topic; those already in its lane wait in memory). */
        PAUSE,
        /** Undoes a pause. */
        RESUME,
        /** Undoes a 410's disable and a Retry-After's throttle. */
        ENABLE
    }

    /**
     * Writes the change to the state topic (all instances apply it; a restart keeps it), applies it here, and
     * returns the endpoint's status; null when there is no endpoint {@code id}.
     */
    public EndpointStatus control(String id, Action action) throws java.io.IOException {
        Lane l = lanes.get(id);
        if (l == null) {
            return null;
        }
        switch (action) {
            case PAUSE, RESUME -> {
                boolean p = action == Action.PAUSE;
                state.publish(id, StateTopic.Field.PAUSED, p);
                l.apply(StateTopic.Field.PAUSED, p);
            }
            case ENABLE -> {
                state.publish(id, StateTopic.Field.DISABLED, null);
                state.publish(id, StateTopic.Field.THROTTLED_UNTIL, 0L);
                l.apply(StateTopic.Field.DISABLED, null);
                l.apply(StateTopic.Field.THROTTLED_UNTIL, 0L);
            }
        }
        log.accept("endpoint " + id + ": " + action.name().toLowerCase(java.util.Locale.ROOT) + " (written to "
                + cfg.stateTopic() + ")");
        return l.status();
    }

    /**
     * A delivery can be neither parked nor dead-lettered: its record's commit waits (it comes again after a
     * restart), its endpoint is paused here, and {@code /-/health} says FAILED with the reason until the process
     * is restarted (the cause, such as a dead-letter topic's max.message.bytes, needs an operator).
     */
    private void stuck(Delivery d, String why) {
        Lane l = lanes.get(d.endpoint());
        String text = "record " + Parking.where(d) + (d.endpoint().isEmpty() ? "" : " for endpoint '" + d.endpoint() + "'")
                + " can be neither parked nor dead-lettered: " + why;
        if (l != null) {
            l.pauseStuck(why);
        }
        if (stuck == null) {
            stuck = text;
        }
        log.accept("ERROR: " + text + "; " + (l != null ? "endpoint '" + d.endpoint() + "' is paused here, " : "")
                + "the record's offset is not committed (it comes again after a restart); /-/health says failed");
    }

    // ---- status -------------------------------------------------------------------------------------

    public String bootstrap() {
        return bootstrap;
    }

    /** Null while the consumer runs; otherwise why it stopped. */
    public String failure() {
        return failure;
    }

    /**
     * Liveness: false only when the process cannot work (the consumer stopped) or is stopping. A stuck delivery
     * keeps it (restarting would not fix the cause, and the other endpoints go on): {@link #health} says failed
     * and why, {@link #readiness} says not ready.
     */
    public boolean live() {
        return failure == null && running;
    }

    /** What {@code /-/health} shows. */
    public DispatcherHealth health() {
        String f = failure != null ? failure : stuck;
        return new DispatcherHealth(f != null ? DispatcherHealth.Status.FAILED : running ? DispatcherHealth.Status.UP
                : DispatcherHealth.Status.STOPPING, f, brokerUnanswered().toMillis(), consumerTurn().toMillis(), cfg.group(),
                assigned, flow.held(), flow.outstanding(),
                flow.records().get(), lag.values().stream().mapToLong(Long::longValue).sum(),
                lanes.values().stream().filter(l -> l.disabled() != null).count(), parking.failures(), lost.get(),
                lastLoss);
    }

    /** How long since Kafka last answered the probe (about {@link #BROKER_PROBE_INTERVAL} while it answers). */
    Duration brokerUnanswered() {
        return Duration.ofNanos(System.nanoTime() - brokerAnsweredNanos);
    }

    /**
     * How long the consumer thread has been in its current turn of the loop: under a second while it goes round; a
     * broker that does not answer holds a turn up to {@link #BROKER_CALL_TIMEOUT}, its broker steps together.
     */
    Duration consumerTurn() {
        return Duration.ofNanos(System.nanoTime() - turnStartedNanos);
    }

    /** What {@code /-/ready} answers: ready, or why not (no URL or address in it). */
    public record Readiness(boolean ready, String reason) {
    }

    /**
     * Ready while the consumer runs, no delivery is stuck, and Kafka answered within {@code broker_unready_after}:
     * an orchestrator stops sending work (or traffic) to an instance that is not; liveness ({@code /-/health})
     * stays 200 through a broker outage, so it does not restart every instance for it.
     */
    public Readiness readiness() {
        DispatcherHealth h = health();
        return switch (h.status()) {
            case FAILED -> new Readiness(false, "failed: " + h.failure());
            case STOPPING -> new Readiness(false, "stopping");
            case UP -> {
                Duration silent = brokerUnanswered();
                yield silent.compareTo(cfg.brokerUnreadyAfter()) > 0
                        ? new Readiness(false, "Kafka has not answered for " + silent.toSeconds() + " s (broker_unready_after: "
                        + dev.weft.core.Durations.format(cfg.brokerUnreadyAfter()) + ")")
                        : new Readiness(true, null);
            }
        };
    }

    /** What {@code /-/endpoints} shows, in config order. */
    public List<EndpointStatus> endpointStatus() {
        return lanes.values().stream().map(Lane::status).toList();
    }

    /**
     * {@link #endpointStatus} as JSON-like maps (the names {@code /-/endpoints} prints); kept for callers that
     * read it so (weft-lab's DispatchLab).
     */
    public List<Map<String, Object>> endpoints() {
        return endpointStatus().stream().map(s -> Json.MAPPER.convertValue(s, new TypeReference<Map<String, Object>>() {
        })).toList();
    }

    /** A one-line summary for the log. */
    public String summary() {
        long delivered = lanes.values().stream().mapToLong(Lane::delivered).sum();
        long parked = lanes.values().stream().mapToLong(Lane::parked).sum();
        long dead = lanes.values().stream().mapToLong(Lane::deadLettered).sum();
        long lagSum = lag.values().stream().mapToLong(Long::longValue).sum();
        return "records " + flow.records().get() + ", delivered " + delivered + ", parked " + parked
                + ", dead-lettered " + dead + ", lag " + lagSum + ", paused partitions " + flow.held();
    }

    /** Stops: no new records; deliveries in flight get drain_timeout; done offsets are committed. */
    @Override
    public void close() {
        running = false;
        parking.stopping();
        probe.interrupt();
        try {
            thread.join(cfg.drainTimeout().plusSeconds(20));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        lanes.values().forEach(Lane::halt);
        lanes.values().forEach(l -> l.stop(Duration.ofSeconds(1)));
        parking.close();
        probeAdmin.close(Duration.ofSeconds(2));
        attemptLog.close();
        if (state != null) {
            state.close();
        }
    }
}
