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

    public PartitionTracker(TopicPartition partition, long position) {
        this.partition = partition;
        this.next = position;
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

    /** Records taken and not yet done. */
    public int outstanding() {
        return outstanding.get();
    }

    /** The offset to commit: the lowest record not done, or the next to take when every record is done. */
    public long committable() {
        try {
            return open.first();
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

    /**
     * The partition went to another consumer: deliveries not started are skipped (their tickets say
     * {@link Ticket#revoked}) and deliveries done from now on no longer move {@link #committable}.
     */
    public void revoke() {
        revoked = true;
    }

    public boolean revoked() {
        return revoked;
    }
}
