package dev.weft.dispatch.engine;

/**
 * Moves deliveries to Kafka topics ({@link Parking}; a recording one in unit tests). Each call settles its
 * delivery's ticket ({@link Ticket#done}) once the copy is durable, after running {@code onDurable}. A copy
 * Kafka refuses for a while is written again; one it refuses for good is dead-lettered with the reason; a
 * dead letter it refuses for good is reported with {@link #stuck}. A call that throws (a bug) took nothing:
 * its caller dead-letters the delivery or reports it with {@link #stuck}.
 */
interface Parker {
    /** Parks {@code d} on {@code topic} until {@code dueMillis} (0: now); {@code status}: the last attempt's. */
    void park(Delivery d, String topic, ParkedRecord.Reason reason, String status, long dueMillis, Runnable onDurable);

    /** Puts {@code d} on the dead-letter topic with its endpoint, last status, reason and attempts. */
    void deadLetter(Delivery d, String status, String reason, Runnable onDurable);

    /**
     * {@code d} can be neither delivered, parked nor dead-lettered ({@code why}): its ticket stays open (the
     * commit waits), its endpoint is paused and the dispatcher reports FAILED with the record named. Never throws.
     */
    void stuck(Delivery d, String why);
}
