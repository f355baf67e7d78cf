package dev.weft.lab.chaos;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The gateway invariants of {@link GatewayChaos} on crafted answers: they can fail, and they fail where they should. */
class GatewayChaosCheckTest {
    static final long MS = 1_000_000;
    static final List<GatewayChaos.Window> B_FROM_1S_TO_3S = List.of(new GatewayChaos.Window("b", 1000 * MS, 3000 * MS));

    @Test
    void anAnswerPastTheDeadlinePlus100MsIsLateWhateverItsStatus() {
        Duration deadline = Duration.ofSeconds(1);
        List<GatewayChaos.Answer> answers = List.of(
                new GatewayChaos.Answer(1, 1500 * MS, 1100 * MS, 504, "b", "deadline"), // at the bound: on time
                new GatewayChaos.Answer(1, 1500 * MS, 1101 * MS, 504, "b", "deadline"),
                new GatewayChaos.Answer(1, 1500 * MS, 1300 * MS, 200, null, null),
                new GatewayChaos.Answer(1, 1500 * MS, 20 * MS, 200, null, null));
        assertThat(GatewayChaos.late(answers, deadline, B_FROM_1S_TO_3S, Map.of(1L, 1290.0))).hasSize(2)
                .first().asString().contains("status 200 after 1300 ms").contains("during a toxic on b")
                .contains("the gateway's own duration 1290 ms");
    }

    @Test
    void aFailureMustNameABackendThatHadAToxicWhileItWasInFlight() {
        assertThat(GatewayChaos.misnamed(List.of(new GatewayChaos.Answer(1, 1500 * MS, 900 * MS, 502, "b", "reset")),
                B_FROM_1S_TO_3S)).isEmpty();
        assertThat(GatewayChaos.misnamed(List.of(new GatewayChaos.Answer(1, 3500 * MS, 900 * MS, 502, "b", "reset")),
                B_FROM_1S_TO_3S)).as("within a second after the toxic: a connection it broke").isEmpty();
        assertThat(GatewayChaos.misnamed(List.of(new GatewayChaos.Answer(1, 1500 * MS, 900 * MS, 504, "c", "deadline")),
                B_FROM_1S_TO_3S)).as("c had no toxic").singleElement().asString().contains("names call c");
        assertThat(GatewayChaos.misnamed(List.of(new GatewayChaos.Answer(1, 4500 * MS, 100 * MS, 502, "b", "reset")),
                B_FROM_1S_TO_3S)).as("long after b's toxic").hasSize(1);
        assertThat(GatewayChaos.misnamed(List.of(new GatewayChaos.Answer(1, 1500 * MS, 100 * MS, 502, null, null)),
                B_FROM_1S_TO_3S)).as("names no call").hasSize(1);
        assertThat(GatewayChaos.misnamed(List.of(new GatewayChaos.Answer(1, 9000 * MS, 1 * MS, 503, null, null)),
                B_FROM_1S_TO_3S)).as("a 503 (shed at the door) is no backend's failure").isEmpty();
    }
}
