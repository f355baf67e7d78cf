package dev.weft.gateway.server;

import dev.weft.os.SchedulerLag;
import dev.weft.doctor.JvmMeters;
import dev.weft.gateway.config.GatewayConfig;
import dev.weft.server.ServerRequest;
import dev.weft.server.admission.AdaptiveAdmission;
import dev.weft.server.admission.Admission;
import dev.weft.server.admission.FixedAdmission;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * The gateway's admission and its metrics (the server's {@code Door} asks it about each request): {@code admission:}
 * (an adaptive limit per route under {@code limits.max_concurrent}), or the static {@code max_concurrent} +
 * {@code max_wait} alone when {@code admission.enabled: false}. Read at start; a reload does not change it.
 */
final class GatewayAdmission {
    private GatewayAdmission() {
    }

    /** @param routeOf a request's route id, or null (admin paths, unknown routes: the ceiling alone) */
    static Admission create(GatewayConfig config, MeterRegistry registry, Function<ServerRequest, String> routeOf) {
        FixedAdmission ceiling = new FixedAdmission(config.limits().maxConcurrent(), config.limits().maxWait());
        Admission a;
        if (config.admission().enabled()) {
            AdaptiveAdmission[] self = new AdaptiveAdmission[1];
            self[0] = new AdaptiveAdmission(config.admission(), ceiling, routeOf, route -> {
                AdaptiveAdmission ad = self[0];
                Gauge.builder("weft.admission.limit", ad, x -> x.limit(route))
                        .description("the route's adaptive limit of requests in flight").tag("route", route).register(registry);
                Gauge.builder("weft.admission.in_flight", ad, x -> x.inFlight(route))
                        .description("the route's admitted requests in flight").tag("route", route).register(registry);
                Gauge.builder("weft.admission.queued", ad, x -> x.queued(route))
                        .description("the route's requests waiting for a place (admission.queue)").tag("route", route)
                        .register(registry);
                Gauge.builder("weft.admission.latency_ratio", ad, x -> x.latencyRatio(route))
                        .description("the route's mean latency over the last second against its usual one (the lowest "
                                + "such mean of the last 30 s); at or above admission.queueing a lag over the target cuts "
                                + "the limit whatever the CPU share; NaN until a second of completions")
                        .tag("route", route).register(registry);
                Gauge.builder("weft.admission.refused_per_served", ad, x -> x.refusedPerServed(route))
                        .description("the route's refusals of the last second per request it served; at 4 or more its "
                                + "callers are taken to send a 503 again at once (a closed loop), and the queueing sign "
                                + "stays silent for the route for 30 s; NaN: neither")
                        .tag("route", route).register(registry);
                FunctionCounter.builder("weft.admission.shed", ad, x -> x.shed(route))
                        .description("the route's requests answered 503 by the admission").tag("route", route)
                        .register(registry);
            });
            Gauge.builder("weft.admission.lag", self[0], x -> x.lagMillis() / 1000)
                    .description("how late a ready virtual thread got a carrier (seconds, mean over the last 100 ms, "
                            + "less the collector's stop-the-world pauses): the signal the adaptive limits follow")
                    .baseUnit("seconds").register(registry);
            Gauge.builder("weft.admission.cpu_share", self[0], AdaptiveAdmission::cpuShare)
                    .description("the share of its CPUs the process used over the last five revisions (500 ms); "
                            + "below admission.cpu_busy a lag over the target does not cut the limits").register(registry);
            Gauge.builder("weft.admission.refusing_cpu_share", self[0], AdaptiveAdmission::refusingShare)
                    .description("the share of its CPUs the front door spent refusing over the last 500 ms (its CPU "
                            + "time in the share of its requests it refused); a lag over the target cuts the limits "
                            + "only while cpu_share less this is at least admission.cpu_busy").register(registry);
            Gauge.builder("weft.admission.door_nice", self[0], AdaptiveAdmission::doorNiceNow)
                    .description("the Linux nice value the front door's thread runs at: admission.door_nice when the "
                            + "kernel allowed it (CAP_SYS_NICE), else the process's own (see weft_admission_door_lead); NaN "
                            + "before the door started")
                    .register(registry);
            Gauge.builder("weft.admission.door_lead", self[0], AdaptiveAdmission::doorLeadNow)
                    .description("how many nice steps the front door's thread runs ahead of the gateway's other "
                            + "threads: raised itself (admission.door_nice), or lowered them when it may not raise "
                            + "itself (admission.door_fallback); 0 when neither; NaN before it started")
                    .register(registry);
            a = self[0];
        } else {
            a = ceiling;
        }
        Gauge.builder("weft.admission.ceiling", ceiling, FixedAdmission::inFlight)
                .description("requests in flight under limits.max_concurrent").tag("max", Integer.toString(
                        config.limits().maxConcurrent())).register(registry);
        FunctionCounter.builder("weft.admission.shed.all", a, Admission::shed)
                .description("every request answered 503 by the admission").register(registry);
        return a;
    }

    /** The buckets of the two histograms below: 1 ms to 5 s, as the collector's pauses ({@link JvmMeters}). */
    private static final Duration[] BUCKETS = JvmMeters.buckets();

    /**
     * The time from a request's head (and body) read to its 503 of the admission, the answer about to be written:
     * the admission's queue wait and the wait for a carrier after it. The wait for a carrier before the read is
     * not in it; {@link #schedulerLag} shows that one.
     */
    static Timer shedTimer(MeterRegistry registry) {
        return Timer.builder("weft.admission.shed.duration")
                .description("from a request read to its 503 of the admission (without the wait for a carrier before "
                        + "the read: see weft_scheduler_lag_seconds)").serviceLevelObjectives(BUCKETS)
                .register(registry);
    }

    /**
     * Every wake-up of the process's scheduler probe (a virtual thread that sleeps 10 ms, {@link SchedulerLag#shared()})
     * into {@code weft_scheduler_lag_seconds}: how late a ready virtual thread got a carrier. Close the handle to stop.
     */
    static AutoCloseable schedulerLag(MeterRegistry registry) {
        Timer t = Timer.builder("weft.scheduler.lag")
                .description("how late a ready virtual thread got a carrier: each wake-up of a probe that sleeps 10 ms")
                .serviceLevelObjectives(BUCKETS).register(registry);
        return SchedulerLag.shared().onWake(ns -> t.record(ns, TimeUnit.NANOSECONDS));
    }
}
