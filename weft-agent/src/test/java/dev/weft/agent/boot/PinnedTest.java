package dev.weft.agent.boot;

import jdk.jfr.FlightRecorder;
import jdk.jfr.Recording;
import jdk.jfr.RecordingState;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The count's life in this JVM (it is static and ends for good, so one test does it all): started, then its
 * recording stopped from outside, as {@code jcmd PID JFR.stop} does.
 */
class PinnedTest {
    @Test
    void aStoppedRecordingTurnsTheCountOffAndKeepsNoWorkerId() throws Exception {
        LongAdder pool = new LongAdder();
        Pinned.running(pool); // this thread as a running worker
        assertThat(Pinned.mapped()).isEqualTo(1);
        assertThat(Pinned.start()).isTrue();
        assertThat(Pinned.counting()).isTrue();

        List<Recording> ours = FlightRecorder.getFlightRecorder().getRecordings().stream()
                .filter(r -> r.getName().startsWith("Recording Stream") && r.getState() == RecordingState.RUNNING).toList();
        assertThat(ours).hasSize(1);
        ours.get(0).stop();

        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (Pinned.counting() && System.nanoTime() < deadline) {
            Thread.sleep(10); // polling the condition: the stream ends on JFR's and a closer thread
        }
        assertThat(Pinned.counting()).isFalse();
        // the ids are dropped, and a worker that starts now is not registered
        assertThat(Pinned.mapped()).isZero();
        Pinned.running(pool);
        assertThat(Pinned.mapped()).isZero();
        Pinned.ended();
        assertThat(Pinned.start()).isFalse();
    }
}
