package dev.weft.lab.chaos;

import dev.weft.dispatch.engine.WebhookSigning;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** The early-commit check of {@link ChaosLab} on crafted observations: it can fail, and it fails where it should. */
class ChaosCheckTest {
    static final String TOPIC = "t";
    static final ChaosLab.Sent BOTH = new ChaosLab.Sent(0, 0, true); // matches a and b
    static final String A = WebhookSigning.webhookId(TOPIC, 0, 0, "a");
    static final String B = WebhookSigning.webhookId(TOPIC, 0, 0, "b");

    private static ChaosLab.Sample committedAt(long at, Set<String> received) {
        return new ChaosLab.Sample(at, Map.of(new TopicPartition(TOPIC, 0), 1L), received);
    }

    @Test
    void anOffsetCommittedBeforeOneEndpointGotItsRecordIsReported() {
        List<String> early = ChaosLab.earlyCommits(TOPIC, List.of(BOTH), List.of(committedAt(1000, Set.of(A))), Map.of());
        assertThat(early).singleElement().asString().contains("before b 0 settled");
    }

    @Test
    void deliveredOrParkedBeforeTheCommitIsSettled() {
        assertThat(ChaosLab.earlyCommits(TOPIC, List.of(BOTH), List.of(committedAt(1000, Set.of(A, B))), Map.of())).isEmpty();
        assertThat(ChaosLab.earlyCommits(TOPIC, List.of(BOTH), List.of(committedAt(1000, Set.of(A))), Map.of(B, 999L)))
                .isEmpty();
        assertThat(ChaosLab.earlyCommits(TOPIC, List.of(BOTH), List.of(committedAt(1000, Set.of(A))), Map.of(B, 1001L)))
                .as("parked only after the commit").hasSize(1);
    }
}
