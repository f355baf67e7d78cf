package dev.weft.server.admission;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.data.Offset.offset;

/** One revision of a route's limit ({@link AdaptiveAdmission#next}), case by case. */
class AdaptiveAdmissionLimitTest {

    @ParameterizedTest(name = "limit {0}, lag {1} ms, target {2} ms, floor {3}, peak {4}, settling {5}, cpu {6}: {7} ({8})")
    @CsvSource(delimiter = ';', textBlock = """
            # the lag is over the target: cut by target/lag, at most to 0.8 a revision
            1000; 40;   20; 0;    1000; false; 1.0; 800;  a lag twice the target cuts to 0.8, not 0.5
            1000; 25;   20; 0;    1000; false; 1.0; 800;  target/lag 0.8
            1000; 22;   20; 0;    1000; false; 1.0; 909.09; target/lag 0.91
            1000; 40;   20; 900;  1000; false; 1.0; 900;  not below the floor
            1000; 300;  20; Infinity; 1000; false; 1.0; 1000; an unknown floor (less than a second of completions): the lag holds the limit
            # the bug this replaces: after a stall, a burst of completions put the floor over the limit and raised it
            1000; 300;  20; 1760; 1000; false; 1.0; 1000; a floor over the limit does not raise it
            1000; 300;  20; 1760; 0;    true; 1.0;  1000; nor when idle or settling
            # the cut starts from the peak in flight / 0.8 where that is below the limit: it bites at once
            10000; 40;  20; 0;    5000; false; 1.0; 5000; a limit at the ceiling falls to what was in flight, not to 8,000
            10000; 100; 20; 0;    5000; false; 1.0; 5000; one revision never cuts below the peak, at any lag
            10000; 40;  20; 5500; 5000; false; 1.0; 5500; nor below the floor
            1000; 40;   20; 0;    900;  false; 1.0; 800;  a busy route: from its limit, as before
            1000; 40;   20; 0;    0;    false; 1.0; 0;    an idle route while others are short of CPU: to its floor (revise clamps it to min_limit)
            1000; 40;   20; 0;    0;    false; 0.5; 1000; ...only while the CPU is short
            # at most half the target: grow when busy and not settling
            1000; 10;   20; 0;    1000; false; 1.0; 1051; 5% and one place
            1000; 0;    20; 0;    1000; false; 1.0; 1051; no lag at all
            1000; 10;   20; 0;    0;    false; 1.0; 1000; a route that does not use its limit does not grow it
            1000; 10;   20; 0;    1000; true; 1.0;  1000; a no-load latency since the last cut: wait
            # between half the target and the target: hold
            1000; 15;   20; 0;    1000; false; 1.0; 1000; lag 15 ms of 20: hold
            1000; 20;   20; 0;    1000; false; 1.0; 1000; at the target: hold
            # the process used less than 0.8 of its CPUs: the lag is not a CPU shortage
            1000; 40;   20; 0;    1000; false; 0.79; 1051; a lag with CPU to spare does not cut, and a busy route grows
            1000; 40;   20; 0;    0;    false; 0.5;  1000; nor grows a route that does not use its limit
            1000; 40;   20; 0;    1000; true;  0.5;  1000; nor one settling after a cut
            1000; 40;   20; 0;    1000; false; 0.8;  800;  at 0.8 of its CPUs the lag cuts again
            1000; 15;   20; 0;    1000; false; 0.5;  1051; between half the target and the target, CPU to spare: grow
            1000; 300;  20; 1760; 1000; false; 0.5;  1051; even a lag of 300 ms with CPU to spare: a busy route grows
            """)
    void oneRevision(double limit, double lag, double target, double floor, double peak, boolean settling,
                     double cpuShare, double expected, String why) {
        assertThat(AdaptiveAdmission.next(limit, lag, target, floor, peak, settling, false, cpuShare, 0,
                AdmissionPolicy.DEFAULT_CPU_BUSY)).as(why)
                .isCloseTo(expected, offset(0.01));
    }

    @ParameterizedTest(name = "limit {0}, lag {1} ms, peak {2}, settling {3}, calm {4}, cpu {5}: {6} ({7})")
    @CsvSource(delimiter = ';', textBlock = """
            1000; 10;  1000; false; true;  1.0; 1201; no cut in the last second: 20% and one place
            1000; 10;  1000; false; false; 1.0; 1051; a cut in the last second: 5% and one place
            1000; 40;  1000; false; true;  0.5; 1201; a lag with CPU to spare, calm: 20%
            1000; 10;  0;    false; true;  1.0; 1000; calm but not busy: no growth
            1000; 10;  1000; true;  true;  1.0; 1000; settling holds, calm or not
            1000; 40;  1000; false; true;  1.0; 800;  calm is about growth: a lag with the CPU short still cuts
            """)
    void aCalmRouteGrowsFaster(double limit, double lag, double peak, boolean settling, boolean calm, double cpuShare,
                               double expected, String why) {
        assertThat(AdaptiveAdmission.next(limit, lag, 20, 0, peak, settling, calm, cpuShare, 0,
                AdmissionPolicy.DEFAULT_CPU_BUSY)).as(why).isCloseTo(expected, offset(0.01));
    }

    @ParameterizedTest(name = "cpu {0} of cpu_busy {1}, lag {2} ms: {3} ({4})")
    @CsvSource(delimiter = ';', textBlock = """
            0.1;  0;   40; 800;  cpu_busy 0: the lag alone decides, as before Round 18
            0.1;  0;   15; 1000; cpu_busy 0: between half the target and the target, hold
            0.95; 1;   40; 1051; cpu_busy 1: below a wholly busy process a lag does not cut (a busy route grows)...
            1.0;  1;   40; 800;  ...and cuts at a wholly busy one
            0.6;  0.5; 40; 800;  cpu_busy 0.5: 0.6 of the CPUs is short of CPU
            """)
    void theCpuShareThatCountsIsTheConfigured(double cpuShare, double cpuBusy, double lag, double expected, String why) {
        assertThat(AdaptiveAdmission.next(1000, lag, 20, 0, 1000, false, false, cpuShare, 0, cpuBusy)).as(why)
                .isCloseTo(expected, offset(0.01));
    }

    @ParameterizedTest(name = "cpu {0}, refusing {1}, lag {2} ms, peak {3}, calm {4}: {5} ({6})")
    @CsvSource(delimiter = ';', textBlock = """
            # Round 20: a closed loop that sends each 503 again at once keeps the front door refusing; Round 21: what
            # counts is the CPU left for serving (cpu less refusing) against cpu_busy (0.8)
            1.0; 0.6;  40; 1000; false; 1051; 0.4 serving: a lag does not cut, a busy route grows
            1.0; 0.6;  40; 1000; true;  1201; ...by 20% with no cut in the last second
            1.0; 0.6;  40; 0;    false; 1000; ...but not a route that does not use its limit
            1.0; 0.5;  40; 1000; false; 1051; refusing and serving equal: 0.5 serving, grow (Round 20 cut here)
            0.9; 0.44; 40; 1000; false; 1051; 0.46 serving, more than refusing: grow (Round 20 cut here)
            1.0; 0.21; 40; 1000; false; 1051; 0.79 serving: just under cpu_busy, grow
            1.0; 0.2;  40; 1000; false; 800;  0.8 serving (refusing 0.2: about twice the load one CPU serves): the lag cuts
            0.95; 0.1; 40; 1000; false; 800;  0.85 serving: the lag cuts
            1.0; 0;    40; 1000; false; 800;  nothing refused: the CPU share alone decides, as before
            1.0; 0.6;  15; 1000; false; 1051; between half the target and the target: a busy route grows
            1.0; NaN;  40; 1000; false; 800;  unknown (before the first revision): the lag cuts, as before
            """)
    void aCpuSpentRefusingIsNotShortForServing(double cpuShare, double refusing, double lag, double peak, boolean calm,
                                               double expected, String why) {
        assertThat(AdaptiveAdmission.next(1000, lag, 20, 0, peak, false, calm, cpuShare, refusing,
                AdmissionPolicy.DEFAULT_CPU_BUSY)).as(why).isCloseTo(expected, offset(0.01));
    }

    @ParameterizedTest(name = "cpu.max {0}: {1}")
    @CsvSource(delimiter = ';', textBlock = """
            150000 100000;  1.5
            50000 100000;   0.5
            max 100000;     -1
            '';             -1
            0 100000;       -1
            -1 100000;      -1
            x 100000;       -1
            150000;         -1
            """)
    void aCgroupQuotaIsReadAsCpus(String cpuMax, double cpus) {
        Double q = AdaptiveAdmission.CpuShare.quota(cpuMax == null ? "" : cpuMax + "\n");
        if (cpus < 0) {
            assertThat(q).as("no quota").isNull();
        } else {
            assertThat(q).isCloseTo(cpus, offset(1e-9));
        }
    }

    @ParameterizedTest(name = "available {0}, quota {1}: {2}")
    @CsvSource(delimiter = ';', textBlock = """
            2; 1.5;  1.5
            2; 3.0;  2
            1; ;     1
            4; 0.5;  0.5
            """)
    void theCpusAreTheLowerOfTheCountAndTheQuota(int available, Double quota, double expected) {
        assertThat(AdaptiveAdmission.CpuShare.cpus(available, quota)).isEqualTo(expected);
    }

    @ParameterizedTest(name = "limit {0}, lag {1} ms, cpu {2}, latency ratio {3}, usual {4} ms, queueing {5}: {6} ({7})")
    @CsvSource(delimiter = ';', textBlock = """
            # a process sharing its CPUs: the CPU share is low, the requests queue inside it
            1000; 40;  0.5; 2.0;  250;  1.5; 800;  a lag while the requests take twice their usual latency cuts, whatever the CPU share
            1000; 40;  0.5; 1.5;  250;  1.5; 800;  at the ratio: cuts
            1000; 40;  0.5; 1.1;  250;  1.5; 1051; a closed loop's lag burst at about the usual latency: a busy route grows, as before
            1000; 40;  0.5; 2.0;  250;  0;   1051; queueing 0: the CPU share alone decides
            1000; 40;  0.5; NaN;  NaN;  1.5; 1051; an unknown ratio (under a second of completions): the CPU share alone
            1000; 10;  0.5; 3.0;  250;  1.5; 1051; no lag to speak of: slow requests are the backends', a busy route grows
            1000; 15;  0.5; 3.0;  250;  1.5; 1051; a lag of 15 ms, under a tenth of the usual 250 ms: not short, a busy route grows
            1000; 15;  0.5; 3.0;  100;  1.5; 1000; a lag between half the target and the target, over a tenth of 100 ms: hold
            1000; 40;  1.0; 1.0;  250;  1.5; 800;  the CPU share still cuts on its own
            # a process that uses its CPUs is judged by its share alone (the CPU spent refusing left out)
            1000; 40;  0.9; 2.0;  250;  1.5; 1051; busy at 0.9, 0.2 of it refusing: serving takes 0.7, not short; queueing does not override it
            # a backend that slowed from 1 s to 2 s: twice the usual latency, a lag burst far below a tenth of it
            1000; 40;  0.5; 2.0;  1000; 1.5; 1051; a lag of 40 ms does not make a 1 s request take 2 s: its backend did
            1000; 99;  0.5; 2.0;  1000; 1.5; 1051; just under a tenth of the usual latency: still the backend's
            1000; 100; 0.5; 2.0;  1000; 1.5; 800;  a tenth: the lag explains it, cut
            """)
    void queueingInsideTheProcessIsAShortageToo(double limit, double lag, double cpuShare, double ratio, double usualMs,
                                               double queueing, double expected, String why) {
        double refusing = cpuShare == 0.9 ? 0.2 : 0;
        assertThat(AdaptiveAdmission.next(limit, lag, 20, 0, limit, false, false, cpuShare, refusing,
                AdmissionPolicy.DEFAULT_CPU_BUSY, ratio, usualMs, queueing)).as(why).isCloseTo(expected, offset(0.01));
    }

    @ParameterizedTest(name = "refused {0}, served {1}: {2} per served, returning {3}")
    @CsvSource(delimiter = ';', textBlock = """
            # an open loop at twice (three times) what the route serves refuses about one (two) per one served
            4000;  4000; 1.0;      false
            8000;  4000; 2.0;      false
            # 2,000 closed-loop callers at 100 ms HTTPS backends: 10-15 refusals per request served
            20000; 1500; 13.33;    true
            4;     1;    4.0;      true
            0;     0;    NaN;      false
            5;     0;    Infinity; true
            """)
    void refusalsThatComeBackSilenceTheQueueingSign(long refused, long served, double perServed, boolean returning) {
        double r = AdaptiveAdmission.refusedPerServed(refused, served);
        if (Double.isFinite(perServed)) {
            assertThat(r).isCloseTo(perServed, offset(0.01));
        } else if (Double.isNaN(perServed)) {
            assertThat(r).isNaN();
        } else {
            assertThat(r).isEqualTo(perServed);
        }
        assertThat(r >= AdaptiveAdmission.RETURNING_REFUSALS).isEqualTo(returning);
        // returning: the queueing sign stays silent, and a busy route under the CPU share grows as a calm one (20%)
        double next = AdaptiveAdmission.next(1000, 40, 20, 0, 1000, false, false, 0.5, 0.1,
                AdmissionPolicy.DEFAULT_CPU_BUSY, 2.0, 250, 1.5, returning);
        assertThat(next).isCloseTo(returning ? 1201 : 800, offset(0.01));
        // the CPU share still cuts on its own, returning or not
        assertThat(AdaptiveAdmission.next(1000, 40, 20, 0, 1000, false, false, 1.0, 0,
                AdmissionPolicy.DEFAULT_CPU_BUSY, 2.0, 250, 1.5, returning)).isCloseTo(800, offset(0.01));
    }
}
