package dev.weft.dispatch.engine;

import java.util.concurrent.atomic.AtomicInteger;

/** One taken record: done when each of its deliveries is delivered, parked or dead-lettered. */
public final class Ticket {
    private final PartitionTracker tracker;
    private final long offset;
    private final AtomicInteger remaining;

    Ticket(PartitionTracker tracker, long offset, int deliveries) {
        this.tracker = tracker;
        this.offset = offset;
        this.remaining = new AtomicInteger(deliveries);
    }

    /**
     * One delivery of this record is settled (durably: acknowledged by the endpoint or by Kafka). Calls
     * beyond the ticket's deliveries change nothing (they must not settle another ticket's).
     */
    public void done() {
        if (remaining.getAndUpdate(r -> r > 0 ? r - 1 : 0) > 0) {
            tracker.settled(offset);
        }
    }

    public boolean revoked() {
        return tracker.revoked();
    }
}
