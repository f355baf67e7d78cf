package dev.weft.dispatch;

import dev.weft.dispatch.engine.PartitionTracker;
import dev.weft.dispatch.engine.Ticket;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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

    @Test
    void aRevokeMarksTheTicketsAndFreezesTheCommit() {
        PartitionTracker t = new PartitionTracker(new TopicPartition("t", 0), 0);
        PartitionTracker other = new PartitionTracker(new TopicPartition("t", 1), 0);
        Ticket a = t.take(0, 1);
        Ticket b = t.take(1, 1);
        Ticket c = other.take(0, 1);
        a.done();
        assertThat(a.revoked()).isFalse();
        assertThat(t.committable()).isEqualTo(1);
        t.revoke();
        assertThat(a.revoked()).isTrue();
        assertThat(b.revoked()).as("deliveries not started are skipped").isTrue();
        assertThat(c.revoked()).as("only the revoked partition").isFalse();
        b.done();
        assertThat(t.committable()).as("a delivery done after the revoke moves nothing").isEqualTo(1);
        assertThat(t.outstanding()).isEqualTo(1);
        c.done();
        assertThat(other.committable()).isEqualTo(1);
    }

    /**
     * The sequence of an internal error in the middle of a record's hand-offs (issue 12): endpoint A has the
     * record in flight, handing it to B throws, and B's delivery is dead-lettered instead. Before the fix the
     * error path took the offset a second time with a ticket of its own, and that ticket's done() (the dead
     * letter acknowledged) let the commit pass the record while A's delivery was still in flight.
     */
    @Test
    void aDeadLetterOnTheErrorPathDoesNotFinishARecordWithADeliveryInFlight() {
        PartitionTracker t = new PartitionTracker(new TopicPartition("t", 0), 5);
        Ticket ticket = t.take(5);
        ticket.add(); // A: offered to its lane, in flight
        ticket.add(); // B: its hand-off throws; the dead letter settles this count
        assertThatThrownBy(() -> t.take(5)).as("the error path cannot take the record again")
                .isInstanceOf(IllegalStateException.class);
        ticket.done(); // B's dead letter is acknowledged
        ticket.done(); // the consumer thread releases its hold
        assertThat(t.committable()).as("A's delivery is still in flight").isEqualTo(5);
        assertThat(t.outstanding()).isEqualTo(1);
        ticket.done(); // A answered 2xx
        assertThat(t.committable()).isEqualTo(6);
        assertThat(t.outstanding()).isZero();
    }

    @Test
    void eachRecordIsTakenOnceAndInOrder() {
        PartitionTracker t = new PartitionTracker(new TopicPartition("t", 0), 10);
        assertThatThrownBy(() -> t.take(9)).as("below the position").isInstanceOf(IllegalStateException.class);
        t.take(12, 0);
        assertThatThrownBy(() -> t.take(12)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> t.take(11)).isInstanceOf(IllegalStateException.class);
        assertThat(t.next()).isEqualTo(13);
        assertThat(t.committable()).isEqualTo(13);
    }

    @Test
    void noDeliveryIsAddedToARecordThatIsDone() {
        PartitionTracker t = new PartitionTracker(new TopicPartition("t", 0), 0);
        Ticket a = t.take(0, 1);
        a.done();
        assertThatThrownBy(a::add).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(a::done).isInstanceOf(IllegalStateException.class);
        assertThat(t.committable()).isEqualTo(1);
    }
}
