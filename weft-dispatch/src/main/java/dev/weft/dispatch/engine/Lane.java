package dev.weft.dispatch.engine;

import dev.weft.client.CallRequest;
import dev.weft.client.CallResult;
import dev.weft.client.DestinationConfig;
import dev.weft.client.DestinationLimits;
import dev.weft.http.Headers;
import dev.weft.client.policy.BreakerPolicy;
import dev.weft.client.policy.RetryAfter;
import dev.weft.client.policy.RetryPolicy;
import dev.weft.dispatch.config.DispatchConfig;
import dev.weft.dispatch.config.EndpointConfig;
import dev.weft.client.Transport;
import dev.weft.observe.TraceParent;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;

/**
 * One endpoint's lane: {@code max_in_flight} virtual threads take deliveries from a queue of at most
 * {@code queue} and POST them. Only this lane waits for its endpoint: a slow or dead endpoint fills its
 * own lane, and what does not fit is parked on the endpoint's wait topic.
 * <p>
 * Outcomes of an attempt: 2xx delivered; 410 disables the endpoint (this and later deliveries go to the
 * dead-letter topic); anything else is a failed attempt, parked on the retry topic of the next delay
 * (with +-10% jitter), or dead-lettered after the last. 429 and 503 with Retry-After hold the whole lane
 * until then (at most {@link #MAX_RETRY_AFTER}) and the retry is not due before it.
 */
public final class Lane implements Outlet {
    public static final Duration MAX_RETRY_AFTER = RetryAfter.DEFAULT_MAX;
    /** An endpoint's answer body is read up to this (and ignored); a larger one fails the attempt. */
    public static final long MAX_ANSWER_BYTES = 1024 * 1024;
    static final double JITTER = 0.1;

    private final EndpointConfig cfg;
    private final DispatchConfig dispatch;
    private final Transport transport;
    private final Parker parking;
    private final Consumer<String> log;
    private final LinkedBlockingQueue<Delivery> queue = new LinkedBlockingQueue<>();
    private final AtomicInteger pending = new AtomicInteger();
    private final AtomicInteger inFlight = new AtomicInteger();
    private final int capacity;
    private final RateLimiter limiter; // null: no rate_limit
    private final List<Thread> workers = new ArrayList<>();
    private volatile boolean running = true;
    private volatile String disabled;
    private volatile long throttledUntil;
    private volatile boolean paused;
    private volatile long throttlePublished;
    /** Where the lane writes a state change of its own (410, Retry-After); set by the dispatcher. */
    private volatile java.util.function.BiConsumer<StateTopic.Field, Object> stateOut = (f, v) -> { };
    private volatile String lastError;

    private final LongAdder delivered = new LongAdder();
    private final LongAdder failed = new LongAdder();
    private final LongAdder parkedRoom = new LongAdder();
    private final LongAdder parkedRetry = new LongAdder();
    private final LongAdder deadLettered = new LongAdder();
    private final LongAdder notJson = new LongAdder();
    private final MeterRegistry registry;
    private final Timer latency;
    private final Map<String, Counter> attempts = new ConcurrentHashMap<>();

    private final AttemptLog attemptLog;

    Lane(EndpointConfig cfg, DispatchConfig dispatch, Parker parking, MeterRegistry registry, Consumer<String> log) {
        this(cfg, dispatch, parking, registry, log, AttemptLog.OFF);
    }

    /** @param attemptLog the access log (one line per attempt) and trace context of attempts */
    Lane(EndpointConfig cfg, DispatchConfig dispatch, Parker parking, MeterRegistry registry, Consumer<String> log,
         AttemptLog attemptLog) {
        this.attemptLog = attemptLog;
        this.cfg = cfg;
        this.dispatch = dispatch;
        // A transport (connection pool, bulkhead) of its own: endpoints on one host do not share limits.
        // No transport retries and no breaker: every attempt is the lane's, counted and parked by it.
        Duration connect = cfg.timeout().compareTo(Duration.ofSeconds(2)) < 0 ? cfg.timeout() : Duration.ofSeconds(2);
        // No TransportListener: the lane's metrics say it per endpoint, and lanes that share a host would
        // register the same per-destination meters twice.
        Transport.Builder tb = Transport.builder().userAgent("weft-dispatch");
        if (cfg.secret() != null) {
            tb.exchangeInterceptor(new SigningInterceptor(cfg.secret()));
        }
        this.transport = tb.exchangeInterceptor(new TraceInterceptor())
                .defaults(new DestinationConfig(DestinationLimits.DEFAULT.withMaxInFlight(cfg.maxInFlight())
                        .withMaxConnections(cfg.maxInFlight()).withMaxWait(cfg.timeout()).withConnectTimeout(connect)
                        .withMaxBodyBytes(MAX_ANSWER_BYTES), RetryPolicy.NONE, null, BreakerPolicy.DISABLED))
                .build();
        this.parking = parking;
        this.registry = registry;
        this.log = log;
        this.capacity = cfg.queue() + cfg.maxInFlight();
        this.limiter = cfg.rateLimit() == null ? null : new RateLimiter(cfg.rateLimit(), System::nanoTime);
        String id = cfg.id();
        this.latency = Timer.builder("weft.dispatch.attempt.duration").tag("endpoint", id)
                .description("time of one delivery attempt").register(registry);
        Gauge.builder("weft.dispatch.lane.queued", queue, LinkedBlockingQueue::size).tag("endpoint", id).register(registry);
        Gauge.builder("weft.dispatch.lane.in_flight", inFlight, AtomicInteger::get).tag("endpoint", id).register(registry);
        Gauge.builder("weft.dispatch.lane.disabled", this, l -> l.disabled == null ? 0 : 1).tag("endpoint", id)
                .register(registry);
        counter("weft.dispatch.delivered", delivered, "deliveries answered 2xx");
        counter("weft.dispatch.parked.room", parkedRoom, "deliveries parked on the wait topic: lane full");
        counter("weft.dispatch.parked.retry", parkedRetry, "failed attempts parked on a retry topic");
        counter("weft.dispatch.dead_lettered", deadLettered, "deliveries written to the dead-letter topic");
        counter("weft.dispatch.not_json", notJson, "records not matched because they are not JSON");
    }

    private void counter(String name, LongAdder a, String description) {
        io.micrometer.core.instrument.FunctionCounter.builder(name, a, LongAdder::sum).tag("endpoint", cfg.id())
                .description(description).register(registry);
    }

    @Override
    public String id() {
        return cfg.id();
    }

    public EndpointConfig config() {
        return cfg;
    }

    void start() {
        for (int i = 0; i < cfg.maxInFlight(); i++) {
            workers.add(Thread.ofVirtual().name("weft-lane-" + cfg.id() + "-" + i).start(this::work));
        }
    }

    /** Queues {@code d} when the lane has room (called by the consumer thread only). */
    @Override
    public boolean offer(Delivery d) {
        if (paused) {
            return false; // parked on the wait topic until resumed
        }
        if (pending.incrementAndGet() > capacity) {
            pending.decrementAndGet();
            return false;
        }
        queue.add(d);
        return true;
    }

    @Override
    public boolean hasRoom() {
        return !paused && pending.get() < capacity;
    }

    /** Null while active; otherwise why the endpoint is disabled. */
    @Override
    public String disabled() {
        return disabled;
    }

    @Override
    public void countParkedRoom() {
        parkedRoom.increment();
    }

    @Override
    public void countDeadLettered() {
        deadLettered.increment();
    }

    @Override
    public void countNotJson() {
        notJson.increment();
    }

    private void work() {
        while (running) {
            Delivery d;
            try {
                d = queue.poll(200, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                return;
            }
            if (d == null) {
                continue;
            }
            inFlight.incrementAndGet();
            try {
                if (d.ticket().revoked()) {
                    continue;
                }
                while (paused && running) {
                    Thread.sleep(100); // taken before the pause: waits in memory (not committed) until resumed
                }
                if (paused) {
                    continue; // stopping while paused: not delivered, not committed; delivered after the restart
                }
                if (disabled != null) {
                    parking.deadLetter(d, "410", disabled, deadLettered::increment);
                    continue;
                }
                long wait = throttledUntil - System.currentTimeMillis();
                if (wait > 0) {
                    Thread.sleep(wait);
                }
                if (limiter != null && !limiter.acquire(() -> !running || d.ticket().revoked())) {
                    continue; // revoked (the new owner delivers it) or stopping (not done: delivered after the restart)
                }
                attempt(d);
            } catch (InterruptedException e) {
                return;
            } catch (RuntimeException e) {
                afterError(d, e);
            } finally {
                inFlight.decrementAndGet();
                pending.decrementAndGet();
            }
        }
    }

    private void attempt(Delivery d) {
        if (!cfg.allowPrivate()) {
            String refused = refusedTarget();
            if (refused != null) {
                lastError = Instant.now() + " target-refused (" + refused + ")";
                AttemptOutcome o = new AttemptOutcome.TargetRefused(refused);
                countAttempt(o);
                failedAttempt(d, o, -1);
                return;
            }
        }
        String contentType = d.header("content-type");
        // webhook-signature (with a secret) and traceparent go on in the transport's exchange interceptors
        Headers h = Headers.of("content-type", contentType != null ? contentType : "application/json",
                "webhook-id", d.webhookId(), "webhook-timestamp", Long.toString(Instant.now().getEpochSecond()));
        // trace context: the record's trace (its own traceparent, or one of its own), a new span per attempt
        TraceParent trace = AttemptLog.traceOf(d, dispatch.group());
        CallRequest request = new CallRequest("POST", cfg.url(), h, d.body(), RetryPolicy.NONE, null)
                .withTag(TraceInterceptor.Context.class, new TraceInterceptor.Context(trace, AttemptLog.stateOf(d)));
        long t0 = System.nanoTime();
        CallResult r = transport.call(request, cfg.timeout());
        long took = System.nanoTime() - t0;
        latency.record(took, TimeUnit.NANOSECONDS);
        AttemptOutcome outcome = AttemptOutcome.of(r);
        attemptLog.attempt(cfg.id(), d, trace, r, took, outcome);
        countAttempt(outcome);
        if (outcome instanceof AttemptOutcome.Delivered) {
            delivered.increment();
            d.ticket().done();
            return;
        }
        lastError = Instant.now() + " " + outcome.label() + (r.message() != null ? " (" + r.message() + ")" : "");
        if (r.status() == 410) {
            String why = "answered 410 Gone at " + Instant.now() + "; POST /-/endpoints/" + cfg.id()
                    + "/enable enables it again";
            if (disabled == null) {
                disabled = why;
                stateOut.accept(StateTopic.Field.DISABLED, why);
                log.accept("endpoint " + cfg.id() + " (" + cfg.url() + ") " + why + "; its deliveries go to "
                        + dispatch.deadLetterTopic());
            }
            parking.deadLetter(d.withAttempts(d.attempts() + 1), outcome.status(), "410 Gone: endpoint disabled",
                    deadLettered::increment);
            return;
        }
        long retryAfter = -1;
        if (r.status() == 429 || r.status() == 503) {
            retryAfter = RetryAfter.parse(r.headers().first("retry-after"), Instant.now(), MAX_RETRY_AFTER)
                    .map(Duration::toMillis).orElse(-1L);
            if (retryAfter > 0) {
                throttledUntil = Math.max(throttledUntil, System.currentTimeMillis() + retryAfter);
                long until = throttledUntil;
                if (until - throttlePublished >= 1000) { // other instances hold too; at most one write a second
                    throttlePublished = until;
                    stateOut.accept(StateTopic.Field.THROTTLED_UNTIL, until);
                }
            }
        }
        failedAttempt(d, outcome, retryAfter);
    }

    private void countAttempt(AttemptOutcome o) {
        attempts.computeIfAbsent(o.label(), l -> Counter.builder("weft.dispatch.attempts").tag("endpoint", cfg.id())
                .tag("outcome", l).description("delivery attempts by outcome").register(registry)).increment();
    }

    /**
     * Never loses a delivery to a bug, nor the worker: an error is a failed attempt (parked or dead-lettered as
     * any); when that throws too, the delivery is dead-lettered with the reason; when even that throws, it is
     * reported stuck (the parker never throws; this is for a bug in between). The worker goes on in every case.
     */
    private void afterError(Delivery d, RuntimeException e) {
        lastError = "internal error: " + e;
        log.accept("ERROR: endpoint " + cfg.id() + ": delivery of " + d.origin() + ": " + e);
        try {
            failedAttempt(d, new AttemptOutcome.InternalError(e), -1);
        } catch (RuntimeException again) {
            String why = "internal error: " + e + "; then, while parking it: " + again;
            log.accept("ERROR: endpoint " + cfg.id() + ": " + why + "; dead-lettered");
            try {
                parking.deadLetter(d, "internal-error", why, deadLettered::increment);
            } catch (RuntimeException third) {
                parking.stuck(d, why + "; then, while dead-lettering it: " + third);
            }
        }
    }

    private void failedAttempt(Delivery d, AttemptOutcome outcome, long retryAfterMillis) {
        String status = outcome.status();
        String reason = outcome.reason();
        failed.increment();
        // saturating: a count read back from a parked record must not wrap around past the retry schedule
        int made = d.attempts() < Integer.MAX_VALUE ? d.attempts() + 1 : Integer.MAX_VALUE;
        Delivery next = d.withAttempts(made);
        if (made >= cfg.maxAttempts()) {
            parking.deadLetter(next, status, reason, deadLettered::increment);
            return;
        }
        Duration delay = cfg.retry().get(made - 1);
        long jittered = (long) (delay.toMillis() * (1 + JITTER * (2 * ThreadLocalRandom.current().nextDouble() - 1)));
        long now = System.currentTimeMillis();
        if (retryAfterMillis > jittered) {
            // A Retry-After past the schedule's delay: on the shared retry topic this record would come due after
            // the records behind it and hold them (every endpoint's) until then. On this endpoint's own wait topic
            // it holds only this endpoint's parked work, which the Retry-After holds anyway (its lane is throttled).
            parking.park(next, dispatch.waitTopic(cfg.id()), ParkedRecord.Reason.FAILED, status, now + retryAfterMillis,
                    parkedRetry::increment);
            return;
        }
        parking.park(next, dispatch.retryTopic(delay), ParkedRecord.Reason.FAILED, status, now + jittered,
                parkedRetry::increment);
    }

    /**
     * The target guard before an attempt (DNS may have changed since the config was read): why the URL's host
     * is refused, or null. A name that does not resolve is left to the transport, which fails it by name.
     */
    private String refusedTarget() {
        try {
            return dev.weft.dispatch.config.TargetGuard.check(cfg.url().getHost());
        } catch (java.net.UnknownHostException e) {
            return null;
        }
    }

    /** This instance's share of the group's partitions, for {@code rate_limit} (see {@link RateLimiter}). */
    void share(double share) {
        if (limiter != null) {
            limiter.share(share);
        }
    }

    /** Where the lane writes its own state changes (410, Retry-After). */
    void stateOut(java.util.function.BiConsumer<StateTopic.Field, Object> out) {
        this.stateOut = out;
    }

    /** Applies a state record (read from the state topic, or set here before it is written). */
    void apply(StateTopic.Field field, Object value) {
        switch (field) {
            case PAUSED -> paused = Boolean.TRUE.equals(value);
            case DISABLED -> disabled = (String) value;
            case THROTTLED_UNTIL -> {
                long until = (Long) value;
                throttledUntil = until;
                throttlePublished = Math.max(throttlePublished, until);
            }
            case RETIRED -> { } // the group's, not a lane's
        }
    }

    /**
     * A delivery of this endpoint can be neither parked nor dead-lettered ({@link Parker#stuck}): the lane is
     * paused here (not on the state topic: another instance may write fine) until an operator resumes it.
     */
    void pauseStuck(String why) {
        paused = true;
        lastError = Instant.now() + " stuck: " + why;
    }

    boolean paused() {
        return paused;
    }

    @Override
    public long throttledUntil() {
        return throttledUntil;
    }

    /** The state shown by {@code /-/endpoints}. */
    EndpointStatus status() {
        long now = System.currentTimeMillis();
        long until = throttledUntil;
        String off = disabled;
        return new EndpointStatus(cfg.id(), cfg.url().toString(), off != null ? EndpointStatus.State.DISABLED
                : paused ? EndpointStatus.State.PAUSED : until > now ? EndpointStatus.State.THROTTLED : EndpointStatus.State.ACTIVE, off,
                until > now ? Instant.ofEpochMilli(until).toString() : null, cfg.match().toString(), inFlight.get(),
                cfg.maxInFlight(), queue.size(), cfg.queue(), delivered.sum(), failed.sum(), parkedRoom.sum(),
                parkedRetry.sum(), deadLettered.sum(), notJson.sum(), lastError);
    }

    long delivered() {
        return delivered.sum();
    }

    long parked() {
        return parkedRoom.sum() + parkedRetry.sum();
    }

    long deadLettered() {
        return deadLettered.sum();
    }

    /** Stops taking deliveries from the queue (those in flight go on). */
    void halt() {
        running = false;
    }

    /** Halts, then waits up to {@code wait} for attempts in flight, interrupts the rest, and closes the transport. */
    void stop(Duration wait) {
        halt();
        long end = System.nanoTime() + wait.toNanos();
        for (Thread t : workers) {
            try {
                long left = end - System.nanoTime();
                if (left <= 0 || !t.join(Duration.ofNanos(left))) {
                    t.interrupt();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        transport.close();
    }
}
