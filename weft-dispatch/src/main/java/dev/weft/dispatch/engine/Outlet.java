package dev.weft.dispatch.engine;

/** Where the partition flow hands an endpoint's deliveries: its {@link Lane} (a plain one in unit tests). */
interface Outlet {
    String id();

    /** Null while active; otherwise why the endpoint is disabled (its deliveries are dead-lettered). */
    String disabled();

    boolean hasRoom();

    /** Until when (epoch ms) a Retry-After throttles it; 0 when it does not. */
    default long throttledUntil() {
        return 0;
    }

    /** Takes {@code d} when there is room (it is then the outlet's to settle); false: not taken. */
    boolean offer(Delivery d);

    void countParkedRoom();

    void countDeadLettered();

    void countNotJson();
}
