package dev.weft.dispatch;

import dev.weft.dispatch.engine.PartitionTracker;
import dev.weft.dispatch.engine.Ticket;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class PartitionTrackerTest {
    @Test
    void theCommitIsTheLowestRecordNotDone() {
        PartitionTracker t = new PartitionTracker(new TopicPartition("t", 0), 100);
        assertThat(t.committable()).isEqualTo(100);
        Ticket a = t.take(100, 2);
        Ticket b = t.take(101, 1);
        Ticket none = t.take(102, 0); // matched no endpoint: done at once
        Ticket c = t.take(103, 1);
        assertThat(none).isNotNull();
        assertThat(t.outstanding()).isEqualTo(3);
        b.done();
        c.done();
        assertThat(t.committable()).as("101 and 103 are done, 100 is not").isEqualTo(100);
        a.done();
        assertThat(t.committable()).as("one of two deliveries of 100 is still out").isEqualTo(100);
        a.done();
        assertThat(t.committable()).isEqualTo(104);
        assertThat(t.outstanding()).isZero();
    }

    /**
     * The sequence of the dispatcher's error path: a record taken for two lanes (one delivery in flight),
     * then taken again to be dead-lettered. Before the fix the dead letter's ticket released the offset and
     * the commit passed the record while the first lane's delivery was still out.
     */
    @Test
    void aRecordTakenTwiceStaysOpenUntilEveryDeliveryOfBothTicketsIsSettled() {
        PartitionTracker t = new PartitionTracker(new TopicPartition("t", 0), 5);
        Ticket lanes = t.take(5, 2);
        Ticket deadLetter = t.take(5, 1);
        assertThat(t.outstanding()).as("one record").isEqualTo(1);
        deadLetter.done();
        assertThat(t.committable()).as("the lanes' deliveries are still out").isEqualTo(5);
        lanes.done();
        assertThat(t.committable()).isEqualTo(5);
        lanes.done();
        assertThat(t.committable()).isEqualTo(6);
        assertThat(t.outstanding()).isZero();
    }

    @Test
    void aTicketDoneMoreOftenThanItsDeliveriesSettlesNoOtherTicket() {
        PartitionTracker t = new PartitionTracker(new TopicPartition("t", 0), 7);
        Ticket a = t.take(7, 1);
        Ticket b = t.take(7, 1);
        a.done();
        a.done();
        assertThat(t.committable()).as("b is not settled").isEqualTo(7);
        b.done();
        assertThat(t.committable()).isEqualTo(8);
    }

    @Test
    void marksAfterARevokeChangeNothingThatMatters() {
        PartitionTracker t = new PartitionTracker(new TopicPartition("t", 0), 0);
        Ticket a = t.take(0, 1);
        t.revoke();
        assertThat(a.revoked()).isTrue();
        a.done();
        assertThat(t.committable()).isEqualTo(1);
    }
}
