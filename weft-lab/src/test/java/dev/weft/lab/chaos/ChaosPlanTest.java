package dev.weft.lab.chaos;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
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
    void oneInstanceHasNoInstanceToLose() {
        ChaosLab.Options d = ChaosLab.Options.defaults(1, 0);
        ChaosLab.Options one = new ChaosLab.Options(1, 0, d.records(), 50, 1, d.faultFor(), d.gap(), d.settle());
        assertThat(d.kinds()).contains(ChaosLab.Fault.KILL_9_ONE);
        assertThat(LongStream.range(0, 20).boxed().flatMap(seed -> ChaosLab.plan(one, seed).stream()))
                .extracting(ChaosLab.Applied::fault).contains(ChaosLab.Fault.KILL_9).doesNotContain(ChaosLab.Fault.KILL_9_ONE);
    }

    @Test
    void theItsSeedsDrawEveryKindOfFaultOnBothSides() {
        ChaosLab.Options o = ChaosLab.Options.defaults(2, ChaosIT.DEFAULT_SEED);
        List<ChaosLab.Fault> drawn = Stream.of(ChaosLab.plan(o, ChaosIT.DEFAULT_SEED), ChaosLab.plan(o, ChaosIT.DEFAULT_SEED + 1))
                .flatMap(List::stream).map(ChaosLab.Applied::fault).toList();
        Set<String> kinds = drawn.stream().map(f -> f.isKill() ? f.name() : f.toxicType()).collect(Collectors.toSet());
        Set<String> every = o.kinds().stream().map(f -> f.isKill() ? f.name() : f.toxicType())
                .collect(Collectors.toSet());
        assertThat(kinds).as("drawn " + drawn).isEqualTo(every);
        assertThat(drawn).as("a toxic on the broker's proxy").anyMatch(f -> !f.isKill() && f.name().startsWith("BROKER_"));
        assertThat(drawn).as("a toxic on an endpoint's proxy").anyMatch(f -> f.name().startsWith("ENDPOINT_"));
    }

    @Test
    void aGatewayRunAppliesEachToxicKindOnceAndTheItsSeedHitsBothBackends() {
        for (long seed = 0; seed < 20; seed++) {
            assertThat(GatewayChaos.plan(seed)).extracting(ChaosLab.Applied::fault)
                    .containsExactlyInAnyOrderElementsOf(GatewayChaos.TOXICS);
        }
        assertThat(GatewayChaos.plan(ChaosIT.DEFAULT_SEED)).isEqualTo(GatewayChaos.plan(ChaosIT.DEFAULT_SEED))
                .extracting(ChaosLab.Applied::proxy).contains("backend-b", "backend-c");
    }
}
