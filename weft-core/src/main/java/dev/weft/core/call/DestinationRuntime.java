package dev.weft.core.call;

import dev.weft.core.policy.CircuitBreaker;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import org.apache.hc.client5.http.config.ConnectionConfig;
import org.apache.hc.client5.http.impl.ChainElement;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClients;
import org.apache.hc.client5.http.impl.io.ManagedHttpClientConnectionFactory;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManager;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManagerBuilder;
import org.apache.hc.core5.http.HttpHost;
import org.apache.hc.core5.http.config.Http1Config;
import org.apache.hc.core5.io.CloseMode;
import org.apache.hc.core5.pool.PoolConcurrencyPolicy;
import org.apache.hc.core5.pool.PoolReusePolicy;
import org.apache.hc.core5.util.TimeValue;
import org.apache.hc.core5.util.Timeout;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;

/** The live state of one destination: bulkhead, breaker, connection pool and meters. */
final class DestinationRuntime implements AutoCloseable {
    /** Size of each of a pooled connection's read and write buffers. */
    static final int CONNECTION_BUFFER_BYTES = 8 * 1024;

    private final Destination destination;
    private final DestinationConfig config;
    private final HttpHost host;
    private final Semaphore bulkhead;
    private final CircuitBreaker breaker;
    private final PoolingHttpClientConnectionManager pool;
    private final CloseableHttpClient client;
    private final MeterRegistry registry;
    private final Map<String, Counter> outcomes = new ConcurrentHashMap<>();
    private final Map<Attempt.Kind, Counter> attempts = new ConcurrentHashMap<>();
    private final Timer latency;
    private final List<Meter> meters = new CopyOnWriteArrayList<>();

    DestinationRuntime(Destination destination, DestinationConfig config, MeterRegistry registry, String userAgent) {
        this.destination = destination;
        this.config = config;
        this.registry = registry;
        this.host = new HttpHost(destination.scheme(), destination.host(), destination.port());
        DestinationLimits limits = config.limits();
        this.bulkhead = new Semaphore(limits.maxInFlight());
        this.breaker = new CircuitBreaker(config.breaker());
        this.pool = PoolingHttpClientConnectionManagerBuilder.create()
                .setMaxConnTotal(limits.maxConnections())
                .setMaxConnPerRoute(limits.maxConnections())
                // LAX: no pool-wide lock on lease and release (with STRICT, 2,000 threads contending for it
                // raised p99 from ~0.4 s to 1.4 s in `weft lab clients` at 0 ms). LAX enforces its maximum
                // loosely; the bulkhead in front of it already caps calls in flight at max_in_flight.
                .setPoolConcurrencyPolicy(PoolConcurrencyPolicy.LAX)
                .setConnPoolPolicy(PoolReusePolicy.LIFO)
                // Apache's default is three 32 KiB buffers per connection: 13,500 pooled connections held
                // 1.3 GB of heap in `weft lab system-a` at 1 s and the gateway spent its time in GC.
                // Heads and small bodies fit in 8 KiB; larger bodies stream through it.
                .setConnectionFactory(ManagedHttpClientConnectionFactory.builder()
                        .http1Config(Http1Config.custom().setBufferSize(CONNECTION_BUFFER_BYTES)
                                .setChunkSizeHint(CONNECTION_BUFFER_BYTES).build())
                        .build())
                .setDefaultConnectionConfig(ConnectionConfig.custom()
                        .setConnectTimeout(Timeout.of(limits.connectTimeout()))
                        .setIdleTimeout(Timeout.of(limits.idleTimeout()))
                        .setTimeToLive(TimeValue.NEG_ONE_MILLISECOND)
                        .setValidateAfterInactivity(TimeValue.NEG_ONE_MILLISECOND)
                        .build())
                .build();
        this.client = HttpClients.custom()
                .setConnectionManager(pool)
                .setUserAgent(userAgent)
                .disableAutomaticRetries()   // retries are ours: bounded by the deadline
                .disableRedirectHandling()
                .disableCookieManagement()
                .disableAuthCaching()
                .disableContentCompression()
                .addExecInterceptorBefore(ChainElement.MAIN_TRANSPORT.name(), "weft-connected",
                        (request, scope, chain) -> {
                            Object ex = scope.clientContext.getAttribute(Exchange.ATTRIBUTE);
                            if (ex instanceof Exchange e) {
                                e.connected();
                            }
                            return chain.proceed(request, scope);
                        })
                .build();
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

    HttpHost host() {
        return host;
    }

    Semaphore bulkhead() {
        return bulkhead;
    }

    CircuitBreaker breaker() {
        return breaker;
    }

    CloseableHttpClient client() {
        return client;
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
        client.close(CloseMode.IMMEDIATE);
    }
}
