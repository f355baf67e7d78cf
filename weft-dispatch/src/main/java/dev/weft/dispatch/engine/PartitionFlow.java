package dev.weft.dispatch.engine;

import dev.weft.dispatch.config.DispatchConfig;
import dev.weft.dispatch.config.EndpointConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;

import java.time.Clock;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * What happens to the records of the assigned partitions, without the Kafka consumer: each record taken
 * goes to the outlets of the endpoints it matches (or is parked or dead-lettered), its partition's
 * {@link PartitionTracker} says what may be committed, and a partition is held (sought back and paused)
 * while it has {@code max_outstanding} records not done, or while its next parked record is not due or
 * its lane has no room. The consumer's side ({@link Partitions}) and the outlets are given, so this is
 * unit-tested without a broker.
 * <p>
 * Everything here runs on the consumer thread, except the status reads.
 */
final class PartitionFlow {
    /** What the flow asks of the consumer. */
    interface Partitions {
        /** Reads {@code tp} from {@code offset} on, and stops fetching it until {@link #resume}. */
        void holdAt(TopicPartition tp, long offset);

        void resume(Collection<TopicPartition> tps);

        /** Stops fetching {@code tp} until {@link #resume}, from where it is (records fetched are kept). */
        void pause(TopicPartition tp);
    }

    /**
     * Parked records fetched behind a record that waits for room in its lane, kept (not taken) to be fed to the
     * lane as room appears, instead of being fetched again: at most this many per partition...
     */
    static final int MAX_FETCHED_RECORDS = 500;
    /** ... and about this many bytes (keys and values); the rest is fetched again later. */
    static final long MAX_FETCHED_BYTES = 4L * 1024 * 1024;

    /** Why a partition is held at a record, and when it may go on. */
    sealed interface Hold {
        record Outstanding(PartitionTracker tracker, int below) implements Hold {
        }

        /**
         * Until {@code atMillis}; a record parked by a Retry-After on its endpoint's wait topic ({@code throttled})
         * goes on as soon as the endpoint's throttle ends (ENABLE), and any parked record as soon as its endpoint
         * is disabled (it is dead-lettered then, not held).
         */
        record Due(long atMillis, Outlet outlet, boolean throttled) implements Hold {
            boolean over(long now) {
                return outlet.disabled() != null || (throttled ? Math.min(atMillis, outlet.throttledUntil()) : atMillis) <= now;
            }
        }

        record Room(Outlet outlet) implements Hold {
        }
    }

    private final DispatchConfig cfg;
    private final Map<String, Outlet> outlets;
    private final Map<String, Outlet> waitTopics = new HashMap<>();
    private final Set<String> retryTopics = new TreeSet<>();
    private final Matcher matcher;
    private final Parker parker;
    private final Partitions partitions;
    private final Clock clock;
    private final Consumer<String> log;
    private final Map<TopicPartition, PartitionTracker> trackers = new ConcurrentHashMap<>();
    private final Map<TopicPartition, Hold> holds = new HashMap<>();
    private final Map<TopicPartition, List<ConsumerRecord<byte[], byte[]>>> fetched = new HashMap<>();
    private final AtomicLong records = new AtomicLong();
    private final AtomicLong recordErrors = new AtomicLong();
    private volatile int held;

    PartitionFlow(DispatchConfig cfg, List<? extends Outlet> outlets, Parker parker, Partitions partitions, Clock clock,
                  Consumer<String> log) {
        this.cfg = cfg;
        Map<String, Outlet> m = new LinkedHashMap<>();
        for (Outlet o : outlets) {
            m.put(o.id(), o);
            waitTopics.put(cfg.waitTopic(o.id()), o);
        }
        this.outlets = Collections.unmodifiableMap(m);
        cfg.retryDelays().forEach(d -> retryTopics.add(cfg.retryTopic(d)));
        this.matcher = new Matcher(cfg.endpoints(), cfg.typePointer());
        this.parker = parker;
        this.partitions = partitions;
        this.clock = clock;
        this.log = log;
    }

    /**
     * Parking topics of the config before a reload that this config no longer uses (a removed endpoint's wait
     * topic, a retry delay nobody has any more): read as parking topics without a lane of their own, so their
     * records are delivered when due, or dead-lettered when their endpoint is gone. Before the first poll only.
     */
    void retire(Collection<String> topics) {
        retryTopics.addAll(topics);
    }

    // ---- assignment ---------------------------------------------------------------------------------

    /**
     * {@code tp} is read from {@code position} on. When it has a tracker already (positioned again without a revoke
     * in between), that tracker is taken over, not dropped: its deliveries in flight go on, and no commit passes
     * them (see {@link #takeOver}).
     */
    void assigned(TopicPartition tp, long position) {
        PartitionTracker old = trackers.get(tp);
        if (old != null) {
            log.accept("partition " + tp + " positioned at " + position + " while it was read already (next "
                    + old.next() + ", " + old.outstanding() + " records not done): its commits wait for those");
            takeOver(tp, old, position);
            return;
        }
        trackers.put(tp, new PartitionTracker(tp, position));
    }

    /**
     * The consumer was sought to {@code offset} after its position left the log. A tracker already past it (a log
     * truncated, a topic created again) is taken over by one that starts there, so the records now below its old
     * position are taken instead of refused as taken again; a tracker at or below it keeps its records in flight.
     */
    void sought(TopicPartition tp, long offset) {
        PartitionTracker t = trackers.get(tp);
        if (t != null && t.next() > offset) {
            takeOver(tp, t, offset);
            partitions.resume(List.of(tp));
        }
    }

    /**
     * A new tracker at {@code position} in place of {@code old}, in the same assignment: {@code old} is not revoked
     * (the partition is still this consumer's), so the deliveries of the records it took go on, settle against it,
     * and hold back every commit of the new one until they are done; a record taken by both is delivered twice (at
     * least once). Revoking it instead would skip its deliveries not started while the new tracker, starting past
     * them, commits over them: those records would be lost.
     */
    private void takeOver(TopicPartition tp, PartitionTracker old, long position) {
        trackers.put(tp, new PartitionTracker(tp, position, old));
        holds.remove(tp);
        fetched.remove(tp);
        held = holds.size();
    }

    /** The partitions went to another consumer (or were lost): their trackers are revoked and forgotten. */
    void forget(Collection<TopicPartition> tps) {
        for (TopicPartition tp : tps) {
            PartitionTracker t = trackers.remove(tp);
            if (t != null) {
                t.revoke();
            }
            holds.remove(tp);
            fetched.remove(tp);
        }
        held = holds.size();
    }

    // ---- taking records -----------------------------------------------------------------------------

    /** Takes the records of one partition from a poll, in order, until one makes it hold. */
    void take(TopicPartition tp, List<ConsumerRecord<byte[], byte[]>> recs) {
        PartitionTracker t = trackers.get(tp);
        if (t == null) {
            return;
        }
        Outlet waitOutlet = waitTopics.get(tp.topic());
        boolean parked = waitOutlet != null || retryTopics.contains(tp.topic());
        for (int i = 0; i < recs.size(); i++) {
            ConsumerRecord<byte[], byte[]> rec = recs.get(i);
            Hold hold = null;
            Ticket ticket = null;
            try {
                ParkedRecord.Read read = parked ? ParkedRecord.read(rec.headers()) : null;
                hold = read instanceof ParkedRecord.Read.Ok(ParkedRecord p) ? holdParked(p, waitOutlet) : null;
                if (hold == null) {
                    ticket = t.take(rec.offset());
                    switch (read) {
                        case null -> sendSource(ticket, rec);
                        case ParkedRecord.Read.Ok(ParkedRecord p) -> sendParked(ticket, rec, p);
                        case ParkedRecord.Read.Bad(String endpoint, String why) -> {
                            recordErrors.incrementAndGet();
                            log.accept("record " + tp + "@" + rec.offset() + ": " + why + "; dead-lettered");
                            Delivery d = new Delivery(endpoint, ticket, text(rec, ParkedRecord.WEBHOOK_ID), rec.key(),
                                    rec.value(), own(rec), 0, origin(rec));
                            handOff(d, () -> parker.deadLetter(d, text(rec, ParkedRecord.STATUS), why, countDead(endpoint)));
                        }
                    }
                }
            } catch (RuntimeException e) {
                // Before any delivery was handed off, or between two (each handed-off delivery is on the ticket):
                // the record goes to the dead-letter topic on the same ticket, never on a second one.
                hold = null;
                recordErrors.incrementAndGet();
                log.accept("ERROR: record " + tp + "@" + rec.offset() + ": " + e + "; dead-lettered");
                if (ticket == null) {
                    if (rec.offset() < t.next()) { // refused by the tracker itself: taking it again would throw again
                        log.accept("ERROR: record " + tp + "@" + rec.offset() + " is below the partition's next offset "
                                + t.next() + "; skipped");
                        continue;
                    }
                    ticket = t.take(rec.offset());
                }
                ticket.add();
                deadLetter(new Delivery("", ticket, "", rec.key(), rec.value(), own(rec), 0, origin(rec)), "",
                        "internal error: " + e, () -> { });
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
            } else if (hold instanceof Hold.Room) {
                keepFetched(tp, recs.subList(i, recs.size()), hold);
                return;
            } else {
                hold(tp, rec.offset(), hold);
                return;
            }
        }
    }

    /**
     * A parked record waits for room in its lane: it and the records fetched after it are kept (up to
     * {@link #MAX_FETCHED_RECORDS} and {@link #MAX_FETCHED_BYTES}; the partition is sought back to the first one
     * not kept) and fed to the lane by {@link #resumeDue} as room appears, so a busy lane's backlog is read
     * from Kafka once and comes back at the lane's pace. Kept records are not taken: commits stay below them.
     */
    private void keepFetched(TopicPartition tp, List<ConsumerRecord<byte[], byte[]>> rest, Hold h) {
        List<ConsumerRecord<byte[], byte[]>> keep = new ArrayList<>();
        long bytes = 0;
        for (ConsumerRecord<byte[], byte[]> r : rest) {
            long size = Math.max(0, r.serializedKeySize()) + Math.max(0, r.serializedValueSize());
            if (!keep.isEmpty() && (keep.size() >= MAX_FETCHED_RECORDS || bytes + size > MAX_FETCHED_BYTES)) {
                break;
            }
            keep.add(r);
            bytes += size;
        }
        if (keep.size() < rest.size()) {
            partitions.holdAt(tp, rest.get(keep.size()).offset());
        } else {
            partitions.pause(tp);
        }
        fetched.put(tp, keep);
        holds.put(tp, h);
        held = holds.size();
    }

    private void hold(TopicPartition tp, long offset, Hold h) {
        partitions.holdAt(tp, offset);
        holds.put(tp, h);
        held = holds.size();
    }

    /** A record of a source topic: to every matching outlet, or parked on the endpoint's wait topic. Never holds. */
    private void sendSource(Ticket ticket, ConsumerRecord<byte[], byte[]> rec) {
        Matcher.Matched matched = matcher.match(rec.headers(), rec.value());
        matched.notJson().forEach(e -> outlets.get(e.id()).countNotJson());
        List<Header> headers = own(rec);
        String origin = origin(rec);
        for (EndpointConfig e : matched.endpoints()) {
            Outlet outlet = outlets.get(e.id());
            Delivery d = new Delivery(e.id(), ticket, WebhookSigning.webhookId(rec.topic(), rec.partition(), rec.offset(),
                    e.id()), rec.key(), rec.value(), headers, 0, origin);
            handOff(d, () -> {
                if (outlet.disabled() != null) {
                    parker.deadLetter(d, "410", outlet.disabled(), outlet::countDeadLettered);
                } else if (!outlet.offer(d)) {
                    parker.park(d, cfg.waitTopic(outlet.id()), ParkedRecord.Reason.ROOM, "", 0, outlet::countParkedRoom);
                }
            });
        }
    }

    /** A parked record: why it must wait (not due, or its lane has no room), or null to take it now. */
    private Hold holdParked(ParkedRecord p, Outlet waitOutlet) {
        Outlet outlet = outlets.get(p.endpoint());
        if (outlet == null) {
            return null; // dead-lettered when taken
        }
        if (outlet.disabled() != null) {
            return null; // dead-lettered when taken: nothing to wait for
        }
        // a Retry-After's park on the endpoint's own wait topic waits as long as the throttle, no longer (ENABLE)
        Hold.Due due = new Hold.Due(p.dueMillis(), outlet, waitOutlet == outlet && p.reason() == ParkedRecord.Reason.FAILED);
        if (!due.over(clock.millis())) {
            return due;
        }
        if (outlet.disabled() == null && !outlet.hasRoom() && waitOutlet != null) {
            return new Hold.Room(outlet);
        }
        return null;
    }

    /** A parked record that is due and has room (see {@link #holdParked}): to its outlet again. */
    private void sendParked(Ticket ticket, ConsumerRecord<byte[], byte[]> rec, ParkedRecord p) {
        Outlet outlet = outlets.get(p.endpoint());
        Delivery d = new Delivery(p.endpoint(), ticket, p.webhookId(), rec.key(), rec.value(), own(rec), p.attempts(),
                p.origin() == null ? origin(rec) : p.origin());
        if (outlet == null) {
            handOff(d, () -> parker.deadLetter(d, p.status(), "endpoint '" + p.endpoint()
                    + "' is not in the config any more", () -> { }));
            return;
        }
        handOff(d, () -> {
            if (outlet.disabled() != null) {
                parker.deadLetter(d, "410", outlet.disabled(), outlet::countDeadLettered);
            } else if (!outlet.offer(d)) {
                // due on a retry topic, but the lane is full: wait on the endpoint's own wait topic
                parker.park(d, cfg.waitTopic(outlet.id()), ParkedRecord.Reason.ROOM, p.status(), 0,
                        outlet::countParkedRoom);
            }
        });
    }

    /**
     * Adds {@code d} to its ticket and runs {@code send}, which hands it to its outlet or to Kafka. When that
     * throws, {@code d} was not handed off (an outlet's offer and a producer's send either take it or
     * throw), so it is dead-lettered in its place and its ticket waits for that.
     */
    private void handOff(Delivery d, Runnable send) {
        d.ticket().add();
        try {
            send.run();
        } catch (RuntimeException e) {
            recordErrors.incrementAndGet();
            log.accept("ERROR: delivery " + d.origin() + " to '" + d.endpoint() + "': " + e + "; dead-lettered");
            deadLetter(d, "", "internal error: " + e, countDead(d.endpoint()));
        }
    }

    /**
     * Dead-letters {@code d} after an internal error; when that throws too (the parker does not; a bug in between
     * could), {@code d} is reported stuck: its ticket stays open and the dispatcher says FAILED. The consumer
     * thread goes on with the other records either way.
     */
    private void deadLetter(Delivery d, String status, String why, Runnable onDurable) {
        try {
            parker.deadLetter(d, status, why, onDurable);
        } catch (RuntimeException e) {
            parker.stuck(d, why + "; then, while dead-lettering it: " + e);
        }
    }

    private Runnable countDead(String endpoint) {
        Outlet o = outlets.get(endpoint);
        return o == null ? () -> { } : o::countDeadLettered;
    }

    // ---- holds and commits --------------------------------------------------------------------------

    /** Resumes the partitions whose hold is over. */
    void resumeDue() {
        if (holds.isEmpty()) {
            return;
        }
        long now = clock.millis();
        List<TopicPartition> over = new ArrayList<>();
        holds.forEach((tp, h) -> {
            if (switch (h) {
                case Hold.Outstanding o -> o.tracker().outstanding() <= o.below();
                case Hold.Due d -> d.over(now);
                case Hold.Room r -> r.outlet().hasRoom() || r.outlet().disabled() != null;
            }) {
                over.add(tp);
            }
        });
        List<TopicPartition> resume = new ArrayList<>();
        for (TopicPartition tp : over) {
            holds.remove(tp);
            List<ConsumerRecord<byte[], byte[]>> kept = fetched.remove(tp);
            if (!trackers.containsKey(tp)) {
                continue;
            }
            if (kept != null) {
                take(tp, kept); // to the lane as far as it has room; the rest is kept again
                if (holds.containsKey(tp)) {
                    continue;
                }
            }
            resume.add(tp);
        }
        held = holds.size();
        if (!resume.isEmpty()) {
            partitions.resume(resume);
        }
    }

    /** The offsets to commit, of {@code tps} (all assigned when null): those past the last commit. */
    Map<TopicPartition, Long> committable(Collection<TopicPartition> tps) {
        Map<TopicPartition, Long> out = new HashMap<>();
        for (TopicPartition tp : tps == null ? trackers.keySet() : tps) {
            PartitionTracker t = trackers.get(tp);
            if (t == null) {
                continue;
            }
            long c = t.committable();
            if (c > t.committed()) {
                out.put(tp, c);
            }
        }
        return out;
    }

    /** Kafka has {@code offsets}. */
    void committed(Map<TopicPartition, Long> offsets) {
        offsets.forEach((tp, o) -> {
            PartitionTracker t = trackers.get(tp);
            if (t != null) {
                t.committed(o);
            }
        });
    }

    // ---- status -------------------------------------------------------------------------------------

    Set<TopicPartition> assigned() {
        return trackers.keySet();
    }

    /** Whether records wait in memory for room in a lane (the consumer then looks for room more often). */
    boolean feeding() {
        return !fetched.isEmpty();
    }

    /** Whether {@code topic} is one of the parking topics read here (retry, wait, retired). */
    boolean isParking(String topic) {
        return waitTopics.containsKey(topic) || retryTopics.contains(topic);
    }

    boolean isHeld(TopicPartition tp) {
        return holds.containsKey(tp);
    }

    /** Partitions held now (any thread). */
    int held() {
        return held;
    }

    /** Records taken and not done, over all assigned partitions (any thread). */
    int outstanding() {
        return trackers.values().stream().mapToInt(PartitionTracker::outstanding).sum();
    }

    AtomicLong records() {
        return records;
    }

    AtomicLong recordErrors() {
        return recordErrors;
    }

    // ---- helpers ------------------------------------------------------------------------------------

    /** The record's headers without Weft's own parking headers. */
    private static List<Header> own(ConsumerRecord<byte[], byte[]> rec) {
        List<Header> out = new ArrayList<>();
        for (Header h : rec.headers()) {
            if (!ParkedRecord.OURS.contains(h.key())) {
                out.add(h);
            }
        }
        return Collections.unmodifiableList(out);
    }

    private static String origin(ConsumerRecord<?, ?> rec) {
        return rec.topic() + "/" + rec.partition() + "/" + rec.offset();
    }

    /** A header's last value as text, for a dead letter's information only; "" when absent. */
    private static String text(ConsumerRecord<byte[], byte[]> rec, String header) {
        Header h = rec.headers().lastHeader(header);
        return h == null || h.value() == null ? "" : new String(h.value(), java.nio.charset.StandardCharsets.UTF_8);
    }
}
