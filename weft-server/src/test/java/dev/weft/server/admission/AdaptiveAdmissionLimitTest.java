package dev.weft.server.admission;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.data.Offset.offset;

/** One revision of a route's limit ({@link AdaptiveAdmission#next}), case by case. */
class AdaptiveAdmissionLimitTest {

    @ParameterizedTest(name = "limit {0}, lag {1} ms, target {2} ms, floor {3}, busy {4}, settling {5}: {6} ({7})")
    @CsvSource(delimiter = ';', textBlock = """
            # the lag is over the target: cut by target/lag, at most to 0.8 a revision
            1000; 40;   20; 0;    true;  false; 800;  a lag twice the target cuts to 0.8, not 0.5
            1000; 25;   20; 0;    true;  false; 800;  target/lag 0.8
            1000; 22;   20; 0;    true;  false; 909.09; target/lag 0.91
            1000; 40;   20; 900;  true;  false; 900;  not below the floor
            # the bug this replaces: after a stall, a burst of completions put the floor over the limit and raised it
            1000; 300;  20; 1760; true;  false; 1000; a floor over the limit does not raise it
            1000; 300;  20; 1760; false; true;  1000; nor when idle or settling
            # at most half the target: grow when busy and not settling
            1000; 10;   20; 0;    true;  false; 1051; 5% and one place
            1000; 0;    20; 0;    true;  false; 1051; no lag at all
            1000; 10;   20; 0;    false; false; 1000; a route that does not use its limit does not grow it
            1000; 10;   20; 0;    true;  true;  1000; a no-load latency since the last lag over the target: wait
            # between half the target and the target: hold
            1000; 15;   20; 0;    true;  false; 1000; lag 15 ms of 20: hold
            1000; 20;   20; 0;    true;  false; 1000; at the target: hold
            """)
    void oneRevision(double limit, double lag, double target, double floor, boolean busy, boolean settling,
                     double expected, String why) {
        assertThat(AdaptiveAdmission.next(limit, lag, target, floor, busy, settling)).as(why)
                .isCloseTo(expected, offset(0.01));
    }
}
