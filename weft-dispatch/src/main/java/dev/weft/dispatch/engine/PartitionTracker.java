package dev.weft.dispatch.engine;

import org.apache.kafka.common.TopicPartition;

import java.util.NoSuchElementException;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The records of one assigned partition that were taken and are not yet done. Records finish in any
 * order; the offset safe to commit is the lowest one not done (or the one after the last taken when all
 * are done), so a slow record holds back the commit but never the records behind it.
 * {@link #take} and {@link #committable} run on the consumer thread; {@link Ticket#done} on any thread.
 */
public final class PartitionTracker {
    private final TopicPartition partition;
    private final ConcurrentSkipListSet<Long> open = new ConcurrentSkipListSet<>();
    private final AtomicInteger outstanding = new AtomicInteger();
    private long next;
    private long committed = -1;
    private volatile boolean revoked;
    /** The tracker this one took over from in the same assignment, while records it took are not done. */
    private volatile PartitionTracker before;

    public PartitionTracker(TopicPartition partition, long position) {
        this(partition, position, null);
    }

    /**
     * A tracker that starts at {@code position} in place of {@code before}, a tracker of the same partition in the
     * same assignment (the consumer was sought, or the partition positioned again) that is not revoked: the
     * deliveries of the records it took go on and settle against it, and no offset past the lowest of them is
     * {@link #committable} here until they are done. Without this, the new tracker's first commit would pass them
     * while they are still in flight (a kill -9 then loses them).
     */
    public PartitionTracker(TopicPartition partition, long position, PartitionTracker before) {
        this.partition = partition;
        this.next = position;
        this.before = before;
    }

    public TopicPartition partition() {
        return partition;
    }

    /**
     * Takes the record at {@code offset}: it is open (holds back the commit) until the returned ticket is
     * released ({@link Ticket#done} once) and every delivery {@link Ticket#add added} to it is done. Each
     * record is taken once, in order: an offset below the next one to take is refused.
     */
    public Ticket take(long offset) {
        if (offset < next) {
            throw new IllegalStateException(partition + "@" + offset + " taken again (the next to take is " + next + ")");
        }
        next = offset + 1;
        open.add(offset);
        outstanding.incrementAndGet();
        return new Ticket(this, offset);
    }

    /** {@link #take} with {@code deliveries} added and the hold released: done once they are (0: done now). */
    public Ticket take(long offset, int deliveries) {
        Ticket t = take(offset);
        for (int i = 0; i < deliveries; i++) {
            t.add();
        }
        t.done();
        return t;
    }

    /** The next offset to take: one after the last taken, or the position at the assignment. */
    public long next() {
        return next;
    }

    void done(long offset) {
        if (revoked) {
            return; // the record belongs to the partition's new owner: nothing done here may move this commit
        }
        if (open.remove(offset)) {
            outstanding.decrementAndGet();
        }
    }

    /** Records taken and not yet done, by this tracker and those it took over from. */
    public int outstanding() {
        PartitionTracker b = before;
        return outstanding.get() + (b == null ? 0 : b.outstanding());
    }

    /**
     * The offset to commit: the lowest record not done (here or in a tracker this one took over from), or the next
     * to take when every record is done.
     */
    public long committable() {
        long low = lowestOpen();
        return low == Long.MAX_VALUE ? next : low;
    }

    /** The lowest offset taken and not done, here or before; {@link Long#MAX_VALUE} when there is none. */
    private long lowestOpen() {
        long low;
        try {
            low = open.first();
        } catch (NoSuchElementException e) {
            low = Long.MAX_VALUE;
        }
        PartitionTracker b = before;
        if (b != null) {
            long earlier = b.lowestOpen();
            if (earlier == Long.MAX_VALUE) {
                before = null; // all done: nothing of it holds the commit any more
            } else {
                low = Math.min(low, earlier);
            }
        }
        return low;
    }

    /** The last offset committed for this partition by this tracker, or -1. */
    public long committed() {
        return committed;
    }

    public void committed(long offset) {
        committed = offset;
    }

    /**
     * The partition went to another consumer: deliveries not started are skipped (their tickets say
     * {@link Ticket#revoked}) and deliveries done from now on no longer move {@link #committable}.
     */
    public void revoke() {
        revoked = true;
        PartitionTracker b = before;
        if (b != null) {
            b.revoke(); // its records go to the new owner too: from the committed offset, which never passed them
        }
    }

    public boolean revoked() {
        return revoked;
    }
}
