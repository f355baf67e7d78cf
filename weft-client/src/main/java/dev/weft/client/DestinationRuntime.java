package dev.weft.client;

import dev.weft.client.policy.CircuitBreaker;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;

/** The live state of one destination: bulkhead, breaker, connection pool and meters. */
final class DestinationRuntime implements AutoCloseable {
    private final Destination destination;
    private final DestinationConfig config;
    private final String hostHeader;
    private final String userAgent;
    private final Semaphore bulkhead;
    private final CircuitBreaker breaker;
    private final ConnectionPool pool;
    private final MeterRegistry registry;
    private final Map<String, Counter> outcomes = new ConcurrentHashMap<>();
    private final Map<Attempt.Kind, Counter> attempts = new ConcurrentHashMap<>();
    private final Timer latency;
    private final List<Meter> meters = new CopyOnWriteArrayList<>();

    DestinationRuntime(Destination destination, DestinationConfig config, MeterRegistry registry, String userAgent) {
        this.destination = destination;
        this.config = config;
        this.registry = registry;
        this.hostHeader = destination.authority();
        this.userAgent = userAgent;
        DestinationLimits limits = config.limits();
        this.bulkhead = new Semaphore(limits.maxInFlight());
        this.breaker = new CircuitBreaker(config.breaker());
        this.pool = new ConnectionPool(destination, limits);
        String key = destination.key();
        meters.add(Gauge.builder("weft.destination.in_flight", bulkhead, s -> limits.maxInFlight() - s.availablePermits())
                .description("calls in flight to the destination").tag("destination", key).register(registry));
        meters.add(Gauge.builder("weft.destination.max_in_flight", limits, DestinationLimits::maxInFlight)
                .description("the destination's in-flight limit").tag("destination", key).register(registry));
        meters.add(Gauge.builder("weft.destination.breaker_open", breaker,
                        b -> b.state() == CircuitBreaker.State.OPEN ? 1 : 0)
                .description("1 while the destination's circuit breaker is open").tag("destination", key)
                .register(registry));
        this.latency = Timer.builder("weft.call.duration")
                .description("time from a call's start to its result, retries and hedges included")
                .tag("destination", key).publishPercentileHistogram().register(registry);
        meters.add(latency);
    }

    Destination destination() {
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

    Semaphore bulkhead() {
        return bulkhead;
    }

    CircuitBreaker breaker() {
        return breaker;
    }

    ConnectionPool pool() {
        return pool;
    }

    void recordCall(String outcome, long nanos) {
        outcomes.computeIfAbsent(outcome, o -> track(Counter.builder("weft.calls")
                .description("calls by outcome: ok, status-NNN, timeout-connect, ...")
                .tag("destination", destination.key()).tag("outcome", o).register(registry))).increment();
        latency.record(nanos, java.util.concurrent.TimeUnit.NANOSECONDS);
    }

    void recordAttempt(Attempt.Kind kind) {
        attempts.computeIfAbsent(kind, k -> track(Counter.builder("weft.attempts")
                .description("attempts by kind: first, retry, hedge")
                .tag("destination", destination.key()).tag("kind", k.name().toLowerCase(java.util.Locale.ROOT))
                .register(registry))).increment();
    }

    private <M extends Meter> M track(M m) {
        meters.add(m);
        return m;
    }

    /** Removes this destination's meters from the registry (a replaced transport must not shadow its successor). */
    void detachMeters() {
        meters.forEach(registry::remove);
        meters.clear();
    }

    int inFlight() {
        return config.limits().maxInFlight() - bulkhead.availablePermits();
    }

    @Override
    public void close() {
        pool.close();
    }
}
