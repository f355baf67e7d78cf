package dev.weft.server.admission;

import dev.weft.server.ServerRequest;

import java.time.Duration;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The static admission: at most {@code maxConcurrent} requests at once; past it a request waits up to
 * {@code maxWait} for a place, then is refused. The ceiling under every admission, and the whole admission
 * of servers that have no adaptive one (weft-upstream, status servers, the gateway with {@code admission.enabled: false}).
 */
public final class FixedAdmission implements Admission {
    private final int maxConcurrent;
    private final long maxWaitNanos;
    private final Semaphore permits;
    private final AtomicLong shed = new AtomicLong();
    /** The one ticket of every admitted request: admitting allocates nothing. */
    private final Admitted admitted;
    /** The one refusal of a full admission (its text names the capacity, which does not change). */
    private final Refused overCapacity;
    private static final Refused STOPPING = new Refused(new Refusal.Stopping());

    public FixedAdmission(int maxConcurrent, Duration maxWait) {
        this.maxConcurrent = maxConcurrent;
        this.maxWaitNanos = maxWait.toNanos();
        this.permits = new Semaphore(maxConcurrent);
        this.admitted = permits::release;
        this.overCapacity = new Refused(new Refusal.OverCapacity(maxConcurrent));
    }

    @Override
    public Ticket enter(ServerRequest r) {
        boolean ok;
        try {
            ok = permits.tryAcquire(maxWaitNanos, TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            shed.incrementAndGet();
            return STOPPING;
        }
        if (!ok) {
            return full();
        }
        return admitted;
    }

    @Override
    public Decision tryEnter(ServerRequest r) {
        if (permits.tryAcquire()) {
            return admitted;
        }
        if (maxWaitNanos > 0) {
            return WouldWait.WOULD_WAIT; // only enter() can tell
        }
        return full();
    }

    private Ticket full() {
        shed.incrementAndGet();
        return overCapacity;
    }

    /** Takes a place without waiting; false when all are taken. */
    boolean tryTake() {
        return permits.tryAcquire();
    }

    void give() {
        permits.release();
    }

    int max() {
        return maxConcurrent;
    }

    @Override
    public int inFlight() {
        return maxConcurrent - permits.availablePermits();
    }

    @Override
    public long shed() {
        return shed.get();
    }
}
