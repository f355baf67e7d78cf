package dev.weft.dispatch.engine;

import dev.weft.dispatch.config.DispatchConfig;
import dev.weft.dispatch.config.DispatchConfigLoader;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The partition flow without a broker: plain outlets, a recording parker, a clock the test moves. */
class PartitionFlowTest {
    static final TopicPartition SRC = new TopicPartition("events", 0);

    /** An endpoint's lane that keeps what it takes; the test settles the deliveries. */
    static final class TestOutlet implements Outlet {
        final String id;
        final List<Delivery> taken = new ArrayList<>();
        int room = 100;
        String disabled;
        RuntimeException offerFails;
        int parkedRoom;
        int deadLettered;
        int notJson;

        TestOutlet(String id) {
            this.id = id;
        }

        @Override
        public String id() {
            return id;
        }

        @Override
        public String disabled() {
            return disabled;
        }

        @Override
        public boolean hasRoom() {
            return room > 0;
        }

        @Override
        public boolean offer(Delivery d) {
            if (offerFails != null) {
                throw offerFails;
            }
            if (room <= 0) {
                return false;
            }
            room--;
            taken.add(d);
            return true;
        }

        @Override
        public void countParkedRoom() {
            parkedRoom++;
        }

        @Override
        public void countDeadLettered() {
            deadLettered++;
        }

        @Override
        public void countNotJson() {
            notJson++;
        }
    }

    /** One copy written to Kafka: {@code topic} null for the dead-letter topic. Durable when the test says. */
    record Copy(String topic, Delivery d, ParkedRecord.Reason reason, String status, String why, long due,
                Runnable onDurable) {
        void durable() {
            onDurable.run();
            d.ticket().done();
        }
    }

    static final class TestParker implements Parker {
        final ConcurrentLinkedQueue<Copy> copies = new ConcurrentLinkedQueue<>();
        RuntimeException fails;

        @Override
        public void park(Delivery d, String topic, ParkedRecord.Reason reason, String status, long dueMillis,
                         Runnable onDurable) {
            if (fails != null) {
                throw fails;
            }
            copies.add(new Copy(topic, d, reason, status, null, dueMillis, onDurable));
        }

        @Override
        public void deadLetter(Delivery d, String status, String reason, Runnable onDurable) {
            if (fails != null) {
                throw fails;
            }
            copies.add(new Copy(null, d, null, status, reason, 0, onDurable));
        }

        final List<String> stuck = new ArrayList<>();

        @Override
        public void stuck(Delivery d, String why) {
            stuck.add(d.endpoint() + ": " + why);
        }

        List<Copy> deadLetters() {
            return copies.stream().filter(c -> c.topic() == null).toList();
        }
    }

    static final class TestPartitions implements PartitionFlow.Partitions {
        final List<String> calls = new ArrayList<>();

        @Override
        public void holdAt(TopicPartition tp, long offset) {
            calls.add("hold " + tp + "@" + offset);
        }

        @Override
        public void resume(Collection<TopicPartition> tps) {
            calls.add("resume " + tps);
        }

        @Override
        public void pause(TopicPartition tp) {
            calls.add("pause " + tp);
        }
    }

    static final class TestClock extends Clock {
        long millis = 1_000_000;

        @Override
        public ZoneOffset getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return Instant.ofEpochMilli(millis);
        }
    }

    final TestOutlet a = new TestOutlet("a");
    final TestOutlet b = new TestOutlet("b");
    final TestParker parker = new TestParker();
    final TestPartitions partitions = new TestPartitions();
    final TestClock clock = new TestClock();
    final List<String> log = new ArrayList<>();

    PartitionFlow flow(int maxOutstanding) {
        try {
            DispatchConfig cfg = DispatchConfigLoader.parse("f.yaml", """
                    source: { bootstrap: "127.0.0.1:9092", topics: [events], group: g, max_outstanding: %d }
                    defaults: { allow_private: true }
                    endpoints:
                      - { id: a, url: "http://127.0.0.1:1/a", retry: [1s] }
                      - { id: b, url: "http://127.0.0.1:1/b", match: { pointer: /to, equals: b }, retry: [1s] }
                    """.formatted(maxOutstanding));
            PartitionFlow f = new PartitionFlow(cfg, List.of(a, b), parker, partitions, clock, log::add);
            f.assigned(SRC, 0);
            f.assigned(new TopicPartition("g.wait.a", 0), 0);
            f.assigned(new TopicPartition("g.retry.1000", 0), 0);
            return f;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    static ConsumerRecord<byte[], byte[]> rec(TopicPartition tp, long offset, String value) {
        return new ConsumerRecord<>(tp.topic(), tp.partition(), offset, null, value.getBytes(StandardCharsets.UTF_8));
    }

    static ConsumerRecord<byte[], byte[]> parked(TopicPartition tp, long offset, ParkedRecord p) {
        ConsumerRecord<byte[], byte[]> r = rec(tp, offset, "{\"to\":\"b\"}");
        r.headers().add(new RecordHeader("content-type", "application/json".getBytes(StandardCharsets.UTF_8)));
        p.headers(List.of()).forEach(r.headers()::add);
        return r;
    }

    static long committable(PartitionFlow f, TopicPartition tp) {
        return f.committable(List.of(tp)).getOrDefault(tp, -1L);
    }

    /**
     * Issue 12's sequence through the flow: the record is in flight at endpoint a when handing it to b
     * throws. b's delivery is dead-lettered on the record's one ticket, so neither the dead letter nor
     * anything else lets the commit pass the record before a's delivery is done.
     */
    @Test
    void aHandOffThatThrowsIsDeadLetteredWithoutFinishingTheRecord() {
        PartitionFlow f = flow(100);
        b.offerFails = new IllegalStateException("boom");
        f.take(SRC, List.of(rec(SRC, 0, "{\"to\":\"b\"}")));
        assertThat(a.taken).hasSize(1);
        assertThat(parker.deadLetters()).singleElement().satisfies(c -> {
            assertThat(c.d().endpoint()).isEqualTo("b");
            assertThat(c.d().webhookId()).isEqualTo(WebhookSigning.webhookId("events", 0, 0, "b"));
            assertThat(c.why()).isEqualTo("internal error: java.lang.IllegalStateException: boom");
        });
        assertThat(f.outstanding()).isEqualTo(1);
        parker.deadLetters().getFirst().durable();
        assertThat(b.deadLettered).isEqualTo(1);
        assertThat(committable(f, SRC)).as("a's delivery is in flight").isEqualTo(0);
        assertThat(f.outstanding()).isEqualTo(1);
        a.taken.getFirst().ticket().done();
        assertThat(committable(f, SRC)).isEqualTo(1);
        assertThat(f.outstanding()).isZero();
        assertThat(f.recordErrors().get()).isEqualTo(1);
    }

    /**
     * When dead-lettering after an internal error throws too, the delivery is reported stuck (the dispatcher says
     * FAILED and pauses the endpoint), its record is not committable, and the consumer thread goes on: the next
     * record is taken and delivered.
     */
    @Test
    void whenTheDeadLetterFailsTooTheDeliveryIsStuckAndTheConsumerGoesOn() {
        PartitionFlow f = flow(100);
        a.offerFails = new IllegalStateException("boom");
        parker.fails = new IllegalStateException("kafka gone");
        f.take(SRC, List.of(rec(SRC, 0, "{}")));
        assertThat(parker.stuck).singleElement().asString()
                .isEqualTo("a: internal error: java.lang.IllegalStateException: boom; then, while dead-lettering it: "
                        + "java.lang.IllegalStateException: kafka gone");
        assertThat(committable(f, SRC)).isEqualTo(0);
        assertThat(f.outstanding()).isEqualTo(1);
        a.offerFails = null;
        parker.fails = null;
        f.take(SRC, List.of(rec(SRC, 1, "{}")));
        assertThat(a.taken).singleElement().satisfies(d -> assertThat(d.ticket().offset()).isEqualTo(1));
        a.taken.getFirst().ticket().done();
        assertThat(committable(f, SRC)).as("the stuck record holds the commit").isEqualTo(0);
        assertThat(f.outstanding()).isEqualTo(1);
    }

    /** A record whose every step throws (taking it, then dead-lettering it) is stuck, never thrown at the consumer. */
    @Test
    void aRecordThatCannotEvenBeDeadLetteredIsStuckNotThrown() {
        PartitionFlow f = flow(100);
        parker.fails = new IllegalStateException("kafka gone");
        ConsumerRecord<byte[], byte[]> bad = rec(new TopicPartition("g.retry.1000", 0), 0, "{}");
        bad.headers().add(new RecordHeader(ParkedRecord.ENDPOINT, "a".getBytes(StandardCharsets.UTF_8)));
        f.take(new TopicPartition("g.retry.1000", 0), List.of(bad)); // bad parking headers: dead-letter throws
        assertThat(parker.stuck).singleElement().asString().startsWith("a: internal error: ")
                .contains("kafka gone");
        assertThat(committable(f, new TopicPartition("g.retry.1000", 0))).isEqualTo(0);
    }

    @Test
    void eachMatchingEndpointGetsTheRecordAndTheCommitWaitsForAll() {
        PartitionFlow f = flow(100);
        f.take(SRC, List.of(rec(SRC, 0, "{\"to\":\"b\"}"), rec(SRC, 1, "{}"), rec(SRC, 2, "not json")));
        assertThat(a.taken).extracting(Delivery::origin).containsExactly("events/0/0", "events/0/1", "events/0/2");
        assertThat(b.taken).extracting(Delivery::origin).containsExactly("events/0/0");
        assertThat(b.notJson).isEqualTo(1);
        a.taken.forEach(d -> d.ticket().done());
        assertThat(committable(f, SRC)).as("b has record 0").isEqualTo(0);
        b.taken.getFirst().ticket().done();
        assertThat(committable(f, SRC)).isEqualTo(3);
        f.committed(Map.of(SRC, 3L));
        assertThat(f.committable(List.of(SRC))).as("nothing new").isEmpty();
    }

    @Test
    void aFullLaneParksOnItsWaitTopicAndADisabledEndpointDeadLetters() {
        PartitionFlow f = flow(100);
        a.room = 0;
        b.disabled = "answered 410";
        f.take(SRC, List.of(rec(SRC, 0, "{\"to\":\"b\"}")));
        assertThat(parker.copies).hasSize(2);
        Copy parked = parker.copies.stream().filter(c -> c.topic() != null).findFirst().orElseThrow();
        assertThat(parked.topic()).isEqualTo("g.wait.a");
        assertThat(parked.reason()).isEqualTo(ParkedRecord.Reason.ROOM);
        assertThat(parked.due()).isZero();
        Copy dead = parker.deadLetters().getFirst();
        assertThat(dead.status()).isEqualTo("410");
        assertThat(dead.why()).isEqualTo("answered 410");
        parked.durable();
        assertThat(committable(f, SRC)).isEqualTo(0);
        dead.durable();
        assertThat(committable(f, SRC)).isEqualTo(1);
        assertThat(a.parkedRoom).isEqualTo(1);
        assertThat(b.deadLettered).isEqualTo(1);
    }

    @Test
    void aPartitionWithMaxOutstandingRecordsIsHeldUntilHalfAreDone() {
        PartitionFlow f = flow(4);
        List<ConsumerRecord<byte[], byte[]>> recs = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            recs.add(rec(SRC, i, "{}"));
        }
        f.take(SRC, recs);
        assertThat(a.taken).hasSize(4);
        assertThat(partitions.calls).containsExactly("hold events-0@4");
        assertThat(f.held()).isEqualTo(1);
        a.taken.get(0).ticket().done();
        f.resumeDue();
        assertThat(f.held()).as("3 not done, more than half of 4").isEqualTo(1);
        a.taken.get(1).ticket().done();
        f.resumeDue();
        assertThat(partitions.calls).containsExactly("hold events-0@4", "resume [events-0]");
        assertThat(f.held()).isZero();
        assertThat(committable(f, SRC)).isEqualTo(2);
    }

    @Test
    void aParkedRecordWaitsUntilDueThenGoesToItsLaneAsParked() {
        PartitionFlow f = flow(100);
        TopicPartition retry = new TopicPartition("g.retry.1000", 0);
        ParkedRecord p = new ParkedRecord("b", "msg_b7", 1, clock.millis() + 1000, ParkedRecord.Reason.FAILED, "503",
                "events/0/7");
        f.take(retry, List.of(parked(retry, 0, p), parked(retry, 1, p)));
        assertThat(b.taken).isEmpty();
        assertThat(partitions.calls).containsExactly("hold g.retry.1000-0@0");
        clock.millis += 999;
        f.resumeDue();
        assertThat(f.held()).isEqualTo(1);
        clock.millis += 1;
        f.resumeDue();
        assertThat(partitions.calls).endsWith("resume [g.retry.1000-0]");
        f.take(retry, List.of(parked(retry, 0, p))); // the consumer reads from the held offset again
        assertThat(b.taken).singleElement().satisfies(d -> {
            assertThat(d.endpoint()).isEqualTo("b");
            assertThat(d.webhookId()).isEqualTo("msg_b7");
            assertThat(d.attempts()).isEqualTo(1);
            assertThat(d.origin()).isEqualTo("events/0/7");
            assertThat(d.header("content-type")).isEqualTo("application/json");
            assertThat(d.headers()).extracting(h -> h.key()).doesNotContainAnyElementsOf(ParkedRecord.OURS);
        });
    }

    @Test
    void aDueRecordOnAWaitTopicWaitsForRoomInItsLane() {
        PartitionFlow f = flow(100);
        TopicPartition wait = new TopicPartition("g.wait.a", 0);
        a.room = 0;
        f.take(wait, List.of(parked(wait, 0, new ParkedRecord("a", "msg_a1", 0, 0, ParkedRecord.Reason.ROOM, "", null))));
        assertThat(partitions.calls).as("paused where it is: the record is kept, not fetched again")
                .containsExactly("pause g.wait.a-0");
        assertThat(parker.copies).as("not parked again while it waits").isEmpty();
        f.resumeDue();
        assertThat(f.held()).isEqualTo(1);
        a.room = 1;
        f.resumeDue();
        assertThat(f.held()).isZero();
        assertThat(a.taken).extracting(Delivery::webhookId).containsExactly("msg_a1");
        assertThat(partitions.calls).endsWith("resume [g.wait.a-0]");
    }

    /** Issue 16: a busy lane's backlog is fetched once and fed to the lane as room appears; commits stay below it. */
    @Test
    void keptWaitRecordsAreFedAsRoomAppearsAndHoldBackTheCommit() {
        PartitionFlow f = flow(100);
        TopicPartition wait = new TopicPartition("g.wait.a", 0);
        a.room = 2;
        List<ConsumerRecord<byte[], byte[]>> recs = new ArrayList<>();
        for (int i = 0; i < 7; i++) {
            recs.add(parked(wait, i, new ParkedRecord("a", "msg_a" + i, 0, 0, ParkedRecord.Reason.ROOM, "", null)));
        }
        f.take(wait, recs);
        assertThat(a.taken).hasSize(2);
        assertThat(partitions.calls).containsExactly("pause g.wait.a-0");
        a.taken.forEach(d -> d.ticket().done());
        assertThat(committable(f, wait)).as("not past the kept records").isEqualTo(2);
        f.resumeDue();
        assertThat(a.taken).as("no room yet").hasSize(2);
        a.room = 3;
        f.resumeDue();
        assertThat(a.taken).hasSize(5);
        assertThat(f.held()).isEqualTo(1);
        a.room = 10;
        f.resumeDue();
        assertThat(a.taken).extracting(Delivery::webhookId).containsExactly("msg_a0", "msg_a1", "msg_a2", "msg_a3",
                "msg_a4", "msg_a5", "msg_a6");
        assertThat(f.held()).isZero();
        assertThat(partitions.calls).as("never sought back: nothing fetched twice")
                .containsExactly("pause g.wait.a-0", "pause g.wait.a-0", "resume [g.wait.a-0]");
        assertThat(parker.copies).as("nothing parked again").isEmpty();
        a.taken.subList(2, 7).forEach(d -> d.ticket().done());
        assertThat(committable(f, wait)).isEqualTo(7);
        f.forget(List.of(wait));
        assertThat(f.feeding()).isFalse();
    }

    @Test
    void aParkedRecordWithABadHeaderIsDeadLetteredNotDueNow() {
        PartitionFlow f = flow(100);
        TopicPartition retry = new TopicPartition("g.retry.1000", 0);
        ConsumerRecord<byte[], byte[]> r = rec(retry, 0, "{}");
        new ParkedRecord("a", "msg_a1", 1, 0, ParkedRecord.Reason.FAILED, "500", "events/0/1").headers(List.of())
                .stream().filter(h -> !h.key().equals(ParkedRecord.DUE)).forEach(r.headers()::add);
        r.headers().add(new RecordHeader(ParkedRecord.DUE, "99999999999999999999".getBytes(StandardCharsets.UTF_8)));
        f.take(retry, List.of(r));
        assertThat(a.taken).as("never delivered as due now").isEmpty();
        assertThat(partitions.calls).isEmpty();
        assertThat(parker.deadLetters()).singleElement().satisfies(c -> {
            assertThat(c.d().endpoint()).isEqualTo("a");
            assertThat(c.why()).isEqualTo("bad parking header weft-due: '99999999999999999999' is out of range");
            assertThat(c.status()).isEqualTo("500");
        });
        parker.deadLetters().getFirst().durable();
        assertThat(a.deadLettered).isEqualTo(1);
        assertThat(f.recordErrors().get()).isEqualTo(1);
        assertThat(committable(f, retry)).isEqualTo(1);
    }

    @Test
    void aParkedRecordForAnEndpointNoLongerConfiguredIsDeadLettered() {
        PartitionFlow f = flow(100);
        TopicPartition retry = new TopicPartition("g.retry.1000", 0);
        f.take(retry, List.of(parked(retry, 0, new ParkedRecord("gone", "msg_g", 2, clock.millis() + 60_000,
                ParkedRecord.Reason.FAILED, "500", "events/0/3"))));
        assertThat(partitions.calls).as("not held until its due time").isEmpty();
        assertThat(parker.deadLetters()).singleElement().satisfies(c -> {
            assertThat(c.d().endpoint()).isEqualTo("gone");
            assertThat(c.d().attempts()).isEqualTo(2);
            assertThat(c.why()).contains("'gone' is not in the config any more");
        });
    }

    @Test
    void aRevokedPartitionIsForgottenAndItsLateDeliveriesMoveNothing() {
        PartitionFlow f = flow(100);
        f.take(SRC, List.of(rec(SRC, 0, "{}")));
        f.forget(List.of(SRC));
        assertThat(a.taken.getFirst().ticket().revoked()).isTrue();
        a.taken.getFirst().ticket().done();
        assertThat(f.committable(null)).doesNotContainKey(SRC);
        assertThat(f.assigned()).doesNotContain(SRC);
        f.take(SRC, List.of(rec(SRC, 1, "{}")));
        assertThat(a.taken).as("records of a partition not assigned are not taken").hasSize(1);
    }

    static List<ConsumerRecord<byte[], byte[]>> recs(TopicPartition tp, long from, long to) {
        List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
        for (long o = from; o < to; o++) {
            out.add(rec(tp, o, "{}"));
        }
        return out;
    }

    /**
     * Issue 46's early commit, as far as the flow goes: records 0-9 are in endpoint a's lane when the partition is
     * positioned again (at the consumer's position, 10) without a revoke in between. Before the fix the new tracker
     * replaced the old one and its first commit was 10, over ten deliveries not yet at the endpoint (the old
     * tracker, not revoked, let them go on: they arrived after the commit, as in the chaos run).
     */
    @Test
    void aPartitionPositionedAgainCommitsNothingPastDeliveriesInFlight() {
        PartitionFlow f = flow(100);
        f.take(SRC, recs(SRC, 0, 10));
        assertThat(a.taken).hasSize(10);
        f.assigned(SRC, 10);
        assertThat(committable(f, SRC)).as("records 0-9 are in flight").isEqualTo(0);
        assertThat(a.taken).allSatisfy(d -> assertThat(d.ticket().revoked()).isFalse());
        assertThat(f.outstanding()).isEqualTo(10);
        for (int i = 0; i < 9; i++) {
            a.taken.get(i).ticket().done();
        }
        assertThat(committable(f, SRC)).as("record 9 is still in flight").isEqualTo(9);
        f.take(SRC, recs(SRC, 10, 12));
        a.taken.get(9).ticket().done();
        assertThat(committable(f, SRC)).as("10 and 11 are in flight").isEqualTo(10);
        a.taken.get(10).ticket().done();
        a.taken.get(11).ticket().done();
        assertThat(committable(f, SRC)).isEqualTo(12);
        assertThat(log).anyMatch(l -> l.contains("positioned at 10 while it was read already"));
    }

    /**
     * The consumer is sought back below what was taken (its position was past the log's end): the records from the
     * new position are taken again, and no commit passes the deliveries taken before. Before the fix the old
     * tracker was revoked (its deliveries not started were skipped) and the new one committed 5 at once, over
     * records 0-4: lost.
     */
    @Test
    void aSeekBelowWhatWasTakenCommitsNothingPastDeliveriesInFlight() {
        PartitionFlow f = flow(100);
        f.take(SRC, recs(SRC, 0, 10));
        f.sought(SRC, 5);
        assertThat(a.taken).as("the partition's deliveries go on").allSatisfy(d -> assertThat(d.ticket().revoked()).isFalse());
        assertThat(committable(f, SRC)).as("records 0-9 are in flight").isEqualTo(0);
        f.take(SRC, recs(SRC, 5, 8));
        assertThat(a.taken).as("5-7 again: at least once").hasSize(13);
        for (int i = 0; i < 10; i++) {
            a.taken.get(i).ticket().done();
        }
        assertThat(committable(f, SRC)).as("5-7 taken again are in flight").isEqualTo(5);
        for (int i = 10; i < 13; i++) {
            a.taken.get(i).ticket().done();
        }
        assertThat(committable(f, SRC)).isEqualTo(8);
    }

    /** A revoke after a take-over revokes the deliveries of both: the new owner starts at the committed offset. */
    @Test
    void aRevokeAfterATakeOverRevokesTheEarlierDeliveriesToo() {
        PartitionFlow f = flow(100);
        f.take(SRC, recs(SRC, 0, 3));
        f.assigned(SRC, 3);
        f.take(SRC, recs(SRC, 3, 4));
        f.forget(List.of(SRC));
        assertThat(a.taken).hasSize(4).allSatisfy(d -> assertThat(d.ticket().revoked()).isTrue());
    }
}
