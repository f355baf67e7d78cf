package dev.weft.dispatch.engine;

import org.apache.kafka.common.TopicPartition;

import java.util.NoSuchElementException;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The records of one assigned partition that were taken and are not yet done. Records finish in any
 * order; the offset safe to commit is the lowest one not done (or the one after the last taken when all
 * are done), so a slow record holds back the commit but never the records behind it.
 * {@link #take} and {@link #committable} run on the consumer thread; {@link Ticket#done} on any thread.
 *
 * <p>A record stays open while any delivery of any ticket taken for it is unsettled: the offset holds a
 * count of unsettled deliveries, not a flag. A record taken twice (the dispatcher's error path dead-letters
 * a record that was already taken for its lanes) is therefore released only when the deliveries of both
 * tickets are settled; with a flag, the first ticket to finish released the offset and the commit could
 * pass a record whose other deliveries were still in flight.
 */
public final class PartitionTracker {
    private final TopicPartition partition;
    /** Offset -> deliveries not yet settled, for every record taken and not done. */
    private final ConcurrentSkipListMap<Long, AtomicInteger> open = new ConcurrentSkipListMap<>();
    private final AtomicInteger outstanding = new AtomicInteger();
    private long next;
    private long committed = -1;
    private volatile boolean revoked;

    public PartitionTracker(TopicPartition partition, long position) {
        this.partition = partition;
        this.next = position;
    }

    public TopicPartition partition() {
        return partition;
    }

    /** Takes the record at {@code offset}, done once {@code deliveries} tickets are done (0: done now). */
    public Ticket take(long offset, int deliveries) {
        next = Math.max(next, offset + 1);
        Ticket t = new Ticket(this, offset, deliveries);
        if (deliveries > 0) {
            open.compute(offset, (k, pending) -> {
                if (pending == null) {
                    outstanding.incrementAndGet();
                    return new AtomicInteger(deliveries);
                }
                pending.addAndGet(deliveries);
                return pending;
            });
        }
        return t;
    }

    /** One delivery of the record at {@code offset} is settled; the record is done when none is left. */
    void settled(long offset) {
        open.computeIfPresent(offset, (k, pending) -> {
            if (pending.decrementAndGet() > 0) {
                return pending;
            }
            outstanding.decrementAndGet();
            return null;
        });
    }

    /** Records taken and not yet done. */
    public int outstanding() {
        return outstanding.get();
    }

    /** The offset to commit: the lowest record not done, or the next to take when every record is done. */
    public long committable() {
        try {
            return open.firstKey();
        } catch (NoSuchElementException e) {
            return next;
        }
    }

    /** The last offset committed for this partition by this tracker, or -1. */
    public long committed() {
        return committed;
    }

    public void committed(long offset) {
        committed = offset;
    }

    /** The partition went to another consumer: deliveries not started are skipped, marks ignored. */
    public void revoke() {
        revoked = true;
    }

    public boolean revoked() {
        return revoked;
    }
}
