package dev.weft.lab.chaos;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/** A seed names one fault sequence, and ChaosIT's seeds draw every kind of fault it claims to. */
class ChaosPlanTest {
    @Test
    void aSeedDrawsTheSameSequenceEveryTime() {
        ChaosLab.Options o = ChaosLab.Options.defaults(1, 0);
        assertThat(ChaosLab.plan(o, 7)).isEqualTo(ChaosLab.plan(o, 7)).hasSize(o.faults());
        assertThat(ChaosLab.plan(o, 7)).isNotEqualTo(ChaosLab.plan(o, 8));
    }

    @Test
    void theItsSeedsCoverAKillResetsTimeoutsOnBothSides() {
        ChaosLab.Options o = ChaosLab.Options.defaults(2, ChaosIT.DEFAULT_SEED);
        List<ChaosLab.Fault> drawn = Stream.of(ChaosLab.plan(o, ChaosIT.DEFAULT_SEED), ChaosLab.plan(o, ChaosIT.DEFAULT_SEED + 1))
                .flatMap(List::stream).map(ChaosLab.Applied::fault).toList();
        assertThat(drawn).contains(ChaosLab.Fault.KILL_9, ChaosLab.Fault.BROKER_RESET_PEER, ChaosLab.Fault.ENDPOINT_TIMEOUT,
                ChaosLab.Fault.BROKER_TIMEOUT, ChaosLab.Fault.BROKER_BANDWIDTH, ChaosLab.Fault.ENDPOINT_SLICER,
                ChaosLab.Fault.BROKER_LATENCY);
    }
}
