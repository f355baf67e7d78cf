package dev.weft.dispatch.engine;

/**
 * Moves deliveries to Kafka topics ({@link Parking}; a recording one in unit tests). Each call settles its
 * delivery's ticket ({@link Ticket#done}) once the copy is durable, after running {@code onDurable}; a
 * call that throws took nothing.
 */
interface Parker {
    /** Parks {@code d} on {@code topic} until {@code dueMillis} (0: now); {@code status}: the last attempt's. */
    void park(Delivery d, String topic, ParkedRecord.Reason reason, String status, long dueMillis, Runnable onDurable);

    /** Puts {@code d} on the dead-letter topic with its endpoint, last status, reason and attempts. */
    void deadLetter(Delivery d, String status, String reason, Runnable onDurable);
}
