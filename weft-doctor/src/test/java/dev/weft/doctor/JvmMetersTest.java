package dev.weft.doctor;

import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.distribution.CountAtBucket;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Arrays;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The JVM's meters: the collector's pauses as a histogram with the documented buckets, and a handle that stops. */
class JvmMetersTest {

    private static long pauses(SimpleMeterRegistry r) {
        return r.find("jvm.gc.pause").timers().stream().mapToLong(Timer::count).sum();
    }

    @Test
    void aPauseIsCountedInBucketsOf1MsTo5sAndAClosedHandleCountsNoMore() throws Exception {
        SimpleMeterRegistry kept = new SimpleMeterRegistry();
        SimpleMeterRegistry closed = new SimpleMeterRegistry();
        try (AutoCloseable k = JvmMeters.bind(kept)) {
            AutoCloseable c = JvmMeters.bind(closed);
            System.gc(); // stop-the-world with every collector the tests may run on
            await("a pause seen by both").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(5))
                    .until(() -> pauses(kept) >= 1 && pauses(closed) >= 1);
            Timer t = kept.find("jvm.gc.pause").timers().iterator().next();
            double[] bounds = Arrays.stream(t.takeSnapshot().histogramCounts())
                    .mapToDouble(b -> b.bucket(java.util.concurrent.TimeUnit.MILLISECONDS)).toArray();
            assertThat(bounds).containsExactly(1, 2, 5, 10, 20, 30, 50, 75, 100, 150, 200, 300, 500, 750, 1000, 2000,
                    5000);
            assertThat(Arrays.stream(t.takeSnapshot().histogramCounts()).mapToDouble(CountAtBucket::count).max()
                    .orElse(0)).as("the last bucket holds every pause under 5 s").isGreaterThanOrEqualTo(1);

            c.close();
            long before = pauses(closed);
            long keptBefore = pauses(kept);
            System.gc();
            await("the next pause seen by the handle still open").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(5))
                    .until(() -> pauses(kept) > keptBefore);
            assertThat(pauses(closed)).as("the closed handle no longer listens").isEqualTo(before);
        }
        assertThat(kept.find("jvm.memory.used").gauges()).isNotEmpty();
        assertThat(kept.find("jvm.gc.overhead").gauge()).isNotNull();
        assertThat(kept.find("process.files.open").gauge()).isNotNull();
    }
}
