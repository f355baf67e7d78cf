package dev.weft.core.call;

import dev.weft.core.Deadline;
import dev.weft.core.Durations;
import dev.weft.core.policy.CircuitBreaker;
import dev.weft.core.policy.HedgePolicy;
import dev.weft.core.policy.RetryPolicy;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The call engine: blocking HTTP/1.1 calls meant to be made from virtual threads, one thread per call.
 *
 * <p>Each call runs under a {@link Deadline} and its destination's {@link DestinationConfig}: circuit
 * breaker, bulkhead (max in flight), pooled connections, retry with backoff and hedging. A call never
 * throws for a network or HTTP failure; the {@link CallResult} names what happened.
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
    private final MeterRegistry registry;
    private final String userAgent;
    private final int maxDestinations;
    private final ConcurrentHashMap<Destination, DestinationRuntime> runtimes = new ConcurrentHashMap<>();
    private final ReentrantLock createLock = new ReentrantLock();
    private volatile boolean closed;
    private volatile boolean detached;

    private Transport(Builder b) {
        this.defaults = b.defaults;
        this.configured = Map.copyOf(b.configured);
        this.registry = b.registry;
        this.userAgent = b.userAgent;
        this.maxDestinations = b.maxDestinations;
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
        long t0 = System.nanoTime();
        Destination destination = request.destination();
        DestinationRuntime rt = runtime(destination);
        if (rt == null) {
            return CallResult.failed(destination, CallFailure.of(Reason.IO, closed ? "the transport is closed"
                    : "too many destinations (max " + maxDestinations + ")"));
        }
        DestinationConfig cfg = rt.config();
        RetryPolicy retry = request.retry() != null ? request.retry() : cfg.retry();
        int maxAttempts = retry.allows(request.method()) ? retry.attempts() : 1;
        HedgePolicy hedge = request.hedge() != null ? request.hedge() : cfg.hedge();
        if (hedge != null && !hedge.allows(request.method())) {
            hedge = null;
        }

        List<Attempt> attempts = new ArrayList<>(2);
        CallResult last = null;
        String stopNote = null;
        for (int n = 1; n <= maxAttempts; n++) {
            if (n > 1) {
                if (!retryable(last, retry)) {
                    break;
                }
                Duration wait = retry.backoffBefore(n);
                Duration retryAfter = retryAfter(last);
                if (retryAfter != null && retryAfter.compareTo(wait) > 0) {
                    wait = retryAfter;
                }
                if (wait.toNanos() >= deadline.remainingNanos()) {
                    stopNote = "no retry: waiting " + Durations.format(wait) + " would pass the deadline";
                    break;
                }
                if (!sleep(wait)) {
                    stopNote = "interrupted";
                    break;
                }
            }
            Attempt.Kind kind = n == 1 ? Attempt.Kind.FIRST : Attempt.Kind.RETRY;
            last = hedge == null
                    ? single(rt, request, deadline, kind, t0, attempts)
                    : hedged(rt, request, deadline, kind, hedge, retry, t0, attempts);
            if (last.ok()) {
                break;
            }
        }
        long total = System.nanoTime() - t0;
        CallFailure failure = last.failure();
        if (failure != null) {
            if (stopNote != null) {
                failure = failure.withNote("; " + stopNote);
            }
            if (attempts.size() > 1) {
                failure = failure.withNote(" (after " + attempts.size() + " attempts)");
            }
        }
        CallResult result = last.asCall(total, failure, attempts);
        rt.recordCall(result.outcome(), total);
        return result;
    }

    private CallResult single(DestinationRuntime rt, CallRequest request, Deadline deadline, Attempt.Kind kind, long t0,
                         List<Attempt> attempts) {
        long start = System.nanoTime();
        CallResult t = attempt(rt, new Exchange(request), deadline, kind);
        attempts.add(new Attempt(attempts.size() + 1, kind, t.status(), t.reason(), start - t0,
                System.nanoTime() - start, true));
        return t;
    }

    /** A copy of a hedged attempt that finished. */
    private record Done(int copy, CallResult result) {
    }

    /**
     * Runs copies of one attempt on virtual threads: the first starts now, each next one after the
     * hedge delay or as soon as every running copy has failed. The first copy that succeeds (or gets an
     * answer that a retry would not improve) wins; the others are cancelled, which closes their
     * connections so they are never reused.
     */
    private CallResult hedged(DestinationRuntime rt, CallRequest request, Deadline deadline, Attempt.Kind firstKind,
                         HedgePolicy hedge, RetryPolicy retry, long t0, List<Attempt> attempts) {
        int copies = hedge.copies();
        BlockingQueue<Done> done = new ArrayBlockingQueue<>(copies);
        Exchange[] exchanges = new Exchange[copies];
        long[] starts = new long[copies];
        Done[] results = new Done[copies];
        int launched = 0;
        int finished = 0;
        Done lastFailure = null;
        long nextLaunch = System.nanoTime();
        try {
            while (true) {
                if (launched < copies && System.nanoTime() - nextLaunch >= 0 && !deadline.expired()) {
                    int copy = launched++;
                    Attempt.Kind kind = copy == 0 ? firstKind : Attempt.Kind.HEDGE;
                    Exchange ex = new Exchange(request);
                    exchanges[copy] = ex;
                    starts[copy] = System.nanoTime();
                    Thread.ofVirtual().start(() -> done.add(new Done(copy, attempt(rt, ex, deadline, kind))));
                    nextLaunch = System.nanoTime() + hedge.delay().toNanos();
                }
                boolean more = launched < copies && !deadline.expired();
                long waitNanos = more
                        ? Math.max(0, Math.min(nextLaunch - System.nanoTime(), deadline.remainingNanos()))
                        // every copy enforces the deadline itself; the margin covers the abort and hand-off
                        : Math.max(0, deadline.remainingNanos()) + TimeUnit.SECONDS.toNanos(5);
                Done d = done.poll(waitNanos, TimeUnit.NANOSECONDS);
                if (d == null) {
                    if (more) {
                        continue;
                    }
                    cancelAll(exchanges);
                    CallResult t = lastFailure != null ? lastFailure.result : CallResult.failed(rt.destination(),
                            CallFailure.of(Reason.DEADLINE, "no copy of the hedged call finished by the deadline"));
                    return record(attempts, exchanges, starts, results, lastFailure == null ? -1 : lastFailure.copy,
                            t0, t, firstKind);
                }
                finished++;
                results[d.copy] = d;
                CallResult o = d.result;
                if (o.ok() || (o.status() > 0 && !retry.retryStatuses().contains(o.status()))) {
                    cancelAll(exchanges);
                    return record(attempts, exchanges, starts, results, d.copy, t0, d.result, firstKind);
                }
                lastFailure = d;
                if (finished == launched) {
                    if (launched == copies || deadline.expired()) {
                        return record(attempts, exchanges, starts, results, d.copy, t0, d.result, firstKind);
                    }
                    nextLaunch = System.nanoTime(); // every running copy failed fast: hedge at once
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            cancelAll(exchanges);
            return record(attempts, exchanges, starts, results, -1, t0,
                    CallResult.failed(rt.destination(), CallFailure.of(Reason.CANCELLED, "interrupted")), firstKind);
        }
    }

    private static void cancelAll(Exchange[] exchanges) {
        for (Exchange e : exchanges) {
            if (e != null) {
                e.cancel();
            }
        }
    }

    /** Adds one {@link Attempt} per launched copy; copies still running at this point were cancelled. */
    private static CallResult record(List<Attempt> attempts, Exchange[] exchanges, long[] starts, Done[] results,
                                     int winner, long t0, CallResult result, Attempt.Kind firstKind) {
        long now = System.nanoTime();
        for (int i = 0; i < exchanges.length; i++) {
            if (exchanges[i] == null) {
                continue;
            }
            Attempt.Kind kind = i == 0 ? firstKind : Attempt.Kind.HEDGE;
            CallResult o = results[i] != null ? results[i].result : null;
            attempts.add(new Attempt(attempts.size() + 1, kind, o == null ? 0 : o.status(),
                    o == null ? Reason.CANCELLED : o.reason(), starts[i] - t0, now - starts[i], i == winner));
        }
        return result;
    }

    /** Takes a permit from the breaker and the bulkhead, runs the exchange, reports to the breaker. */
    private CallResult attempt(DestinationRuntime rt, Exchange exchange, Deadline deadline, Attempt.Kind kind) {
        rt.recordAttempt(kind);
        CircuitBreaker breaker = rt.breaker();
        if (!breaker.tryAcquire()) {
            return CallResult.failed(rt.destination(), CallFailure.of(Reason.CIRCUIT_OPEN,
                    "the circuit breaker of " + rt.destination().key() + " is open"));
        }
        long waitStart = System.nanoTime();
        long maxWait = Math.min(rt.config().limits().maxWait().toNanos(), deadline.remainingNanos());
        boolean permit;
        try {
            permit = maxWait <= 0 ? rt.bulkhead().tryAcquire()
                    : rt.bulkhead().tryAcquire(maxWait, TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            breaker.onIgnored();
            return CallResult.failed(rt.destination(), CallFailure.of(Reason.CANCELLED, "interrupted"));
        }
        long waited = System.nanoTime() - waitStart;
        if (!permit) {
            breaker.onIgnored();
            return CallResult.failed(rt.destination(), CallFailure.of(Reason.BULKHEAD_FULL,
                    rt.config().limits().maxInFlight() + " calls already in flight to " + rt.destination().key()
                            + " (max_in_flight); waited " + Durations.format(Duration.ofNanos(waited))))
                    .withWait(waited);
        }
        CallResult o;
        try {
            o = exchange.run(rt, deadline);
        } finally {
            rt.bulkhead().release();
        }
        if (o.ok() || (o.reason() == Reason.STATUS && o.status() < 500)) {
            breaker.onSuccess();
        } else if (o.reason().countsAgainstDestination() || o.reason() == Reason.STATUS) {
            breaker.onFailure();
        } else {
            breaker.onIgnored();
        }
        return o.withWait(waited);
    }

    private static boolean retryable(CallResult o, RetryPolicy retry) {
        if (o.ok()) {
            return false;
        }
        return switch (o.reason()) {
            // Nothing reached the application on these: safe to try again.
            case REFUSED, TIMEOUT_CONNECT, UNKNOWN_HOST -> true;
            // The connection died before a whole answer: a retry may help (idempotent methods only).
            case RESET, PROTOCOL, IO -> true;
            case STATUS -> retry.retryStatuses().contains(o.status());
            default -> false;
        };
    }

    /** The Retry-After of a 429 or 503, in seconds or as an HTTP date; null when absent or malformed. */
    static Duration retryAfter(CallResult o) {
        if (o.status() != 429 && o.status() != 503) {
            return null;
        }
        String v = o.headers().first("Retry-After");
        if (v == null) {
            return null;
        }
        v = v.strip();
        try {
            long seconds = Long.parseLong(v);
            return seconds < 0 ? null : Duration.ofSeconds(Math.min(seconds, 86_400));
        } catch (NumberFormatException notSeconds) {
            try {
                ZonedDateTime at = ZonedDateTime.parse(v, DateTimeFormatter.RFC_1123_DATE_TIME);
                Duration d = Duration.between(ZonedDateTime.now(at.getZone()), at);
                return d.isNegative() ? Duration.ZERO : d;
            } catch (RuntimeException malformed) {
                return null;
            }
        }
    }

    private static boolean sleep(Duration d) {
        try {
            Thread.sleep(d);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
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
                        detached ? new SimpleMeterRegistry() : registry, userAgent);
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

    /** The state of {@code d}'s circuit breaker (closed when no call went there yet). */
    public CircuitBreaker.State breakerState(Destination d) {
        DestinationRuntime rt = runtimes.get(d);
        return rt == null ? CircuitBreaker.State.CLOSED : rt.breaker().state();
    }

    /**
     * Removes every meter of this transport from its registry, and stops registering new ones (a transport
     * that is being replaced, so that its successor's meters are the ones published).
     */
    public void detachMeters() {
        detached = true;
        createLock.lock();
        try {
            runtimes.values().forEach(DestinationRuntime::detachMeters);
        } finally {
            createLock.unlock();
        }
    }

    @Override
    public void close() {
        closed = true;
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
        private MeterRegistry registry = new SimpleMeterRegistry();
        private String userAgent = "weft";
        private int maxDestinations = DEFAULT_MAX_DESTINATIONS;

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

        public Builder meterRegistry(MeterRegistry r) {
            this.registry = r;
            return this;
        }

        public Builder userAgent(String ua) {
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

        public Transport build() {
            return new Transport(this);
        }
    }
}
