package dev.weft.dispatch.engine;

import dev.weft.dispatch.config.DispatchConfig;
import dev.weft.dispatch.config.EndpointConfig;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

import java.nio.charset.StandardCharsets;
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
 * The dispatch engine: one Kafka consumer (one platform thread) reads the source topics and the
 * dispatcher's own parking topics (retry and wait); each record goes to the lanes of the endpoints it
 * matches and never waits for them. Offsets are committed per partition up to the lowest record not yet
 * done ({@link PartitionTracker}); a partition with {@code max_outstanding} records not done is paused.
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
    private final Map<String, Lane> waitTopics = new HashMap<>();
    private final Set<String> retryTopics = new TreeSet<>();
    private final Set<String> sourceTopics;
    private final Parking parking;
    private final Matcher matcher;
    private final KafkaConsumer<byte[], byte[]> consumer;
    private final Map<TopicPartition, PartitionTracker> trackers = new ConcurrentHashMap<>();
    private final Map<TopicPartition, Hold> holds = new HashMap<>();
    private final Map<TopicPartition, Long> lag = new ConcurrentHashMap<>();
    private final Map<TopicPartition, Meter> lagGauges = new HashMap<>();
    private final AtomicLong records = new AtomicLong();
    private final AtomicLong recordErrors = new AtomicLong();
    private final Thread thread;
    private volatile boolean running = true;
    private volatile String failure;
    private volatile int paused;
    private volatile int assigned;
    private long lastCommit; // consumer thread only

    /** Why a partition is paused at a record, and when it may go on. */
    private sealed interface Hold {
        record Outstanding(PartitionTracker tracker, int below) implements Hold {
        }

        record Due(long atMillis) implements Hold {
        }

        record Room(Lane lane) implements Hold {
        }
    }

    private Dispatcher(DispatchConfig cfg, String bootstrap, MeterRegistry registry, Consumer<String> log) {
        this.cfg = cfg;
        this.bootstrap = bootstrap;
        this.registry = registry;
        this.log = log;
        this.sourceTopics = Set.copyOf(cfg.topics());
        String clientId = "weft-dispatch-" + cfg.group();
        this.parking = new Parking(bootstrap, clientId, cfg.deadLetterTopic(), log);
        for (EndpointConfig e : cfg.endpoints()) {
            Lane lane = new Lane(e, cfg, parking, registry, log);
            lanes.put(e.id(), lane);
            waitTopics.put(cfg.waitTopic(e.id()), lane);
        }
        cfg.retryDelays().forEach(d -> retryTopics.add(cfg.retryTopic(d)));
        this.matcher = new Matcher(cfg.endpoints(), cfg.typePointer());
        Map<String, Object> props = new HashMap<>();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.GROUP_ID_CONFIG, cfg.group());
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 500);
        props.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, (int) SESSION_TIMEOUT.toMillis());
        props.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, 2000);
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        this.consumer = new KafkaConsumer<>(props);
        Gauge.builder("weft.dispatch.partitions.paused", this, x -> x.paused)
                .description("partitions paused: max_outstanding reached, or parked work not yet due / no room")
                .register(registry);
        Gauge.builder("weft.dispatch.partitions.assigned", this, x -> x.assigned).register(registry);
        io.micrometer.core.instrument.FunctionCounter.builder("weft.dispatch.records", records, AtomicLong::get)
                .description("records taken from Kafka (source and parking topics)").register(registry);
        io.micrometer.core.instrument.FunctionCounter.builder("weft.dispatch.record_errors", recordErrors,
                AtomicLong::get).description("records that hit an internal error; dead-lettered").register(registry);
        this.thread = Thread.ofPlatform().name("weft-dispatch-consumer").unstarted(this::run);
    }

    /**
     * Checks the broker and the topics, creates the parking and dead-letter topics when missing, and starts
     * consuming. Nothing starts when a check fails.
     */
    public static Dispatcher start(DispatchConfig cfg, String bootstrap, MeterRegistry registry,
                                   Consumer<String> log) throws DispatchException {
        int partitions = checkTopics(cfg, bootstrap);
        Map<String, Integer> create = new LinkedHashMap<>();
        cfg.parkingTopics().forEach(t -> create.put(t, partitions));
        create.put(cfg.deadLetterTopic(), partitions);
        try {
            KafkaAdmin.createTopics(bootstrap, create);
        } catch (java.io.IOException e) {
            throw new DispatchException(e.getMessage(), e);
        }
        Dispatcher d = new Dispatcher(cfg, bootstrap, registry, log);
        d.lanes.values().forEach(Lane::start);
        List<String> all = new ArrayList<>(cfg.topics());
        all.addAll(cfg.parkingTopics());
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
                ConsumerRecords<byte[], byte[]> batch = consumer.poll(Duration.ofMillis(holds.isEmpty() ? 200 : 50));
                for (TopicPartition tp : batch.partitions()) {
                    take(tp, batch.records(tp));
                }
                maintain();
            }
            drain();
        } catch (Throwable t) {
            failure = t.toString();
            log.accept("ERROR: the consumer stopped: " + t);
        } finally {
            try {
                consumer.close(org.apache.kafka.clients.consumer.CloseOptions.timeout(Duration.ofSeconds(10)));
            } catch (RuntimeException e) {
                log.accept("closing the consumer: " + e);
            }
        }
    }

    private void take(TopicPartition tp, List<ConsumerRecord<byte[], byte[]>> recs) {
        PartitionTracker t = trackers.get(tp);
        if (t == null) {
            return;
        }
        Lane waitLane = waitTopics.get(tp.topic());
        boolean parked = waitLane != null || retryTopics.contains(tp.topic());
        for (ConsumerRecord<byte[], byte[]> rec : recs) {
            Hold hold = null;
            Ticket ticket = null;
            try {
                hold = parked ? holdParked(rec, waitLane) : null;
                if (hold == null) {
                    ticket = t.take(rec.offset());
                    if (parked) {
                        sendParked(ticket, rec, waitLane);
                    } else {
                        sendSource(ticket, rec);
                    }
                }
            } catch (RuntimeException e) {
                // Before any delivery was handed off, or between two (each handed-off delivery holds the
                // ticket): the record goes to the dead-letter topic on the same ticket, never on a second one.
                hold = null;
                recordErrors.incrementAndGet();
                log.accept("ERROR: record " + tp + "@" + rec.offset() + ": " + e + "; dead-lettered");
                if (ticket == null) {
                    ticket = t.take(rec.offset());
                }
                ticket.add();
                parking.deadLetter(new Delivery(null, ticket, "", rec.key(), rec.value(), own(rec), 0, origin(rec)),
                        "", "", "internal error: " + e, () -> { });
            } finally {
                if (ticket != null) {
                    ticket.done(); // the consumer thread's hold
                }
            }
            if (hold == null) {
                records.incrementAndGet();
                if (t.outstanding() >= cfg.maxOutstanding()) {
                    hold(tp, rec.offset() + 1, new Hold.Outstanding(t, cfg.maxOutstanding() / 2));
                    return;
                }
            } else {
                hold(tp, rec.offset(), hold);
                return;
            }
        }
    }

    private void hold(TopicPartition tp, long offset, Hold h) {
        consumer.seek(tp, offset);
        consumer.pause(List.of(tp));
        holds.put(tp, h);
    }

    /** A record of a source topic: to every matching lane, or parked on the lane's wait topic. Never holds. */
    private void sendSource(Ticket ticket, ConsumerRecord<byte[], byte[]> rec) {
        Matcher.Matched matched = matcher.match(rec.headers(), rec.value());
        matched.notJson().forEach(e -> lanes.get(e.id()).countNotJson());
        List<Header> headers = own(rec);
        String origin = origin(rec);
        for (EndpointConfig e : matched.endpoints()) {
            Lane lane = lanes.get(e.id());
            Delivery d = new Delivery(lane, ticket, WebhookSigning.webhookId(rec.topic(), rec.partition(), rec.offset(),
                    lane.id()), rec.key(), rec.value(), headers, 0, origin);
            handOff(d, lane.id(), lane::countDeadLettered, () -> {
                if (lane.disabled() != null) {
                    parking.deadLetter(d, "410", lane.disabled(), lane::countDeadLettered);
                } else if (!lane.offer(d)) {
                    parking.park(d, cfg.waitTopic(lane.id()), "room", "", 0, lane::countParkedRoom);
                }
            });
        }
    }

    /**
     * Adds {@code d} to its ticket and runs {@code send}, which hands it to its lane or to Kafka. When that
     * throws, {@code d} was not handed off (a lane's offer and a producer's send either take it or throw), so
     * it is dead-lettered in its place and its ticket waits for that.
     */
    private void handOff(Delivery d, String endpoint, Runnable countDeadLettered, Runnable send) {
        d.ticket().add();
        try {
            send.run();
        } catch (RuntimeException e) {
            recordErrors.incrementAndGet();
            log.accept("ERROR: delivery " + d.origin() + " to " + endpoint + ": " + e + "; dead-lettered");
            parking.deadLetter(d, endpoint, "", "internal error: " + e, countDeadLettered);
        }
    }

    /** A record of a retry or wait topic: why it must wait (not due, or its lane has no room), or null. */
    private Hold holdParked(ConsumerRecord<byte[], byte[]> rec, Lane waitLane) {
        String endpoint = text(rec, Parking.ENDPOINT);
        Lane lane = endpoint == null ? null : lanes.get(endpoint);
        if (lane == null || text(rec, Parking.WEBHOOK_ID) == null) {
            return null; // dead-lettered when taken
        }
        long due = parseLong(text(rec, Parking.DUE));
        if (due > System.currentTimeMillis()) {
            return new Hold.Due(due);
        }
        if (lane.disabled() == null && !lane.hasRoom() && waitLane != null) {
            return new Hold.Room(lane);
        }
        return null;
    }

    /** A parked record that is due and has room (see {@link #holdParked}): to its lane again. */
    private void sendParked(Ticket ticket, ConsumerRecord<byte[], byte[]> rec, Lane waitLane) {
        String endpoint = text(rec, Parking.ENDPOINT);
        Lane lane = endpoint == null ? null : lanes.get(endpoint);
        int attempts = parseInt(text(rec, Parking.ATTEMPTS));
        String id = text(rec, Parking.WEBHOOK_ID);
        String origin = text(rec, Parking.ORIGIN);
        if (lane == null || id == null) {
            Delivery d = new Delivery(null, ticket, id, rec.key(), rec.value(), own(rec), attempts,
                    origin == null ? origin(rec) : origin);
            handOff(d, endpoint, () -> { }, () -> parking.deadLetter(d, endpoint, text(rec, Parking.STATUS),
                    "endpoint '" + endpoint + "' is not in the config any more", () -> { }));
            return;
        }
        Delivery d = new Delivery(lane, ticket, id, rec.key(), rec.value(), own(rec), attempts,
                origin == null ? origin(rec) : origin);
        handOff(d, lane.id(), lane::countDeadLettered, () -> {
            if (lane.disabled() != null) {
                parking.deadLetter(d, "410", lane.disabled(), lane::countDeadLettered);
            } else if (!lane.offer(d)) {
                // due on a retry topic, but the lane is full: wait on the endpoint's own wait topic
                parking.park(d, cfg.waitTopic(lane.id()), "room", text(rec, Parking.STATUS), 0, lane::countParkedRoom);
            }
        });
    }

    /** Resumes partitions whose hold is over; commits every {@link #COMMIT_INTERVAL}. */
    private void maintain() {
        if (!holds.isEmpty()) {
            long now = System.currentTimeMillis();
            List<TopicPartition> resume = new ArrayList<>();
            holds.entrySet().removeIf(e -> {
                boolean over = switch (e.getValue()) {
                    case Hold.Outstanding o -> o.tracker().outstanding() <= o.below();
                    case Hold.Due d -> d.atMillis() <= now;
                    case Hold.Room r -> r.lane().hasRoom() || r.lane().disabled() != null;
                };
                if (over && trackers.containsKey(e.getKey())) {
                    resume.add(e.getKey());
                }
                return over;
            });
            if (!resume.isEmpty()) {
                consumer.resume(resume);
            }
        }
        paused = holds.size();
        long now = System.nanoTime();
        if (now - lastCommit >= COMMIT_INTERVAL.toNanos()) {
            lastCommit = now;
            commit(trackers.values());
            for (TopicPartition tp : trackers.keySet()) {
                consumer.currentLag(tp).ifPresent(l -> lag.put(tp, l));
            }
        }
    }

    private void commit(Collection<PartitionTracker> ts) {
        Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
        for (PartitionTracker t : ts) {
            long c = t.committable();
            if (c > t.committed()) {
                offsets.put(t.partition(), new OffsetAndMetadata(c));
            }
        }
        if (offsets.isEmpty()) {
            return;
        }
        try {
            consumer.commitSync(offsets, Duration.ofSeconds(10));
            offsets.forEach((tp, o) -> {
                PartitionTracker t = trackers.get(tp);
                if (t != null) {
                    t.committed(o.offset());
                }
            });
        } catch (org.apache.kafka.common.KafkaException e) {
            log.accept("commit failed (" + e.getMessage() + "); the next commit covers it");
        }
    }

    /** On stop: take nothing more, let deliveries in flight finish (drain_timeout), commit what is done. */
    private void drain() {
        consumer.pause(consumer.assignment());
        long end = System.nanoTime() + cfg.drainTimeout().toNanos();
        while (System.nanoTime() < end && trackers.values().stream().anyMatch(t -> t.outstanding() > 0)) {
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                break;
            }
        }
        commit(trackers.values());
        int left = trackers.values().stream().mapToInt(PartitionTracker::outstanding).sum();
        if (left > 0) {
            log.accept(left + " records were not done at the drain timeout; they were not committed and will be "
                    + "delivered again after the restart (at least once)");
        }
    }

    private final class Rebalance implements ConsumerRebalanceListener {
        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            List<PartitionTracker> gone = new ArrayList<>();
            for (TopicPartition tp : partitions) {
                PartitionTracker t = trackers.get(tp);
                if (t != null) {
                    gone.add(t);
                }
            }
            commit(gone); // what is done; the rest comes back to whoever gets the partition
            forget(partitions);
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> partitions) {
            forget(partitions);
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            for (TopicPartition tp : partitions) {
                trackers.put(tp, new PartitionTracker(tp, consumer.position(tp)));
                lagGauges.put(tp, Gauge.builder("weft.dispatch.consumer.lag", lag, m -> m.getOrDefault(tp, 0L))
                        .tag("topic", tp.topic()).tag("partition", Integer.toString(tp.partition()))
                        .description("records in the partition after the consumer's position").register(registry));
            }
            assigned = trackers.size();
        }

        private void forget(Collection<TopicPartition> partitions) {
            for (TopicPartition tp : partitions) {
                PartitionTracker t = trackers.remove(tp);
                if (t != null) {
                    t.revoke();
                }
                holds.remove(tp);
                lag.remove(tp);
                Meter g = lagGauges.remove(tp);
                if (g != null) {
                    registry.remove(g);
                }
            }
            assigned = trackers.size();
        }
    }

    // ---- helpers ------------------------------------------------------------------------------------

    /** The record's headers without Weft's own parking headers. */
    private static List<Header> own(ConsumerRecord<byte[], byte[]> rec) {
        List<Header> out = new ArrayList<>();
        for (Header h : rec.headers()) {
            if (!Parking.OURS.contains(h.key())) {
                out.add(h);
            }
        }
        return out;
    }

    private static String origin(ConsumerRecord<?, ?> rec) {
        return rec.topic() + "/" + rec.partition() + "/" + rec.offset();
    }

    private static String text(ConsumerRecord<byte[], byte[]> rec, String header) {
        Header h = rec.headers().lastHeader(header);
        return h == null || h.value() == null ? null : new String(h.value(), StandardCharsets.UTF_8);
    }

    private static int parseInt(String s) {
        try {
            return s == null ? 0 : Integer.parseInt(s);
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    private static long parseLong(String s) {
        try {
            return s == null ? 0 : Long.parseLong(s);
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    // ---- status -------------------------------------------------------------------------------------

    public String bootstrap() {
        return bootstrap;
    }

    /** Null while the consumer runs; otherwise why it stopped. */
    public String failure() {
        return failure;
    }

    public Map<String, Object> health() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("status", failure != null ? "failed" : running ? "up" : "stopping");
        if (failure != null) {
            m.put("failure", failure);
        }
        m.put("bootstrap", bootstrap);
        m.put("group", cfg.group());
        m.put("assigned_partitions", assigned);
        m.put("paused_partitions", paused);
        m.put("outstanding_records", trackers.values().stream().mapToInt(PartitionTracker::outstanding).sum());
        m.put("records", records.get());
        m.put("consumer_lag", lag.values().stream().mapToLong(Long::longValue).sum());
        m.put("endpoints_disabled", lanes.values().stream().filter(l -> l.disabled() != null).count());
        m.put("park_failures", parking.failures());
        return m;
    }

    public List<Map<String, Object>> endpoints() {
        return lanes.values().stream().map(Lane::status).toList();
    }

    /** A one-line summary for the log. */
    public String summary() {
        long delivered = lanes.values().stream().mapToLong(Lane::delivered).sum();
        long parked = lanes.values().stream().mapToLong(Lane::parked).sum();
        long dead = lanes.values().stream().mapToLong(Lane::deadLettered).sum();
        long lagSum = lag.values().stream().mapToLong(Long::longValue).sum();
        return "records " + records.get() + ", delivered " + delivered + ", parked " + parked + ", dead-lettered "
                + dead + ", lag " + lagSum + ", paused partitions " + paused;
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
    }
}
