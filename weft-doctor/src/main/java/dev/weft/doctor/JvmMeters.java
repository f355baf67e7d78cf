package dev.weft.doctor;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmCompilationMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmHeapPressureMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmInfoMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.FileDescriptorMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.distribution.DistributionStatisticConfig;

import java.time.Duration;
import java.util.stream.LongStream;

/**
 * The JVM's own meters in a service's {@code /-/metrics}, from Micrometer's binders: the collector's pauses
 * ({@code jvm_gc_pause_seconds}, a histogram here), its overhead ({@code jvm_gc_overhead}), memory, platform
 * threads, class loading, the JIT compilers' time, CPU, uptime and open files.
 *
 * <p>Why the pauses as a histogram: a stop-the-world pause stops every thread of the process, the front door's too,
 * so a request that arrives during one waits for its end, and the door then works off what came meanwhile. At twice
 * the load one CPU serves, G1's young pauses (about 50 ms, some over 100 ms) were where the slow 503s came from
 * (docs/design/memory.md); {@code weft lab overload} reads this histogram for each step.
 */
public final class JvmMeters {
    /** The buckets of {@code jvm_gc_pause_seconds} and of the gateway's own latency histograms: 1 ms to 5 s. */
    private static final Duration[] BUCKETS = LongStream.of(1, 2, 5, 10, 20, 30, 50, 75, 100, 150, 200, 300, 500, 750,
            1000, 2000, 5000).mapToObj(Duration::ofMillis).toArray(Duration[]::new);

    private JvmMeters() {
    }

    /** What {@link #bind} returns: closing it stops listening to the collector, and throws nothing. */
    public interface Binding extends AutoCloseable {
        @Override
        void close();
    }

    /** The histogram buckets, 1 ms to 5 s, that {@code jvm_gc_pause_seconds} and Weft's latency histograms share. */
    public static Duration[] buckets() {
        return BUCKETS.clone();
    }

    /**
     * Binds the JVM's meters to {@code registry}. Call it before anything else registers a meter there: the pause
     * histogram's buckets are a {@link MeterFilter}, which applies to meters registered after it. Close the handle
     * to stop listening to the collector (the meters stay).
     */
    public static Binding bind(MeterRegistry registry) {
        double[] bounds = java.util.Arrays.stream(BUCKETS).mapToDouble(Duration::toNanos).toArray();
        registry.config().meterFilter(new MeterFilter() {
            @Override
            public DistributionStatisticConfig configure(Meter.Id id, DistributionStatisticConfig config) {
                if (!id.getName().equals("jvm.gc.pause")) {
                    return config;
                }
                return DistributionStatisticConfig.builder().serviceLevelObjectives(bounds).build().merge(config);
            }
        });
        JvmGcMetrics gc = new JvmGcMetrics();
        gc.bindTo(registry);
        JvmHeapPressureMetrics pressure = new JvmHeapPressureMetrics();
        pressure.bindTo(registry);
        new JvmMemoryMetrics().bindTo(registry);
        new JvmThreadMetrics().bindTo(registry);
        new ClassLoaderMetrics().bindTo(registry);
        new JvmCompilationMetrics().bindTo(registry);
        new JvmInfoMetrics().bindTo(registry);
        new ProcessorMetrics().bindTo(registry);
        new UptimeMetrics().bindTo(registry);
        new FileDescriptorMetrics().bindTo(registry);
        return () -> {
            gc.close();
            pressure.close();
        };
    }
}
