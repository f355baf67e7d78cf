package dev.weft.os;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The probe against the JDK's real scheduler: every carrier thread is kept busy by virtual threads that spin, so a
 * ready virtual thread (the probe) cannot run until they stop. Bounds are wide: a spin of 600 ms must show as more
 * than 300 ms of lateness, and must not show in a window that starts after it.
 */
class SchedulerLagTest {
    @Test
    void aWaitForACarrierShowsInTheWindowThatHoldsItAndNotInALaterOne() throws Exception {
        AtomicLong woke = new AtomicLong(System.nanoTime());
        try (SchedulerLag lag = new SchedulerLag(Duration.ofMillis(10));
             AutoCloseable w = lag.onWake(late -> woke.set(System.nanoTime()))) {
            awaitWakeAfter(woke, System.nanoTime()); // the probe runs
            long before = System.nanoTime();
            for (Thread t : Spinners.occupyEveryCarrier(Duration.ofMillis(600))) {
                t.join();
            }
            assertThat(lag.worstSince(before)).as("the probe could not run while every carrier spun")
                    .isGreaterThan(Duration.ofMillis(300).toNanos());
            // the probe wakes and records its lateness, which counts for the 50 ms slot it came in: the later
            // window starts in the slot after that
            long wake = awaitWakeAfter(woke, System.nanoTime());
            long after = (Math.floorDiv(wake, SLOT_NANOS) + 1) * SLOT_NANOS;
            Thread.sleep(Duration.ofNanos(Math.max(0, after - System.nanoTime())));
            Thread.sleep(100); // the window under test: the probe runs on time again
            assertThat(lag.worstSince(after)).as("a window after the spin does not hold it")
                    .isLessThan(Duration.ofMillis(300).toNanos());
        }
    }

    @Test
    void aProbeThatHasNotWokenYetCountsItsWait() throws Exception {
        AtomicLong woke = new AtomicLong(System.nanoTime());
        try (SchedulerLag lag = new SchedulerLag(Duration.ofMillis(10));
             AutoCloseable w = lag.onWake(late -> woke.set(System.nanoTime()))) {
            awaitWakeAfter(woke, System.nanoTime()); // the probe runs
            long before = System.nanoTime();
            List<Thread> spinners = Spinners.occupyEveryCarrier(Duration.ofMillis(600));
            Thread.sleep(400); // the condition under test: this platform thread runs; the probe cannot
            assertThat(lag.worstSince(before)).as("asked while the probe still waits for a carrier")
                    .isGreaterThan(Duration.ofMillis(250).toNanos());
            for (Thread t : spinners) {
                t.join();
            }
        }
    }

    @Test
    void theAdmissionsMeanLeavesOutTheCollectorsPausesAndTheWorstKeepsThem() throws Exception {
        // the same 600 ms without a carrier, once with no pause reported and once reported as a collector's
        // pause (a counter that grows a second at every read): only the first shows in takeMillis()
        java.util.concurrent.atomic.AtomicLong paused = new java.util.concurrent.atomic.AtomicLong();
        for (boolean pause : new boolean[] {false, true}) {
            AtomicLong woke = new AtomicLong(System.nanoTime());
            try (SchedulerLag lag = new SchedulerLag(Duration.ofMillis(10),
                    () -> pause ? paused.addAndGet(1000) : 0);
                 AutoCloseable w = lag.onWake(late -> woke.set(System.nanoTime()))) {
                awaitWakeAfter(woke, System.nanoTime()); // the probe runs
                long before = System.nanoTime();
                lag.takeMillis();
                for (Thread t : Spinners.occupyEveryCarrier(Duration.ofMillis(600))) {
                    t.join();
                }
                awaitWakeAfter(woke, System.nanoTime()); // the probe wakes and records its lateness
                double mean = lag.takeMillis();
                assertThat(lag.worstSince(before)).as("the worst wake-up counts a pause too (pause %s)", pause)
                        .isGreaterThan(Duration.ofMillis(300).toNanos());
                // without a pause: the wake-up 600 ms late and a few on time, a mean near 100 ms; with one, each
                // wake-up counts 0 (the bound leaves room for takeMillis' own "not woken for a while" on a busy host)
                if (pause) {
                    assertThat(mean).as("lateness within a collector's pause").isLessThan(50);
                } else {
                    assertThat(mean).as("lateness without a pause").isGreaterThan(50);
                }
            }
        }
    }

    /** SchedulerLag's record: the worst wake-up of each 50 ms slot. */
    private static final long SLOT_NANOS = 50_000_000L;

    /** Waits until the probe has woken after {@code t} ({@code nanoTime}); returns when it last woke. */
    private static long awaitWakeAfter(AtomicLong woke, long t) {
        await("the probe woke").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(2))
                .until(() -> woke.get() - t > 0);
        return woke.get();
    }

    @Test
    void thePausesAreTheJvmsCollectors() {
        assertThat(SchedulerLag.pauseMillis()).as("this JVM's collector reports its pauses").isGreaterThanOrEqualTo(0);
        System.gc();
        assertThat(SchedulerLag.pauseMillis()).isGreaterThanOrEqualTo(0);
    }

    @Test
    void theProcessHasOneProbe() {
        assertThat(SchedulerLag.shared()).isSameAs(SchedulerLag.shared());
    }
}
