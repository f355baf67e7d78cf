package dev.weft.dispatch.engine;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * One taken record: done when its taker released it ({@link #done} once for the hold given by
 * {@link PartitionTracker#take}) and each delivery {@link #add added} to it is settled (delivered,
 * parked or dead-lettered). Each delivery is added before it is handed off, while the taker still holds
 * the ticket, so the record cannot be done while a delivery of it is in flight.
 */
public final class Ticket {
    private final PartitionTracker tracker;
    private final long offset;
    private final AtomicInteger remaining = new AtomicInteger(1); // the taker's hold

    Ticket(PartitionTracker tracker, long offset) {
        this.tracker = tracker;
        this.offset = offset;
    }

    /** One more delivery of this record goes out; only while the taker holds the ticket. */
    public void add() {
        if (remaining.getAndIncrement() <= 0) {
            remaining.decrementAndGet();
            throw new IllegalStateException(tracker.partition() + "@" + offset + " is done already");
        }
    }

    /** The taker's hold is over, or one delivery of this record is settled (durably: 2xx, or acknowledged by Kafka). */
    public void done() {
        int left = remaining.decrementAndGet();
        if (left == 0) {
            tracker.done(offset);
        } else if (left < 0) {
            throw new IllegalStateException(tracker.partition() + "@" + offset + " done once more than it was taken");
        }
    }

    public long offset() {
        return offset;
    }

    /** The partition the record was taken from. */
    public org.apache.kafka.common.TopicPartition partition() {
        return tracker.partition();
    }

    public boolean revoked() {
        return tracker.revoked();
    }
}
