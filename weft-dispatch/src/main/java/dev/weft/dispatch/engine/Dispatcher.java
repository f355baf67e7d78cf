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
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
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
    private volatile boolean running = true;
    private volatile String failure;
    private volatile int assigned;
    private volatile int groupPartitions = 1; // of every subscribed topic: the denominator of rate_limit shares
    private volatile StateTopic state;
    private long lastCommit; // consumer thread only

    private final AttemptLog attemptLog;

    private Dispatcher(DispatchConfig cfg, String bootstrap, MeterRegistry registry, Consumer<String> log,
                       AttemptLog attemptLog) {
        this.cfg = cfg;
        this.attemptLog = attemptLog;
        this.bootstrap = bootstrap;
        this.registry = registry;
        this.log = log;
        String clientId = "weft-dispatch-" + cfg.group();
        this.parking = new Parking(bootstrap, clientId, cfg.deadLetterTopic(), log);
        for (EndpointConfig e : cfg.endpoints()) {
            lanes.put(e.id(), new Lane(e, cfg, parking, registry, log, attemptLog));
        }
        Map<String, Object> props = new HashMap<>();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.GROUP_ID_CONFIG, cfg.group());
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
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
        FunctionCounter.builder("weft.dispatch.record_errors", flow.recordErrors(), AtomicLong::get)
                .description("records that hit an internal error or had bad parking headers; dead-lettered")
                .register(registry);
        this.thread = Thread.ofPlatform().name("weft-dispatch-consumer").unstarted(this::run);
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
        Map<String, Integer> create = new LinkedHashMap<>();
        cfg.parkingTopics().forEach(t -> create.put(t, partitions));
        create.put(cfg.deadLetterTopic(), partitions);
        try {
            KafkaAdmin.createTopics(bootstrap, create);
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
        Dispatcher d = new Dispatcher(cfg, bootstrap, registry, log, attempts);
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
        d.flow.retire(retired);
        all.addAll(retired);
        d.consumer.subscribe(all, d.new Rebalance());
        d.thread.start();
        return d;
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
                ConsumerRecords<byte[], byte[]> batch = consumer.poll(Duration.ofMillis(flow.held() == 0 ? 200
                        : flow.feeding() ? 10 : 50));
                for (TopicPartition tp : batch.partitions()) {
                    flow.take(tp, batch.records(tp));
                }
                flow.resumeDue();
                long now = System.nanoTime();
                if (now - lastCommit >= COMMIT_INTERVAL.toNanos()) {
                    lastCommit = now;
                    commit(null);
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

    /** Commits what is done in {@code tps} (all assigned partitions when null). */
    private void commit(Collection<TopicPartition> tps) {
        Map<TopicPartition, Long> done = flow.committable(tps);
        if (done.isEmpty()) {
            return;
        }
        Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
        done.forEach((tp, o) -> offsets.put(tp, new OffsetAndMetadata(o)));
        try {
            consumer.commitSync(offsets, Duration.ofSeconds(10));
            flow.committed(done);
        } catch (org.apache.kafka.common.KafkaException e) {
            log.accept("commit failed (" + e.getMessage() + "); the next commit covers it");
        }
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
            commit(partitions); // what is done; the rest comes back to whoever gets the partition
            forget(partitions);
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> partitions) {
            forget(partitions);
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            for (TopicPartition tp : partitions) {
                flow.assigned(tp, consumer.position(tp));
                lagGauges.put(tp, Gauge.builder("weft.dispatch.consumer.lag", lag, m -> m.getOrDefault(tp, 0L))
                        .tag("topic", tp.topic()).tag("partition", Integer.toString(tp.partition()))
                        .description("records in the partition after the consumer's position").register(registry));
            }
            assigned = flow.assigned().size();
            shareRates();
        }

        private void shareRates() {
            double share = RateShare.share(flow.assigned().size(), groupPartitions);
            lanes.values().forEach(l -> l.share(share));
        }

        private void forget(Collection<TopicPartition> partitions) {
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
        Lane l = lanes.get(endpoint);
        if (l != null) {
            l.apply(field, value);
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

    // ---- status -------------------------------------------------------------------------------------

    public String bootstrap() {
        return bootstrap;
    }

    /** Null while the consumer runs; otherwise why it stopped. */
    public String failure() {
        return failure;
    }

    /** What {@code /-/health} shows. */
    public DispatcherHealth health() {
        String f = failure;
        return new DispatcherHealth(f != null ? DispatcherHealth.Status.FAILED : running ? DispatcherHealth.Status.UP
                : DispatcherHealth.Status.STOPPING, f, bootstrap, cfg.group(), assigned, flow.held(), flow.outstanding(),
                flow.records().get(), lag.values().stream().mapToLong(Long::longValue).sum(),
                lanes.values().stream().filter(l -> l.disabled() != null).count(), parking.failures());
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
        try {
            thread.join(cfg.drainTimeout().plusSeconds(20));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        lanes.values().forEach(Lane::halt);
        lanes.values().forEach(l -> l.stop(Duration.ofSeconds(1)));
        parking.close();
        attemptLog.close();
        if (state != null) {
            state.close();
        }
    }
}
