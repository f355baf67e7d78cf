package dev.weft.client;

import dev.weft.core.Deadline;
import dev.weft.client.policy.CircuitBreaker;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The call engine: blocking HTTP calls (HTTP/1.1, and HTTP/2 to https destinations that choose it by ALPN) meant
 * to be made from virtual threads, one thread per call.
 *
 * <p>Each call runs under a {@link Deadline} and its destination's {@link DestinationConfig}: circuit
 * breaker, bulkhead (max in flight), pooled connections, retry with backoff and hedging, as the links of
 * {@link CallPath}. A call never throws for a network or HTTP failure, nor for an interceptor that threw; the
 * {@link CallResult} names what happened. Your own steps go in as {@link CallInterceptor}s, and what happens is reported to a
 * {@link TransportListener} (for metrics). Closing the transport closes its connections, cancels the calls still out and stops its
 * deadline sweeper.
 *
 * <pre>{@code
 * try (Transport t = Transport.builder().build()) {
 *     CallResult r = t.call(CallRequest.get("http://127.0.0.1:9001/b"), Deadline.in(Duration.ofSeconds(1)));
 * }
 * }</pre>
 */
public final class Transport implements AutoCloseable {
    /** At most this many distinct destinations are kept (each has a pool); more fail fast. */
    public static final int DEFAULT_MAX_DESTINATIONS = 1024;

    private final DestinationConfig defaults;
    private final Map<Destination, DestinationConfig> configured;
    private final TransportListener listener;
    /** The request interceptors, in order (empty: a call goes straight to its path). */
    private final List<CallInterceptor> interceptors;
    /** The links of every call's path ({@link CallPath#links}: with the exchange interceptors' when there are any). */
    private final List<Interceptor> links;
    private final String userAgent;
    private final int maxDestinations;
    private final ConcurrentHashMap<Destination, DestinationRuntime> runtimes = new ConcurrentHashMap<>();
    private final ReentrantLock createLock = new ReentrantLock();
    private volatile boolean closed;
    private volatile boolean detached;
    /** Aborts this transport's exchanges at their deadlines (one sweeper thread, parked while no call is out). */
    private final Watchdog watchdog = new Watchdog("weft-deadline-sweeper");
    /** Outbound connects that failed for lack of file descriptors: counted, logged once a second. */
    private final DescriptorShortage shortage;

    private Transport(Builder b) {
        this.defaults = b.defaults;
        this.configured = Map.copyOf(b.configured);
        this.listener = b.listener;
        this.interceptors = List.copyOf(b.interceptors);
        this.links = CallPath.links(List.copyOf(b.exchangeInterceptors));
        this.userAgent = b.userAgent;
        this.maxDestinations = b.maxDestinations;
        this.shortage = new DescriptorShortage(b.log);
        for (Map.Entry<Destination, DestinationConfig> e : configured.entrySet()) {
            if (e.getValue().limits().minIdle() > 0) { // min_idle: the warm pool opens at start
                DestinationRuntime rt = runtime(e.getKey());
                if (rt != null) {
                    rt.warm();
                }
            }
        }
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Makes a call with {@code timeout} as its whole budget. */
    public CallResult call(CallRequest request, Duration timeout) {
        return call(request, Deadline.in(timeout));
    }

    /** Makes a call under {@code deadline}. Blocks the calling thread; call it from a virtual thread. */
    public CallResult call(CallRequest request, Deadline deadline) {
        return call(request, deadline, null);
    }

    /**
     * Makes a call of at most {@code budget}, part of a request that must end by {@code deadline}. Time spent
     * waiting for a pooled connection (every connection leased, or being opened for others) is the caller's
     * own queueing, not the destination's: it does not count against {@code budget}, only against
     * {@code deadline}. A call that waited 600 ms for a connection still has its whole budget for the exchange,
     * within {@code deadline}. Null {@code budget}: the call may take until {@code deadline}.
     */
    public CallResult call(CallRequest request, Deadline deadline, Duration budget) {
        if (interceptors.isEmpty()) {
            return callPath(request, deadline, budget);
        }
        return InterceptorChains.RequestChain.start(this, interceptors, request, deadline, budget);
    }

    /** A call after the request interceptors: its destination's runtime, and the links of its path. */
    CallResult callPath(CallRequest request, Deadline deadline, Duration budget) {
        long t0 = System.nanoTime();
        Deadline own = budget == null ? deadline : deadline.atMost(budget);
        Destination destination = request.destination();
        DestinationRuntime rt = runtime(destination);
        if (rt == null) {
            return CallResult.failed(destination, CallFailure.of(Reason.IO, closed ? "the transport is closed"
                    : "too many destinations (max " + maxDestinations + ")"));
        }
        return new Interceptor.Chain(links, new Interceptor.Call(request, own, deadline, rt, t0)).proceed();
    }

    private DestinationRuntime runtime(Destination d) {
        DestinationRuntime rt = runtimes.get(d);
        if (rt != null || closed) {
            return rt;
        }
        createLock.lock();
        try {
            rt = runtimes.get(d);
            if (rt == null && !closed) {
                if (runtimes.size() >= maxDestinations) {
                    return null;
                }
                rt = new DestinationRuntime(d, configured.getOrDefault(d, defaults),
                        detached ? TransportListener.NONE : listener, userAgent, watchdog, shortage);
                runtimes.put(d, rt);
            }
            return rt;
        } finally {
            createLock.unlock();
        }
    }

    /** Calls in flight to {@code d} now. */
    public int inFlight(Destination d) {
        DestinationRuntime rt = runtimes.get(d);
        return rt == null ? 0 : rt.inFlight();
    }

    /**
     * HTTP/2 reader threads (one a connection) running now in this JVM, every transport's: a transport's readers
     * end with its connections, which a leak check can wait on (they are virtual threads, which
     * {@code Thread.getAllStackTraces()} does not list, and an in-process JSON thread dump of many virtual threads
     * crashed JDK 25.0.3 in {@code ThreadSnapshot}).
     */
    public static int http2ReadersRunning() {
        return Http2Connection.readersRunning();
    }

    /** A snapshot of {@code d}'s connection pool ({@link PoolState#EMPTY} when no call went there yet). */
    public PoolState poolState(Destination d) {
        DestinationRuntime rt = runtimes.get(d);
        return rt == null ? PoolState.EMPTY : rt.pool().state();
    }

    /** {@code d}'s runtime, or null when no call went there yet (for this package's tests). */
    DestinationRuntime runtimeOf(Destination d) {
        return runtimes.get(d);
    }

    /** The state of {@code d}'s circuit breaker (closed when no call went there yet). */
    public CircuitBreaker.State breakerState(Destination d) {
        DestinationRuntime rt = runtimes.get(d);
        return rt == null ? CircuitBreaker.State.CLOSED : rt.breakerState();
    }

    /**
     * Stops reporting to this transport's {@link TransportListener}: each destination's listener is told
     * ({@link TransportListener.DestinationListener#detached}, which removes its meters) and destinations used
     * from now on report nothing (a transport that is being replaced, so that its successor's meters are the ones
     * published).
     */
    public void detachListener() {
        detached = true;
        createLock.lock();
        try {
            runtimes.values().forEach(DestinationRuntime::detachListener);
        } finally {
            createLock.unlock();
        }
    }

    @Override
    public void close() {
        closed = true;
        watchdog.close(); // calls still out are cancelled, and the sweeper stops
        createLock.lock();
        try {
            runtimes.values().forEach(DestinationRuntime::close);
            runtimes.clear();
        } finally {
            createLock.unlock();
        }
    }

    public static final class Builder {
        private DestinationConfig defaults = DestinationConfig.DEFAULT;
        private final Map<Destination, DestinationConfig> configured = new HashMap<>();
        private TransportListener listener = TransportListener.NONE;
        private final List<CallInterceptor> interceptors = new ArrayList<>();
        private final List<CallInterceptor> exchangeInterceptors = new ArrayList<>();
        private String userAgent = "weft";
        private int maxDestinations = DEFAULT_MAX_DESTINATIONS;
        private java.util.function.Consumer<String> log = line -> System.getLogger("weft.client")
                .log(System.Logger.Level.WARNING, line);

        /** The config of every destination not named with {@link #destination}. */
        public Builder defaults(DestinationConfig c) {
            this.defaults = c;
            return this;
        }

        /** The config of one destination, given as {@code scheme://host:port}. */
        public Builder destination(String url, DestinationConfig c) {
            configured.put(Destination.of(url), c);
            return this;
        }

        /**
         * Where the transport reports its calls, attempts and destinations' state, for metrics (default
         * {@link TransportListener#NONE}: nothing). weft-observe's {@code ClientMeters} publishes them to a
         * Micrometer registry.
         */
        public Builder listener(TransportListener l) {
            this.listener = java.util.Objects.requireNonNull(l, "listener");
            return this;
        }

        /**
         * Adds a request interceptor: it runs once per call, on the caller's thread, before the destination is
         * looked up, after those added before it (see {@link CallInterceptor}).
         */
        public Builder interceptor(CallInterceptor i) {
            interceptors.add(java.util.Objects.requireNonNull(i, "interceptor"));
            return this;
        }

        /**
         * Adds an exchange interceptor: it runs once per try (first, retry, each hedged copy) on the try's thread,
         * before the try takes the destination's permits, after those added before it; it may change headers
         * and body only (see {@link CallInterceptor}).
         */
        public Builder exchangeInterceptor(CallInterceptor i) {
            exchangeInterceptors.add(java.util.Objects.requireNonNull(i, "interceptor"));
            return this;
        }

        /**
         * The {@code User-Agent} sent when a call has none (default {@code weft}).
         *
         * @throws IllegalArgumentException when it could not go on the wire as a field value (CR, LF or NUL)
         */
        public Builder userAgent(String ua) {
            dev.weft.http.Http1Writer.checkField("User-Agent", java.util.Objects.requireNonNull(ua, "userAgent"));
            this.userAgent = ua;
            return this;
        }

        public Builder maxDestinations(int n) {
            if (n < 1) {
                throw new IllegalArgumentException("max destinations must be positive");
            }
            this.maxDestinations = n;
            return this;
        }

        /**
         * Where the transport's own warnings go (one line each; today: connects failing for lack of file
         * descriptors, at most once a second). Default: the {@code weft.client} logger at WARNING.
         */
        public Builder log(java.util.function.Consumer<String> log) {
            this.log = java.util.Objects.requireNonNull(log);
            return this;
        }

        public Transport build() {
            return new Transport(this);
        }
    }
}
