package dev.weft.client;

import dev.weft.core.Deadline;
import dev.weft.core.Durations;
import dev.weft.os.SchedulerLag;
import dev.weft.client.policy.CircuitBreaker;
import java.time.Duration;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The live state of one destination: bulkhead, breaker, connection pool, and the listener its events go to. It
 * owns its permits: {@link #admit} runs an attempt under them, and nothing outside takes or gives one back.
 */
final class DestinationRuntime implements AutoCloseable, DestinationState {
    private final Destination destination;
    private final DestinationConfig config;
    private final String hostHeader;
    private final String userAgent;
    private final Semaphore bulkhead;
    private final CircuitBreaker breaker;
    private final ConnectionPool pool;
    /** {@link TransportListener.DestinationListener#NONE} once the transport detached its listener. */
    private volatile TransportListener.DestinationListener listener;
    private final Watchdog watchdog;

    DestinationRuntime(Destination destination, DestinationConfig config, TransportListener listener,
                       String userAgent, Watchdog watchdog, DescriptorShortage shortage) {
        this.destination = destination;
        this.watchdog = watchdog;
        this.config = config;
        this.hostHeader = destination.authority();
        this.userAgent = userAgent;
        DestinationLimits limits = config.limits();
        this.bulkhead = new Semaphore(limits.maxInFlight());
        this.breaker = new CircuitBreaker(config.breaker());
        this.pool = new ConnectionPool(destination, limits, config.tls(), shortage);
        SchedulerLag.shared(); // the probe starts now, so that a timeout has the lateness of its whole time to look at
        this.listener = java.util.Objects.requireNonNull(listener.destinationOpened(this),
                "a TransportListener returned no DestinationListener");
    }

    @Override
    public Destination destination() {
        return destination;
    }

    DestinationConfig config() {
        return config;
    }

    /** The Host header: host, and the port unless it is the scheme's default. */
    String hostHeader() {
        return hostHeader;
    }

    String userAgent() {
        return userAgent;
    }

    /** Enforces the deadlines of this destination's exchanges (the transport's). */
    Watchdog watchdog() {
        return watchdog;
    }

    CircuitBreaker.State breakerState() {
        return breaker.state();
    }

    /**
     * Runs one attempt under this destination's permits: a pass from the circuit breaker and a place in the
     * bulkhead (waiting up to the max wait, never past the deadline); the attempt's result goes back to the
     * breaker. Answers by itself when the breaker is open or the bulkhead stays full.
     */
    CallResult admit(Deadline deadline, Supplier<CallResult> attempt) {
        long pass = breaker.acquire();
        if (pass == CircuitBreaker.REFUSED) {
            return CallResult.failed(destination, CallFailure.of(Reason.CIRCUIT_OPEN,
                    "the circuit breaker of " + destination.key() + " is open"));
        }
        long waitStart = System.nanoTime();
        long maxWait = Math.min(config.limits().maxWait().toNanos(), deadline.remainingNanos());
        boolean permit;
        try {
            permit = maxWait <= 0 ? bulkhead.tryAcquire() : bulkhead.tryAcquire(maxWait, TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            breaker.onIgnored(pass);
            return CallResult.failed(destination, CallFailure.of(Reason.CANCELLED, "interrupted"));
        }
        long waited = System.nanoTime() - waitStart;
        if (!permit) {
            breaker.onIgnored(pass);
            return CallResult.failed(destination, CallFailure.of(Reason.BULKHEAD_FULL,
                    config.limits().maxInFlight() + " calls already in flight to " + destination.key()
                            + " (max_in_flight); waited " + Durations.format(Duration.ofNanos(waited))))
                    .withWait(waited);
        }
        CallResult o;
        try {
            o = attempt.get();
        } finally {
            bulkhead.release();
        }
        if (o.reason() == Reason.CONNECT_WAIT || starvedByThePool(o)) {
            breaker.onIgnored(pass); // the gateway's own wait for a connection (max_connecting, max_connections)
            if (countedTimeout(o)) {
                listener.starved(TransportListener.Starved.POOL); // connect-wait and deadline never count anyway
            }
        } else if (countedTimeout(o) // only then is the lateness looked up
                && starvedByTheScheduler(o, SchedulerLag.shared().worstSince(System.nanoTime() - o.timings().totalNanos()))) {
            breaker.onIgnored(pass); // the gateway was short of CPU: its own wait for a carrier took the time
            listener.starved(TransportListener.Starved.SCHEDULER);
        } else if (o.ok()) {
            breaker.onSuccess(pass);
        } else if (o.reason().countsAgainstBackend(o.status())) { // the one rule: Reason#countsAgainstBackend
            breaker.onFailure(pass);
        } else if (o.reason() == Reason.STATUS) {
            breaker.onSuccess(pass); // a 4xx: the backend answered
        } else {
            breaker.onIgnored(pass);
        }
        return o.withWait(waited);
    }

    /** Opens the warm pool ({@code min_idle}) in the background; nothing when it is 0. */
    void warm() {
        pool.startWarmer();
    }

    /** A timeout the breaker would count: timeout-connect, timeout-headers, timeout-body. */
    private static boolean countedTimeout(CallResult o) {
        return o.reason() != null && o.reason().isTimeout() && o.reason().countsAgainstBackend(o.status());
    }

    /**
     * A timeout of an attempt during which a ready virtual thread of this process waited at least an eighth of the
     * attempt's time for a carrier thread ({@code worstLateNanos}, {@link SchedulerLag#worstSince}): after the
     * backend has sent its answer, the caller waits for a carrier two to four times (HTTP/2: the connection's reader
     * for the head and again for the body, the caller after each), so the gateway, short of CPU, may have taken
     * half the time or more, and the timeout says nothing sure about the backend. At least 100 ms of it, whatever
     * the budget ({@link #STARVED_LAG_FLOOR_NANOS}). Only the last 6.4 s of an attempt are looked at.
     */
    static boolean starvedByTheScheduler(CallResult o, long worstLateNanos) {
        return countedTimeout(o) && worstLateNanos >= STARVED_LAG_FLOOR_NANOS
                && worstLateNanos >= o.timings().totalNanos() / 8;
    }

    /**
     * A lateness below this never excuses a timeout, however short the call's budget: a GC pause of a few tens of
     * milliseconds on a busy gateway must not keep a backend that stopped answering from its breaker.
     */
    static final long STARVED_LAG_FLOOR_NANOS = 100_000_000L;

    /**
     * A timeout of an attempt that spent more than half of its time waiting for a connection of the pool: the
     * backend had less than half of the budget, so the gateway starved the call, not the backend.
     */
    static boolean starvedByThePool(CallResult o) {
        CallResult.Timings t = o.timings();
        return o.reason() != null && o.reason().isTimeout() && t.connectNanos() > 0
                && t.connectNanos() > t.totalNanos() / 2;
    }

    ConnectionPool pool() {
        return pool;
    }

    void callEnded(CallResult r) {
        listener.callEnded(r);
    }

    void attemptStarted(Attempt.Kind kind) {
        listener.attemptStarted(kind);
    }

    /** Stops reporting to the transport's listener (a transport that is being replaced). */
    void detachListener() {
        TransportListener.DestinationListener l = listener;
        listener = TransportListener.DestinationListener.NONE;
        l.detached();
    }

    // ---- DestinationState: what a listener samples ----

    @Override
    public int maxInFlight() {
        return config.limits().maxInFlight();
    }

    @Override
    public boolean breakerOpen() {
        return breaker.state() == CircuitBreaker.State.OPEN;
    }

    @Override
    public long breakerOpenings() {
        return breaker.timesOpened();
    }

    @Override
    public int connecting() {
        return pool.connecting();
    }

    @Override
    public int connectWaiting() {
        return pool.waiting();
    }

    @Override
    public int connections() {
        return pool.openConnections();
    }

    @Override
    public int streams() {
        return pool.streams();
    }

    @Override
    public long connectsOk() {
        return pool.connectsOk();
    }

    @Override
    public long connectsFailed() {
        return pool.connectsFailed();
    }

    @Override
    public int inFlight() {
        return config.limits().maxInFlight() - bulkhead.availablePermits();
    }

    @Override
    public void close() {
        pool.close();
    }
}
