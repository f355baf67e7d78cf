package dev.weft.lab;

import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** What a cold run's buckets say: the steady rate, the first second, the time to 90% of steady. */
class ColdStartTest {
    private static ColdStart.Row row(long... buckets) {
        return new ColdStart.Row("weft", Duration.ofSeconds(1), buckets, null);
    }

    @Test
    void aProcessThatStartsSlowReachesNinetyPercentWhenItsTrailingSecondDoes() {
        // 250 ms buckets: a second at 400 req/s, then 2,000 req/s (500 a bucket) for 5 s
        long[] b = new long[24];
        for (int i = 0; i < 4; i++) {
            b[i] = 100;
        }
        for (int i = 4; i < 24; i++) {
            b[i] = 500;
        }
        ColdStart.Row r = row(b);
        assertThat(r.steady()).isEqualTo(2000.0);
        assertThat(r.firstSecond()).isEqualTo(400);
        // 90% of steady is 1,800 answers in the trailing second: the second ending at 1.75 s holds 100 + 3 x 500 =
        // 1,600, the one ending at 2.0 s 4 x 500 = 2,000
        assertThat(r.secondsTo90()).isEqualTo(2.0);
    }

    @Test
    void aProcessAtFullSpeedAtOnceCountsFromItsFirstBucket() {
        long[] b = new long[12];
        java.util.Arrays.fill(b, 500);
        assertThat(row(b).secondsTo90()).as("the first bucket alone is at 2,000 req/s").isEqualTo(0.25);
    }

    @Test
    void aRateThatNeverComesUpIsNever() {
        assertThat(ColdStart.secondsTo(new long[]{1, 1, 1, 1}, 1000)).isNaN();
    }
}
