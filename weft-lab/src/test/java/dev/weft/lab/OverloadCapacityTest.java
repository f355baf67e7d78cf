package dev.weft.lab;

import dev.weft.http.Headers;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** What `weft lab overload` calls served cleanly (its 1x), a step's row, and its --service-cpus lists. */
class OverloadCapacityTest {
    private static Bench.Result result(long requests, long ok, long notSent, long... latenciesMillis) {
        Histogram h = new Histogram(3);
        for (long l : latenciesMillis) {
            h.recordValue(l * 1000);
        }
        Bench.Options o = new Bench.Options(List.of("http://127.0.0.1:1/"), "GET", Headers.EMPTY, null, 100, 10,
                Duration.ZERO, Duration.ofSeconds(4), Duration.ofSeconds(30));
        return new Bench.Result(o, requests, ok, ok == requests ? Map.of() : Map.of("status-503", requests - ok), notSent,
                4, h, new Histogram(3));
    }

    @Test
    void cleanMeansNoErrorEverythingSentAndP99WithinOneAndAHalfLatenciesPlus100ms() {
        Duration latency = Duration.ofMillis(250);
        assertThat(OverloadLab.clean(result(100, 100, 0, 251, 300, 470), latency)).isTrue();
        // p99 480 ms: over 1.5 x 250 + 100
        long[] slow = new long[100];
        java.util.Arrays.fill(slow, 480);
        assertThat(OverloadLab.clean(result(100, 100, 0, slow), latency)).isFalse();
        assertThat(OverloadLab.clean(result(100, 99, 0, 251, 260), latency)).as("one 503").isFalse();
        assertThat(OverloadLab.clean(result(100, 100, 1, 251, 260), latency)).as("one not sent").isFalse();
        assertThat(OverloadLab.clean(result(0, 0, 0), latency)).as("nothing measured").isFalse();
    }

    @Test
    void aStepRowHasAColumnPerHeaderColumnAndEndsWithTheGeneratorsSendDelayAndTheGatewaysOwnP99s() {
        Bench.Result r = result(100, 60, 0, 251, 260);
        for (long ms = 1; ms <= 100; ms++) {
            r.sendLag().recordValue(ms * 1000); // 1..100 ms late: p99 99 ms
        }
        OverloadLab.Step s = new OverloadLab.Step("weft", 2.0, 200, r, 12.5, 0, 50, 75, Double.POSITIVE_INFINITY,
                123.4, 75);
        String line = OverloadLab.line(s).strip();
        String header = OverloadLab.header().lines().findFirst().orElseThrow();
        assertThat(line.split("\\|", -1)).hasSameSizeAs(header.split("\\|", -1));
        assertThat(header).endsWith("| send delay p99 ms | gateway 503 p99 ms | gateway lag p99 ms | gateway lag max ms "
                + "| gateway gc pauses ms | gateway gc pause max ms |");
        assertThat(line).startsWith("| weft | 2.0x | 200 |").endsWith("| 0 | 99.0 | <= 50 | <= 75 | > 5000 | 123 | <= 75 |");
        assertThat(OverloadLab.line(new OverloadLab.Step("go", 2.0, 200, r, 12.5, -1, Double.NaN, Double.NaN,
                Double.NaN, Double.NaN, Double.NaN))).contains("| n/a | 99.0 | - | - | - | - | - |");
        assertThat(s.json()).containsEntry("gateway_gc_pause_ms", 123.4).containsEntry("gateway_gc_pause_max_ms", 75.0);
        assertThat(s.sendDelayP99Millis()).isEqualTo(99.0, org.assertj.core.data.Offset.offset(0.1));
        assertThat(s.json()).containsEntry("share_503", 0.4);
    }

    @Test
    void theCollectorsPauseTimeInAStepIsWhatItsSumGrewBySummedOverItsLabels() {
        String before = """
                jvm_gc_pause_seconds_bucket{action="end of minor GC",cause="G1 Evacuation Pause",gc="G1 Young Generation",le="0.05"} 3
                jvm_gc_pause_seconds_sum{action="end of minor GC",cause="G1 Evacuation Pause",gc="G1 Young Generation"} 0.120
                """;
        String after = """
                jvm_gc_pause_seconds_sum{action="end of minor GC",cause="G1 Evacuation Pause",gc="G1 Young Generation"} 0.250
                jvm_gc_pause_seconds_sum{action="end of major GC",cause="System.gc()",gc="G1 Old Generation"} 0.5
                """;
        assertThat(OverloadLab.sumMillis(before, after, "jvm_gc_pause_seconds")).isCloseTo(630.0,
                org.assertj.core.data.Offset.offset(1e-6));
        assertThat(OverloadLab.sumMillis("", after, "jvm_gc_pause_seconds")).as("no pause before the step")
                .isCloseTo(750.0, org.assertj.core.data.Offset.offset(1e-6));
        assertThat(OverloadLab.sumMillis(before, "weft_x_sum 1\n", "jvm_gc_pause_seconds")).isNaN();
        assertThat(OverloadLab.sumMillis(null, after, "jvm_gc_pause_seconds")).isNaN();
        assertThat(OverloadLab.sumMillis(before, after, "jvm_gc_pause")).as("another name").isNaN();
    }

    @Test
    void theGatewaysP99AndWorstAreTheFirstBucketBoundsThatHoldThatShareOfTheStepsObservations() {
        String before = """
                # HELP weft_scheduler_lag_seconds x
                weft_scheduler_lag_seconds_bucket{le="0.001"} 100
                weft_scheduler_lag_seconds_bucket{le="0.01"} 100
                weft_scheduler_lag_seconds_bucket{le="0.1"} 100
                weft_scheduler_lag_seconds_bucket{le="+Inf"} 100
                weft_scheduler_lag_seconds_count 100
                """;
        // 1,000 more: 980 under 1 ms, 15 more under 10 ms, 4 under 100 ms, 1 past it
        String after = before.replace("} 100\n", "} X\n")
                .replaceFirst("X", "1080").replaceFirst("X", "1095").replaceFirst("X", "1099").replaceFirst("X", "1100");
        assertThat(OverloadLab.percentileMillis(before, after, "weft_scheduler_lag_seconds", 0.99)).isEqualTo(10.0);
        assertThat(OverloadLab.percentileMillis(before, after, "weft_scheduler_lag_seconds", 1.0)).as("the worst")
                .isInfinite();
        String noneLate = after.replace("le=\"+Inf\"} 1100", "le=\"+Inf\"} 1099");
        assertThat(OverloadLab.percentileMillis(before, noneLate, "weft_scheduler_lag_seconds", 1.0)).isEqualTo(100.0);
        // the same with a label before le, and one more label set that adds to the counts
        String labelled = after.replace("{le=", "{route=\"a\",le=");
        assertThat(OverloadLab.buckets(labelled + labelled.replace("\"a\"", "\"b\""), "weft_scheduler_lag_seconds"))
                .containsEntry(0.001, 2160.0).containsEntry(Double.POSITIVE_INFINITY, 2200.0);
        // past the last bound, nothing observed, no such histogram
        String slow = before.replace("} 100\n", "} X\n").replaceFirst("X", "100").replaceFirst("X", "100")
                .replaceFirst("X", "100").replaceFirst("X", "200");
        assertThat(OverloadLab.percentileMillis(before, slow, "weft_scheduler_lag_seconds", 0.99)).isInfinite();
        assertThat(OverloadLab.percentileMillis(before, before, "weft_scheduler_lag_seconds", 0.99)).isNaN();
        assertThat(OverloadLab.percentileMillis(before, after, "weft_admission_shed_duration_seconds", 0.99)).isNaN();
        assertThat(OverloadLab.percentileMillis(null, after, "weft_scheduler_lag_seconds", 0.99)).isNaN();
    }

    @Test
    void serviceCpusTakeNumbersAndRangesAndLeaveTheRestToTheLab() {
        CpuPin p = CpuPin.of("1", 2);
        assertThat(p.prefix()).containsExactly("taskset", "-c", "1");
        assertThat(p.describe()).isEqualTo("the service on CPU 1; the load generator and the backends on CPU 0");
        assertThat(CpuPin.of("2-3,5", 8).describe())
                .isEqualTo("the service on CPU 2,3,5; the load generator and the backends on CPU 0,1,4,6,7");
        assertThatThrownBy(() -> CpuPin.of("0,1", 2)).hasMessageContaining("leaves no CPU");
        assertThatThrownBy(() -> CpuPin.of("2", 2)).hasMessageContaining("CPUs 0-1");
        assertThatThrownBy(() -> CpuPin.of("3-1", 4)).hasMessageContaining("not a CPU number or range");
        assertThatThrownBy(() -> CpuPin.of("x", 4)).hasMessageContaining("not a CPU number or range");
        assertThatThrownBy(() -> CpuPin.of("", 4)).hasMessageContaining("not a CPU number or range");
    }
}
