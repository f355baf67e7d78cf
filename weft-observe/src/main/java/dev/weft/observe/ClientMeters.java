package dev.weft.observe;

import dev.weft.client.Attempt;
import dev.weft.client.CallResult;
import dev.weft.client.DestinationState;
import dev.weft.client.TransportListener;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * The client's metrics in a Micrometer registry: a {@link TransportListener} that publishes, per destination
 * (tag {@code destination}), {@code weft.calls} by outcome, {@code weft.call.duration}, {@code weft.attempts} by
 * kind, {@code weft.destination.starved} by cause, and gauges and function counters that sample the destination's
 * {@link DestinationState} (in flight, breaker, connections, connects). The names, tags and descriptions are part
 * of the compatibility contract ({@code /-/metrics}, held by the gateway's golden test).
 *
 * <pre>{@code
 * Transport t = Transport.builder().listener(new ClientMeters(registry)).build();
 * }</pre>
 */
public final class ClientMeters implements TransportListener {
    private static final String STARVED = "timeouts the breaker did not count because the gateway starved the call:"
            + " by its pool (more than half the time waiting for a connection) or by the scheduler (a ready thread"
            + " waited an eighth of the time, and at least 100 ms, for a CPU)";

    private final MeterRegistry registry;

    public ClientMeters(MeterRegistry registry) {
        this.registry = Objects.requireNonNull(registry, "registry");
    }

    @Override
    public DestinationListener destinationOpened(DestinationState state) {
        return new Destination(registry, state);
    }

    /** The meters of one destination; removed from the registry when the transport detaches. */
    private static final class Destination implements DestinationListener {
        private final MeterRegistry registry;
        private final String key;
        private final Map<String, Counter> outcomes = new ConcurrentHashMap<>();
        private final Map<Attempt.Kind, Counter> attempts = new ConcurrentHashMap<>();
        private final Map<Starved, Counter> starved = new EnumMap<>(Starved.class);
        private final Timer latency;
        private final List<Meter> meters = new CopyOnWriteArrayList<>();

        Destination(MeterRegistry registry, DestinationState s) {
            this.registry = registry;
            this.key = s.destination().key();
            meters.add(Gauge.builder("weft.destination.in_flight", s, DestinationState::inFlight)
                    .description("calls in flight to the destination").tag("destination", key).register(registry));
            meters.add(Gauge.builder("weft.destination.max_in_flight", s, DestinationState::maxInFlight)
                    .description("the destination's in-flight limit").tag("destination", key).register(registry));
            meters.add(Gauge.builder("weft.destination.breaker_open", s, d -> d.breakerOpen() ? 1 : 0)
                    .description("1 while the destination's circuit breaker is open").tag("destination", key)
                    .register(registry));
            meters.add(FunctionCounter.builder("weft.destination.breaker_openings", s, DestinationState::breakerOpenings)
                    .description("times the destination's circuit breaker opened").tag("destination", key)
                    .register(registry));
            meters.add(Gauge.builder("weft.destination.connecting", s, DestinationState::connecting)
                    .description("connections being opened to the destination now (TCP connect and TLS handshake;"
                            + " at most max_connecting)").tag("destination", key).register(registry));
            meters.add(Gauge.builder("weft.destination.connect_waiting", s, DestinationState::connectWaiting)
                    .description("calls waiting for a pooled or new connection to the destination")
                    .tag("destination", key).register(registry));
            meters.add(Gauge.builder("weft.destination.connections", s, DestinationState::connections)
                    .description("connections open to the destination (HTTP/1.1 leased and idle, and HTTP/2)")
                    .tag("destination", key).register(registry));
            meters.add(Gauge.builder("weft.destination.streams", s, DestinationState::streams)
                    .description("HTTP/2 streams in flight to the destination (at most max_streams per connection)")
                    .tag("destination", key).register(registry));
            meters.add(FunctionCounter.builder("weft.destination.connects", s, DestinationState::connectsOk)
                    .description("connections opened (TCP and TLS) by result").tag("destination", key)
                    .tag("result", "ok").register(registry));
            meters.add(FunctionCounter.builder("weft.destination.connects", s, DestinationState::connectsFailed)
                    .description("connections opened (TCP and TLS) by result").tag("destination", key)
                    .tag("result", "failed").register(registry));
            for (Starved by : Starved.values()) {
                starved.put(by, track(Counter.builder("weft.destination.starved").description(STARVED)
                        .tag("destination", key).tag("by", by.name().toLowerCase(Locale.ROOT)).register(registry)));
            }
            this.latency = track(Timer.builder("weft.call.duration")
                    .description("time from a call's start to its result, retries and hedges included")
                    .tag("destination", key).publishPercentileHistogram().register(registry));
        }

        @Override
        public void callEnded(CallResult r) {
            outcomes.computeIfAbsent(r.outcome(), o -> track(Counter.builder("weft.calls")
                    .description("calls by outcome: ok, status-NNN, timeout-connect, ...")
                    .tag("destination", key).tag("outcome", o).register(registry))).increment();
            latency.record(r.timings().totalNanos(), TimeUnit.NANOSECONDS);
        }

        @Override
        public void attemptStarted(Attempt.Kind kind) {
            attempts.computeIfAbsent(kind, k -> track(Counter.builder("weft.attempts")
                    .description("attempts by kind: first, retry, hedge")
                    .tag("destination", key).tag("kind", k.name().toLowerCase(Locale.ROOT))
                    .register(registry))).increment();
        }

        @Override
        public void starved(Starved by) {
            starved.get(by).increment();
        }

        @Override
        public void detached() {
            meters.forEach(registry::remove);
            meters.clear();
        }

        private <M extends Meter> M track(M m) {
            meters.add(m);
            return m;
        }
    }
}
