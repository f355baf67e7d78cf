package dev.weft.client;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLSocketFactory;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

/**
 * The keep-alive connections of one destination.
 *
 * <ul>
 *   <li>A wait for a connection is bounded by the request's deadline, not by the call's own budget
 *       ({@code call_timeout}), which does not run while the call waits ({@link Exchange#waitStarts}): the
 *       wait is the gateway's queueing, and the destination gets its whole budget once the call has a
 *       connection.</li>
 *   <li>At most {@code max_connections} are leased at once (a lease waits for one to come back); idle ones
 *       are reused newest first, and one idle for longer than {@code idle_timeout} is closed instead of
 *       reused.</li>
 *   <li>A call that finds no idle connection queues as a waiter. Connections are opened by connectors,
 *       virtual threads of the pool, at most {@code max_connecting} at once (TCP connect and TLS handshake
 *       together, under {@code connect_timeout}); a waiter takes whichever comes first: a new connection,
 *       or one another call gives back. The call that has waited longest is served first if it still has
 *       the time for an exchange (twice the destination's recent ones) before its request's deadline; older
 *       ones are passed over and fail {@code connect-wait} when that deadline comes. So a cold start of N
 *       calls starts at most {@code max_connecting} handshakes, not N, and a handshake is never thrown away
 *       because one caller's deadline passed: its connection goes to the next waiter or to the idle list.</li>
 *   <li>A connect that fails is handed to one waiter, so a refused or unreachable backend fails calls with
 *       its own reason (and feeds the breaker); a waiter whose deadline passes first fails with
 *       {@code connect-wait}, which is the gateway's own and never counts against the backend. A connect
 *       that finds the process out of file descriptors fails its call with {@code no-descriptors} (also the
 *       gateway's own), counted and logged once a second by {@link DescriptorShortage}.</li>
 *   <li>https: one {@link SSLContext} per destination, whose client session cache resumes sessions
 *       (the socket is created with the destination's host and port, the cache's key).</li>
 *   <li>{@code min_idle}: a warmer opens that many connections in the background at start and tops the
 *       idle list up again once a second (replacing idle ones older than {@code idle_timeout}).</li>
 *   <li>HTTP/2 ({@code http2}, on by default for https): a TLS connect offers {@code h2} and {@code http/1.1} by
 *       ALPN, and the server chooses. An {@link Http2Connection} then carries up to {@code max_streams}
 *       exchanges at once (or fewer, as the server's SETTINGS say): the pool hands out places on it
 *       ({@link Http2Stream}) as it hands out HTTP/1.1 connections, to the same queue of waiting calls, oldest
 *       first; a place given back goes to the next waiting call. While the destination speaks h2 a connector
 *       starts only for every {@code max_streams} waiting calls, so 2,000 calls arriving at once need a
 *       handful of handshakes, not 2,000. {@code max_connections} bounds the h2 connections too.</li>
 * </ul>
 */
final class ConnectionPool implements AutoCloseable, Http2Connection.Owner {
    /** No pooled connection, and no new one, became available before the request's deadline. */
    static final class ConnectWaitException extends IOException {
        ConnectWaitException(String message) {
            super(message);
        }
    }

    /**
     * How often a waiter looks again on its own: a safety net only, longer than a call's usual budget. A
     * waiter is woken by the hand-off that serves it, by a connect failure, by its deadline or its cancel; and
     * a connection filed as idle while a call queued itself is found by one of the two (see {@link #handOff}).
     * It used to be 50 ms: with 5,000 calls waiting, as at an HTTPS cold start, that cost the process 0.44-0.59 of
     * a core on the cores the handshakes needed (lab/client/pool-wait-cpu.sh; docs/design/pool.md).
     */
    private static final long RECHECK_NANOS = TimeUnit.SECONDS.toNanos(2);
    private static final Object CANCELLED = new Object();
    /** In a waiter's slot: a connection came back when it had too little budget left to use one. */
    private static final Object PASSED_OVER = new Object();

    /**
     * In a waiter's slot: an HTTP/1.1 connection for a call that waited without a lease of
     * {@code max_connections} (it waited for HTTP/2, and the server answered with HTTP/1.1); the offerer took the
     * lease for it.
     */
    private record WithLease(Connection connection) {
    }
    /** See {@link #offerToWaiter}: a call is handed a connection with at least this many exchanges of budget. */
    static final int BUDGET_FOR_AN_EXCHANGE = 2;

    private final Destination destination;
    private final DestinationLimits limits;
    private final TlsOptions tlsOptions;
    private final Semaphore leases;
    /** Connects in progress at most: max_connecting, or the scheme's default. */
    private final int maxConnecting;
    private final ConcurrentLinkedDeque<Connection> idle = new ConcurrentLinkedDeque<>();
    private final Set<Connection> open = ConcurrentHashMap.newKeySet();
    private final Set<Socket> connectingSockets = ConcurrentHashMap.newKeySet();
    /**
     * Waiting calls, newest first; a connection goes to the oldest that still has the budget for an exchange
     * ({@link #offerToWaiter}). It used to go to the newest: under a closed loop of more callers than
     * connections (every cold start) the oldest then waited until their deadline while newer ones went first.
     */
    private final ConcurrentLinkedDeque<Waiter> waiters = new ConcurrentLinkedDeque<>();
    private final AtomicInteger waiting = new AtomicInteger();
    /**
     * Calls waiting for a lease of {@code max_connections}, newest first ({@link #awaitLease}): a lease given back
     * wakes the oldest, and an abort of its exchange wakes each ({@link Exchange#waiting}).
     */
    private final ConcurrentLinkedDeque<Waiter> leaseWaiters = new ConcurrentLinkedDeque<>();
    /**
     * Queued calls without a lease (they queued while the destination spoke HTTP/2): a lease given back wakes one,
     * so that it takes the lease and an idle HTTP/1.1 connection itself once the destination speaks HTTP/1.1.
     */
    private final AtomicInteger leaseless = new AtomicInteger();
    /**
     * How long an exchange holds a connection, lease to release: a moving average over the last ~8. A waiting
     * call is handed a connection only with at least {@link #BUDGET_FOR_AN_EXCHANGE} times this left.
     */
    private volatile long exchangeNanos;
    private final AtomicInteger connecting = new AtomicInteger();
    private final LongAdder connectsOk = new LongAdder();
    /**
     * Connections that became free for a call: given back for reuse, or newly opened. A call whose own budget
     * ran out while it waited goes on waiting only if this moved meanwhile, or a connection is open that will
     * come back ({@link #await}).
     */
    private final LongAdder madeFree = new LongAdder();
    private final LongAdder connectsFailed = new LongAdder();
    /** HTTP/2 connections that take new streams, oldest first (places are taken from the first with room). */
    private final java.util.concurrent.CopyOnWriteArrayList<Http2Connection> h2 =
            new java.util.concurrent.CopyOnWriteArrayList<>();
    /**
     * Whether the destination's last connect chose HTTP/2: a call then waits for a place on a connection without
     * taking a lease of {@code max_connections} (that bounds HTTP/1.1 exchanges, one per connection).
     */
    private volatile boolean speaksH2;
    /** Places a new connection brings: 1 for HTTP/1.1, the last HTTP/2 connection's capacity while it speaks h2. */
    private volatile int placesPerConnect = 1;
    /** Streams per HTTP/2 connection at most (ours; the server may allow fewer). */
    private final int maxStreams;
    /** https: the destination's own context's factory (its session cache resumes sessions); null for http. */
    private final SSLSocketFactory tls;
    /** Why the TLS context could not be built (a CA file that went away); every connect fails with it. */
    private final IOException tlsProblem;
    /** Counts and reports connects that failed for lack of file descriptors (one per transport). */
    private final DescriptorShortage shortage;
    private volatile boolean closed;
    private volatile Thread warmer;

    ConnectionPool(Destination destination, DestinationLimits limits, TlsOptions tlsOptions,
                   DescriptorShortage shortage) {
        this.destination = destination;
        this.shortage = shortage;
        this.limits = limits;
        this.tlsOptions = tlsOptions;
        this.leases = new Semaphore(limits.maxConnections());
        this.maxConnecting = limits.maxConnectingFor(destination.scheme());
        this.maxStreams = limits.maxStreams();
        if (tlsOptions.h2c() && destination.scheme().equals("http")) {
            // every connection will be HTTP/2: a cold start of N calls opens N / max_streams connections, not N
            speaksH2 = true;
            placesPerConnect = maxStreams;
        }
        SSLSocketFactory f = null;
        IOException problem = null;
        if (destination.scheme().equals("https")) {
            try {
                f = tlsOptions.context().getSocketFactory();
            } catch (IOException e) {
                problem = e;
            }
        }
        this.tls = f;
        this.tlsProblem = problem;
    }

    /**
     * One waiting call: a connection, a connect failure, {@link #CANCELLED} or {@link #PASSED_OVER} is put in
     * its slot once; the pool's count of waiting calls drops at that moment (so that no connector starts for a
     * call already served or passed over).
     */
    static final class Waiter {
        final Thread thread = Thread.currentThread();
        /** Takes only a connection made for it (a retry after a stale pooled connection). */
        final boolean fresh;
        /** System.nanoTime() at which its wait ends: its request's deadline. */
        final long until;
        /**
         * Whether it holds a lease of max_connections (an HTTP/1.1 connection may be handed to it). Set by the waiting
         * call only; read by offerers, which take a lease for a call without one ({@link WithLease}).
         */
        volatile boolean lease;
        final AtomicReference<Object> slot = new AtomicReference<>();
        private final AtomicInteger waiting;

        Waiter(boolean fresh, long until, boolean lease, AtomicInteger waiting) {
            this.fresh = fresh;
            this.until = until;
            this.lease = lease;
            this.waiting = waiting;
            if (waiting != null) {
                waiting.incrementAndGet();
            }
        }

        boolean offer(Object o) {
            if (slot.compareAndSet(null, o)) {
                if (waiting != null) {
                    waiting.decrementAndGet();
                }
                LockSupport.unpark(thread);
                return true;
            }
            return false;
        }

        /** Wakes the waiting call with nothing (its exchange was cancelled or reached its deadline). */
        boolean cancel() {
            if (offer(CANCELLED)) {
                return true;
            }
            if (slot.get() == PASSED_OVER) {
                LockSupport.unpark(thread); // it waits out its budget: stop that now
            }
            return false;
        }

        /**
         * Takes it out of the running for connections: it waits out its budget and fails {@code connect-wait} then,
         * as it would have without a connection (failing it at once would only send its caller back sooner, to a
         * pool that has no connection for it either). It is woken only to give back its lease of
         * {@code max_connections}, which another call can use meanwhile.
         */
        boolean passOver() {
            if (slot.compareAndSet(null, PASSED_OVER)) {
                if (waiting != null) {
                    waiting.decrementAndGet();
                }
                if (lease) {
                    LockSupport.unpark(thread);
                }
                return true;
            }
            return false;
        }
    }

    /** A snapshot of this pool (see {@link PoolState}). */
    PoolState state() {
        return new PoolState(waiting(), waitingForLease(), leased(), http2StreamsStarted(), longestHttp2WriteNanos(),
                idle.size());
    }

    /** The HTTP/1.1 connections idle now, newest first (for this package's tests). */
    java.util.List<Connection> idleConnections() {
        return java.util.List.copyOf(idle);
    }

    /** Calls waiting for a connection now. */
    int waiting() {
        return waiting.get();
    }

    /** Calls waiting for a lease of {@code max_connections} now. */
    int waitingForLease() {
        return leaseWaiters.size();
    }

    /** Leases of {@code max_connections} held now (HTTP/1.1 exchanges, and calls waiting with one). */
    int leased() {
        return limits.maxConnections() - leases.availablePermits();
    }

    /** Since when the write in progress on an HTTP/2 connection has been blocked, the longest; 0 when none is. */
    long longestHttp2WriteNanos() {
        long now = System.nanoTime();
        long longest = 0;
        for (Http2Connection c : h2) {
            long since = c.writingSince();
            if (since != 0) {
                longest = Math.max(longest, now - since);
            }
        }
        return longest;
    }

    /** HTTP/2 streams started (their HEADERS sent) and not ended, on every connection. */
    int http2StreamsStarted() {
        int n = 0;
        for (Http2Connection c : h2) {
            n += c.streamsStarted();
        }
        return n;
    }

    /** Connects (TCP and TLS) in progress now. */
    int connecting() {
        return connecting.get();
    }

    /** Connections open now (HTTP/1.1 leased and idle, and HTTP/2). */
    int openConnections() {
        return open.size() + h2.size();
    }

    /** HTTP/2 streams in flight now (places handed out on this destination's HTTP/2 connections). */
    int streams() {
        int n = 0;
        for (Http2Connection c : h2) {
            n += c.reserved();
        }
        return n;
    }

    long connectsOk() {
        return connectsOk.sum();
    }

    long connectsFailed() {
        return connectsFailed.sum();
    }

    /**
     * A connection for one exchange: a place on an HTTP/2 connection with room, an idle HTTP/1.1 one, or one handed
     * over or newly opened while the call waits. Before it waits, {@link Exchange#waitStarts} says for how long
     * it may (until the request's deadline: the call's own budget does not run while it waits). {@code exchange}
     * learns the waiter, so that its deadline or a cancel wakes the wait.
     *
     * @param fresh do not reuse an idle connection or a place on an open one (only one opened for this call)
     */
    Lease lease(Exchange exchange, boolean fresh) throws IOException {
        // Taken before any wait (for a lease, then for a connection): a connection given back while the call
        // waited for its lease shows a pool that serves its queue, even if that connection was closed (its
        // exchange cut) before this call got to the idle list.
        long freeAtStart = madeFree.sum();
        if (exchange.stopped()) { // a hedge's loser cancelled before it got here takes nothing
            throw new ConnectWaitException("stopped before it took a connection");
        }
        if (!fresh) {
            Http2Stream s = takeStream();
            if (s != null) {
                s.leasedAt = System.nanoTime();
                return s;
            }
        }
        boolean lease = !speaksH2;
        if (lease && !leases.tryAcquire() && !awaitLease(exchange, exchange.waitStarts())) {
            if (closed) {
                throw new IOException("the transport is closed");
            }
            if (exchange.stopped()) {
                throw new ConnectWaitException("stopped while it waited for one of the " + limits.maxConnections()
                        + " connections to " + destination.key());
            }
            throw new ConnectWaitException("all " + limits.maxConnections() + " connections to "
                    + destination.key() + " stayed leased (max_connections)");
        }
        Waiter w = null;
        try {
            if (closed) {
                throw new IOException("the transport is closed");
            }
            if (exchange.stopped()) { // it would throw a good idle connection (and its TLS session) away
                throw new ConnectWaitException("stopped before it took a connection");
            }
            Lease c = fresh || !lease ? null : takeIdle(exchange);
            if (c == null) {
                long budget = exchange.waitStarts();
                w = new Waiter(fresh, System.nanoTime() + Math.max(0, budget), lease, waiting);
                c = await(exchange, w, exchange.ownBudgetEndsNanos(), freeAtStart);
                if (c instanceof Http2Stream && w.lease) { // waited with a lease, served by HTTP/2
                    w.lease = false;
                    releaseLease();
                }
            }
            c.leasedAt = System.nanoTime();
            return c;
        } catch (IOException | RuntimeException e) {
            if (w == null ? lease : w.lease) {
                releaseLease();
            }
            throw e;
        }
    }

    /**
     * Waits up to {@code nanos} for a lease of {@code max_connections}; whether it took one. A lease given back
     * wakes the oldest waiting call ({@link #releaseLease}); an abort of the exchange (its deadline, a hedge's winner,
     * a closing transport) wakes the call, which then leaves without a lease.
     */
    private boolean awaitLease(Exchange exchange, long nanos) throws IOException {
        Waiter w = new Waiter(false, System.nanoTime() + Math.max(0, nanos), false, null);
        leaseWaiters.addFirst(w);
        boolean got = false;
        try {
            exchange.waiting(w);
            while (true) {
                if (w.slot.get() != null || exchange.stopped() || closed) {
                    return false;
                }
                if (leases.tryAcquire()) { // after it queued: a lease given back before that is seen here
                    got = true;
                    return true;
                }
                long left = w.until - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                // Capped: a wake-up lost to a race (several leases back before one waiter runs) costs a recheck,
                // not the rest of the call's deadline.
                LockSupport.parkNanos(this, Math.min(left, RECHECK_NANOS));
                if (Thread.currentThread().isInterrupted()) {
                    throw new InterruptedIOException("interrupted while waiting for a connection");
                }
            }
        } finally {
            exchange.waiting(null);
            leaseWaiters.removeLastOccurrence(w); // the oldest are at the tail
            // Several leases given back before this call ran all woke this one call (the oldest): whether it took
            // one or not, the next waiter is woken while a lease is free, or the pool would serve one call at a time.
            if (leases.availablePermits() > 0) {
                wakeForLease();
            }
        }
    }

    /** Gives a lease of {@code max_connections} back and wakes a call that waits for one. */
    private void releaseLease() {
        leases.release();
        wakeForLease();
    }

    private void wakeForLease() {
        Waiter lw = leaseWaiters.peekLast();
        if (lw != null) {
            LockSupport.unpark(lw.thread);
        }
        if (leaseless.get() > 0) { // rare: calls that queued while the destination spoke HTTP/2
            for (java.util.Iterator<Waiter> it = waiters.descendingIterator(); it.hasNext(); ) {
                Waiter w = it.next();
                if (!w.lease && w.slot.get() == null) {
                    LockSupport.unpark(w.thread);
                    return;
                }
            }
        }
    }

    /**
     * Waits for a connection until {@code budgetNanos} from now (the request's deadline). Past
     * {@code ownBudgetEnds}, where the call's own budget would have ended, it waits on only if some connection
     * became free since the call began to wait ({@code freeAtStart}: {@link #madeFree} then, before any wait
     * for a lease) or one is open (leased: it comes back, within its call's budget). A pool that serves its
     * queue (a cold start, every connection busy) is worth waiting for; one with no connection whose connects
     * all hang or fail (a backend that does not answer) is not, and the call fails {@code connect-wait} then,
     * as it did before waits stopped counting against its budget.
     */
    private Lease await(Exchange exchange, Waiter w, long ownBudgetEnds, long freeAtStart) throws IOException {
        long until = w.until;
        boolean fresh = w.fresh;
        boolean patient = ownBudgetEnds - until >= 0; // its own budget lasts the whole wait: nothing to check
        boolean leaseless = !w.lease;
        if (leaseless) {
            this.leaseless.incrementAndGet();
        }
        waiters.addFirst(w);
        // Who filled the slot unlinks the waiter: a hand-off unlinks it through its iterator (O(1)); when the
        // waiter filled it itself (an idle connection, a timeout), it unlinks itself here. A scan of the whole
        // deque per waiter would cost O(n^2) with thousands of calls waiting at a cold start.
        boolean self = false;
        try {
            exchange.waiting(w);
            while (true) {
                if (!fresh && w.slot.get() == null) { // queued, then looks: see handOff and giveBack
                    Http2Stream st = takeStream();
                    if (st != null) {
                        if (w.offer(st)) {
                            self = true;
                        } else {
                            handOn(st, false); // served meanwhile: the place goes to another waiting call
                        }
                    }
                }
                if (!fresh && !w.lease && !speaksH2 && w.slot.get() == null && !idle.isEmpty()
                        && leases.tryAcquire()) {
                    w.lease = true; // it queued for HTTP/2 and the destination answers HTTP/1.1 now: a lease for it
                }
                if (!fresh && w.lease && w.slot.get() == null) {
                    Connection c = takeIdle(exchange);
                    if (c != null) {
                        if (w.offer(c)) {
                            self = true;
                        } else {
                            handOff(c, false); // served meanwhile: c goes to another waiting call, or back to idle
                        }
                    }
                }
                startConnectors();
                Object got = w.slot.get();
                if (got == PASSED_OVER) {
                    if (w.lease) { // it will not use it: another call may, meanwhile
                        w.lease = false;
                        releaseLease();
                    }
                    long left = until - System.nanoTime();
                    if (left > 0 && !closed && !exchange.stopped() && !Thread.currentThread().isInterrupted()) {
                        LockSupport.parkNanos(this, Math.min(left, RECHECK_NANOS));
                        continue;
                    }
                    throw new ConnectWaitException("no connection to " + destination.key() + " in time: when one"
                            + " came back, this call had less than " + BUDGET_FOR_AN_EXCHANGE + " times the recent"
                            + " exchanges (" + exchangeNanos / 1_000_000 + " ms each) left, so an older call with"
                            + " enough budget took it");
                }
                if (got == null) {
                    long now = System.nanoTime();
                    long left = until - now;
                    if (!patient && now - ownBudgetEnds >= 0) {
                        patient = madeFree.sum() != freeAtStart || !open.isEmpty() || !h2.isEmpty();
                        if (!patient) {
                            left = 0; // nothing became free within its own budget, and nothing will: stop waiting
                        }
                    }
                    if (left <= 0 || closed) {
                        self |= w.cancel();
                        got = w.slot.get();
                    } else {
                        long nap = patient ? left : Math.min(left, Math.max(0, ownBudgetEnds - now));
                        LockSupport.parkNanos(this, Math.min(nap, RECHECK_NANOS));
                        if (Thread.interrupted()) {
                            Thread.currentThread().interrupt();
                            self |= w.cancel();
                        }
                        continue;
                    }
                }
                if (got instanceof WithLease wl) {
                    if (w.lease) {
                        releaseLease(); // it took a lease of its own meanwhile: one is enough
                    }
                    w.lease = true; // the offerer took the lease for this call
                    got = wl.connection();
                }
                if (got instanceof Connection c) {
                    if (exchange.stopped()) { // its deadline or a cancel came first: the next waiter has it
                        handOff(c, !c.reused);
                        throw new ConnectWaitException("stopped while a connection was handed over");
                    }
                    return c;
                }
                if (got instanceof Http2Stream st) {
                    if (exchange.stopped()) {
                        handOn(st, false);
                        throw new ConnectWaitException("stopped while a place on a connection was handed over");
                    }
                    return st;
                }
                if (got instanceof IOException e) {
                    throw e;
                }
                if (got instanceof RuntimeException e) {
                    throw e;
                }
                if (closed) {
                    throw new IOException("the transport is closed");
                }
                throw new ConnectWaitException("no connection to " + destination.key() + " became free and no new one"
                        + " was made in time (" + connecting.get() + " connects in progress, max_connecting "
                        + maxConnecting + "; " + openConnections() + " open, max_connections "
                        + limits.maxConnections() + (h2.isEmpty() ? "" : "; " + streams() + " HTTP/2 streams")
                        + ")");
            }
        } finally {
            if (leaseless) {
                this.leaseless.decrementAndGet();
            }
            self |= w.cancel(); // false when it was served or cancelled from outside
            if (self || w.slot.get() == CANCELLED) {
                waiters.removeLastOccurrence(w); // the oldest waiters are at the tail
            }
            exchange.waiting(null);
        }
    }

    /**
     * An idle HTTP/1.1 connection fit for reuse, or null. A TLS connection that never served an exchange may be probed
     * on the way ({@link Connection#hasUnaskedBytes}): for a few milliseconds at most, and never past {@code exchange}'s
     * deadline, since its watchdog has no connection to abort while the call is here.
     */
    private Connection takeIdle(Exchange exchange) {
        long now = System.nanoTime();
        Connection c;
        while ((c = idle.pollFirst()) != null) {
            // Bytes the backend sent on an idle connection, unasked (a stray body, an idle 408, a TLS close_notify),
            // would be read as the next call's answer: such a connection is not reused.
            if (!c.isClosed() && now - c.idleSince < limits.idleTimeout().toNanos()
                    && !c.hasUnaskedBytes(exchange)) {
                c.reused = true;
                return c;
            }
            discard(c);
        }
        return null;
    }

    /**
     * A place on the first HTTP/2 connection with room (so that calls fill few connections), or null. A connection
     * without streams for longer than {@code idle_timeout} is retired on the way (closed once no stream holds it).
     */
    private Http2Stream takeStream() {
        if (h2.isEmpty()) {
            return null;
        }
        long idleNanos = limits.idleTimeout().toNanos();
        for (Http2Connection c : h2) {
            if (c.retireIfIdle(idleNanos)) {
                continue; // a connection no stream used for idle_timeout may be dead on the way (a NAT forgot it)
            }
            Http2Stream s = c.reserve();
            if (s != null) {
                return s;
            }
        }
        return null;
    }

    /**
     * Gives a lease back: an HTTP/1.1 connection is kept for reuse when {@code reusable}, closed otherwise; a
     * stream's place on its HTTP/2 connection goes to the next waiting call (its stream reset first, when it did
     * not end on both sides).
     */
    void release(Lease l, boolean reusable) {
        if (reusable) { // an exchange that ran to its end (one cut by its deadline would say only "longer than")
            long held = System.nanoTime() - l.leasedAt;
            long e = exchangeNanos;
            exchangeNanos = e + (held - e) / 8; // racy by design: an estimate
        }
        if (l instanceof Http2Stream s) {
            Http2Connection conn = s.connection;
            if (!conn.finish(s)) {
                return; // its reset is queued: the place comes back once it is written (placesFreed)
            }
            if (!closed && conn.usable()) {
                madeFree.increment();
                if (conn.reserved() <= conn.capacity()) {
                    handOn(conn.handOn(), false);
                } else { // the server lowered its limit (SETTINGS) below the streams running: the place goes
                    conn.unreserve();
                    passPlaces(conn, false); // on only once the connection is under the new limit
                }
            } else {
                conn.unreserve();
            }
            return;
        }
        Connection c = (Connection) l;
        try {
            // Bytes past the answer (a hostile backend's forged second answer) would be read as the next call's
            // answer. Those in our buffer are seen here at no cost; those still in the socket are asked for once per
            // reuse (a FIONREAD, not free), just before a call gets the connection: in handOff when a call waits for
            // it, in takeIdle otherwise. Checking here as well would only ask twice for the same bytes.
            if (reusable && !closed && !c.isClosed() && !c.hasBufferedBytes()) {
                madeFree.increment();
                c.reused = true;
                handOff(c, false);
            } else {
                discard(c);
            }
        } finally {
            releaseLease();
        }
    }

    /**
     * Hands {@code c} to a waiting call, or files it as idle. {@code brandNew}: just opened, so a waiter
     * that wants a fresh connection may take it.
     */
    private void handOff(Connection c, boolean brandNew) {
        // A connection given back goes to a waiting call without passing takeIdle: it is checked for unasked bytes
        // here (once, whatever the rounds below), when a call waits. One filed as idle is checked when taken.
        boolean checked = brandNew;
        while (true) {
            if (!checked && !waiters.isEmpty()) {
                checked = true;
                if (c.hasUnaskedBytes(null)) {
                    discard(c);
                    return;
                }
            }
            if (offerToWaiter(c, brandNew)) {
                return;
            }
            giveBack(c);
            // A call that queued itself after the scan above may have looked at the idle list before c was filed
            // there. await() queues, then looks at the idle list; this files, then looks at the queue: one of the
            // two sees the other. If a call is still unserved and c is still idle, take c back and offer it again.
            // Each further round means some call was served meanwhile, so this ends.
            if (!unservedWaiter(brandNew, true) || !idle.removeFirstOccurrence(c)) {
                return;
            }
        }
    }

    /**
     * Hands a place on an HTTP/2 connection (reserved by the caller) to a waiting call, or gives it back. As
     * {@link #handOff}: a call that queued itself after the offer missed it looks at the connections itself; this
     * gives back, then looks at the queue once more ({@link #passPlaces}).
     */
    private void handOn(Http2Stream place, boolean brandNew) {
        if (offerToWaiter(place, brandNew)) {
            return;
        }
        place.connection.unreserve();
        passPlaces(place.connection, brandNew);
    }

    /** Offers places on {@code c} to waiting calls, oldest first, while it has room and someone waits. */
    private void passPlaces(Http2Connection c, boolean brandNew) {
        while (unservedWaiter(brandNew, false)) {
            Http2Stream s = c.reserve();
            if (s == null) {
                return;
            }
            if (!offerToWaiter(s, brandNew)) {
                c.unreserve();
            }
        }
    }

    /**
     * Offers {@code c} to the call that has waited longest and still has the budget for an exchange: at least
     * {@link #BUDGET_FOR_AN_EXCHANGE} times the destination's recent exchanges. Older calls with less left are
     * passed over on the way ({@link Waiter#passOver}): their exchange would most likely reach its deadline,
     * and a deadline in the middle of an exchange closes the connection (over TLS, a handshake lost). A place on
     * an HTTP/2 connection goes to the oldest call: there a cut exchange resets its stream only.
     */
    private boolean offerToWaiter(Lease c, boolean brandNew) {
        if (waiters.isEmpty()) {
            return false;
        }
        long now = System.nanoTime();
        long needed = BUDGET_FOR_AN_EXCHANGE * exchangeNanos;
        for (java.util.Iterator<Waiter> it = waiters.descendingIterator(); it.hasNext(); ) {
            Waiter w = it.next();
            if (!brandNew && w.fresh) {
                continue;
            }
            // A place on an HTTP/2 connection goes to the oldest call whatever its budget: a stream its deadline
            // cuts costs a reset, not the connection.
            if (w.until - now < needed && !(c instanceof Http2Stream)) {
                if (w.passOver()) {
                    it.remove();
                }
                continue;
            }
            Object offer = c;
            if (c instanceof Connection conn && !w.lease) { // it waited for HTTP/2: take its lease for it
                if (!leases.tryAcquire()) {
                    continue;
                }
                offer = new WithLease(conn);
            }
            if (w.offer(offer)) {
                it.remove();
                return true;
            }
            if (offer instanceof WithLease) {
                releaseLease();
            }
        }
        return false;
    }

    /**
     * Whether a queued call that could take an idle connection has not been served yet. {@code http1}: an HTTP/1.1
     * connection, which a call without a lease can take only when a lease is free; were it counted without one,
     * {@link #handOff} would file and take back the same connection until that call's deadline. It takes its lease
     * and the idle connection itself once a lease comes back ({@link #wakeForLease}).
     */
    private boolean unservedWaiter(boolean brandNew, boolean http1) {
        if (waiters.isEmpty()) {
            return false;
        }
        for (Waiter w : waiters) {
            if ((brandNew || !w.fresh) && w.slot.get() == null
                    && (!http1 || w.lease || leases.availablePermits() > 0)) {
                return true;
            }
        }
        return false;
    }

    private void giveBack(Connection c) {
        c.idleSince = System.nanoTime();
        idle.offerFirst(c);
        if (closed && idle.remove(c)) { // closed meanwhile: close() may have missed it
            discard(c);
        }
    }

    /** Starts connectors while calls wait for more connections than are being opened, up to max_connecting. */
    private void startConnectors() {
        while (!closed) {
            int n = connecting.get();
            if (n >= maxConnecting || (long) n * placesPerConnect >= waiting.get()) {
                return;
            }
            if (speaksH2 && h2.size() + n >= limits.maxConnections()) {
                return;
            }
            if (connecting.compareAndSet(n, n + 1)) {
                startConnector();
            }
        }
    }

    private void startConnector() {
        try {
            Thread.ofVirtual().name("weft-connect").start(this::connectOne);
        } catch (RuntimeException | OutOfMemoryError e) {
            connecting.decrementAndGet();
            throw e;
        }
    }

    /**
     * One connector: opens a connection and hands it (or its failure) to a waiting call. It counts as connecting until
     * it has handed its result on: a waiting call that wakes meanwhile (a spurious wake-up, a recheck) and looks at
     * {@link #startConnectors} sees its connection on the way, and starts no second connector for the same wait.
     */
    private void connectOne() {
        try {
            Object result;
            try {
                result = open();
                connectsOk.increment();
                madeFree.increment();
            } catch (IOException | RuntimeException e) {
                connectsFailed.increment();
                result = e;
            }
            handOut(result);
        } finally {
            connecting.decrementAndGet();
        }
        startConnectors(); // calls that queued while it connected, more than the connectors left serve
    }

    /** A connector's result to a waiting call: a connection (or places on one), or the failure to make one. */
    private void handOut(Object result) {
        if (result instanceof Http2Connection c) {
            placesPerConnect = Math.max(1, c.capacity());
            speaksH2 = true;
            h2.add(c);
            if (!c.usable()) {
                h2.remove(c); // closed or going away before it was added: its retirement found nothing to remove
            }
            if (closed) {
                c.close("the transport is closed");
            } else {
                passPlaces(c, true);
            }
        } else if (result instanceof Connection c) {
            speaksH2 = false;
            placesPerConnect = 1;
            if (closed) {
                discard(c);
            } else {
                handOff(c, true);
            }
        } else {
            for (java.util.Iterator<Waiter> it = waiters.iterator(); it.hasNext(); ) {
                if (it.next().offer(result)) {
                    it.remove();
                    break;
                }
            }
        }
    }

    /**
     * TCP connect and, for https, the TLS handshake, together under connect_timeout: an HTTP/1.1
     * {@link Connection}, or an {@link Http2Connection} when the server chose {@code h2} by ALPN.
     */
    private Object open() throws IOException {
        InetSocketAddress address = new InetSocketAddress(destination.host(), destination.port());
        if (address.isUnresolved()) {
            throw new UnknownHostException(destination.host() + ": no such host");
        }
        long timeout = limits.connectTimeout().toNanos();
        long start = System.nanoTime();
        // https: a socket that follows the TLS records read from it, for the probe of a never-used connection
        Socket raw = destination.scheme().equals("https") ? new RecordTrackingSocket() : new Socket();
        connectingSockets.add(raw);
        try {
            if (closed) {
                throw new IOException("the transport is closed");
            }
            try {
                raw.setTcpNoDelay(true); // the socket's descriptor is made here
                raw.connect(address, (int) Math.max(1, TimeUnit.NANOSECONDS.toMillis(timeout)));
            } catch (IOException e) {
                if (dev.weft.os.Descriptors.exhausted(e)) {
                    throw shortage.failed(destination.key(), e);
                }
                throw e;
            }
            Socket socket = raw;
            if (destination.scheme().equals("https")) {
                // The handshake as a whole (and HTTP/2's start) is bounded by connect_timeout, not each read: a server
                // that dribbles its handshake would otherwise hold a connector (of max_connecting) for ever.
                SocketGuard guard = new SocketGuard(raw, start + timeout, "weft-connect-deadline");
                try {
                    SSLSocket ssl = handshake(raw);
                    socket = ssl;
                    if ("h2".equals(ssl.getApplicationProtocol())) {
                        long rest = timeout - (System.nanoTime() - start);
                        Http2Connection h = Http2Connection.open(destination.key(), ssl, raw, this, maxStreams, rest);
                        if (!guard.done()) {
                            h.close("connect_timeout passed");
                            throw handshakeTimeout();
                        }
                        if (closed) {
                            h.close("the transport is closed");
                            throw new IOException("the transport is closed");
                        }
                        return h;
                    }
                    if (!guard.done()) {
                        throw handshakeTimeout();
                    }
                } catch (IOException e) {
                    if (!guard.done()) { // the guard closed the socket under the handshake
                        throw handshakeTimeout();
                    }
                    throw e;
                } finally {
                    guard.done(); // a RuntimeException: the guard's thread need not wait for the deadline
                }
            }
            if (tlsOptions.h2c() && destination.scheme().equals("http")) {
                // HTTP/2 with prior knowledge: the preface and SETTINGS exchange bounded by connect_timeout as a whole
                SocketGuard guard = new SocketGuard(raw, start + timeout, "weft-connect-deadline");
                try {
                    Http2Connection h = Http2Connection.open(destination.key(), raw, raw, this, maxStreams,
                            timeout - (System.nanoTime() - start));
                    if (!guard.done()) {
                        h.close("connect_timeout passed");
                        throw h2cTimeout();
                    }
                    if (closed) {
                        h.close("the transport is closed");
                        throw new IOException("the transport is closed");
                    }
                    return h;
                } catch (IOException e) {
                    if (!guard.done()) {
                        throw h2cTimeout();
                    }
                    throw e;
                } finally {
                    guard.done();
                }
            }
            Connection c = new Connection(socket, raw);
            open.add(c);
            if (closed) {
                discard(c);
                throw new IOException("the transport is closed");
            }
            return c;
        } catch (IOException | RuntimeException e) {
            try {
                raw.close();
            } catch (IOException ignored) {
                // the connect failed anyway
            }
            throw e;
        } finally {
            connectingSockets.remove(raw);
        }
    }

    /** The TLS handshake on {@code raw}, offering h2 and http/1.1 by ALPN when HTTP/2 is on. */
    private SSLSocket handshake(Socket raw) throws IOException {
        SSLSocket ssl = (SSLSocket) tlsFactory().createSocket(raw, destination.host(), destination.port(), true);
        SSLParameters p = ssl.getSSLParameters();
        if (tlsOptions.verifyHostname()) {
            p.setEndpointIdentificationAlgorithm("HTTPS");
        }
        if (tlsOptions.http2()) {
            p.setApplicationProtocols(new String[] {"h2", "http/1.1"});
        }
        ssl.setSSLParameters(p);
        try {
            ssl.startHandshake();
        } catch (SSLHandshakeException e) {
            if (e.getCause() instanceof java.io.EOFException) {
                // The server closed the connection in the middle of the handshake (a restart, an overload):
                // a reset, as a reset in the handshake already is; not a certificate problem (tls-error).
                throw new java.net.SocketException("the server closed the connection during the TLS"
                        + " handshake: " + e.getMessage());
            }
            throw handshakeFailure(e);
        }
        return ssl;
    }

    private java.net.SocketTimeoutException h2cTimeout() {
        return new java.net.SocketTimeoutException("HTTP/2 (h2c) with " + destination.key()
                + " did not start within connect_timeout (" + limits.connectTimeout().toMillis() + " ms)");
    }

    private java.net.SocketTimeoutException handshakeTimeout() {
        return new java.net.SocketTimeoutException("the TLS handshake with " + destination.key()
                + " did not complete within connect_timeout (" + limits.connectTimeout().toMillis() + " ms)");
    }

    @Override
    public void placesFreed(Http2Connection c) {
        if (!closed && c.usable()) {
            madeFree.increment();
            passPlaces(c, false);
        }
    }

    /** An HTTP/2 connection takes no new streams any more: it is no longer offered. */
    @Override
    public void retired(Http2Connection c) {
        h2.remove(c);
    }

    private SSLSocketFactory tlsFactory() throws IOException {
        if (tls == null) {
            throw new IOException("no TLS context for " + destination.key() + ": " + tlsProblem.getMessage(), tlsProblem);
        }
        return tls;
    }

    private SSLHandshakeException handshakeFailure(SSLHandshakeException e) {
        String m = String.valueOf(e.getMessage());
        String hint = "";
        if (m.contains("PKIX") || m.contains("certification path")) {
            hint = " (the certificate of " + destination.key() + " is not signed by a trusted root: add its CA"
                    + " with 'ca: FILE.pem' on the destination)";
        } else if (m.contains("No subject alternative") || m.contains("No name matching")) {
            hint = " (the certificate does not name " + destination.host() + ")";
        }
        SSLHandshakeException out = new SSLHandshakeException("TLS handshake with " + destination.key()
                + " failed: " + m + hint);
        out.initCause(e);
        return out;
    }

    private void discard(Connection c) {
        open.remove(c);
        c.close();
    }

    /**
     * Starts the warm pool when {@code min_idle} is set: a virtual thread opens connections until that
     * many are idle, and checks again once a second.
     */
    void startWarmer() {
        if (limits.minIdle() == 0 || warmer != null) {
            return;
        }
        warmer = Thread.ofVirtual().name("weft-warm-" + destination.key()).start(this::warm);
    }

    private void warm() {
        while (!closed) {
            long now = System.nanoTime();
            int fresh = 0;
            for (Connection c : idle) {
                if (c.isClosed() || now - c.idleSince >= limits.idleTimeout().toNanos()) {
                    if (idle.remove(c)) {
                        discard(c);
                    }
                } else {
                    fresh++;
                }
            }
            for (Http2Connection c : h2) {
                if (c.usable()) {
                    fresh++; // an HTTP/2 connection serves many calls: it counts as one warm connection
                }
            }
            int missing = limits.minIdle() - fresh - connecting.get();
            missing = Math.min(missing, limits.maxConnections() - open.size());
            while (missing-- > 0 && !closed) {
                int n = connecting.get();
                if (n >= maxConnecting) {
                    break;
                }
                if (connecting.compareAndSet(n, n + 1)) {
                    startConnector();
                } else {
                    missing++;
                }
            }
            try {
                Thread.sleep(Duration.ofSeconds(1));
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    /** Closes every connection, leased ones too (their exchanges fail at once), and wakes every waiter. */
    @Override
    public void close() {
        closed = true;
        Thread w = warmer;
        if (w != null) {
            w.interrupt();
        }
        for (Connection c : open) {
            c.abort();
        }
        for (Http2Connection c : h2) {
            c.close("the transport is closed");
        }
        for (Socket s : connectingSockets) {
            try {
                s.close();
            } catch (IOException ignored) {
                // closing is all we wanted
            }
        }
        for (Waiter waiter : waiters) {
            waiter.offer(new IOException("the transport is closed"));
        }
        open.clear();
        idle.clear();
    }
}
