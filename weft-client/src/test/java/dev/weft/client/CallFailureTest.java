package dev.weft.client;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class CallFailureTest {
    @Test
    void labelsAreTheStableNames() {
        assertThat(CallFailure.status(503).label()).isEqualTo("status-503");
        assertThat(CallFailure.status(404).message()).isEqualTo("answered 404");
        assertThat(CallFailure.of(Reason.TIMEOUT_HEADERS, "m").label()).isEqualTo("timeout-headers");
        assertThat(new CallFailure(Reason.TOO_LARGE, 200, "m").label()).as("the status of a too-large answer is not its label")
                .isEqualTo("too-large");
        assertThat(CallFailure.of(Reason.PROTOCOL, "m").label()).isEqualTo("protocol-error");
    }

    @Test
    void kinds() {
        assertThat(CallFailure.status(500).isStatus()).isTrue();
        assertThat(CallFailure.status(500).isTimeout()).isFalse();
        assertThat(CallFailure.of(Reason.DEADLINE, "m").isTimeout()).isTrue();
        assertThat(CallFailure.of(Reason.RESET, "m").isStatus()).isFalse();
    }

    @Test
    void aStatusFailureNeedsAnErrorStatusAndEveryFailureAMessage() {
        assertThatThrownBy(() -> CallFailure.status(200)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> CallFailure.of(Reason.IO, null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> CallFailure.of(null, "m")).isInstanceOf(NullPointerException.class);
    }

    @Test
    void notesAddToTheMessage() {
        assertThat(CallFailure.status(503).withNote(" (after 3 attempts)").message())
                .isEqualTo("answered 503 (after 3 attempts)");
    }
}
