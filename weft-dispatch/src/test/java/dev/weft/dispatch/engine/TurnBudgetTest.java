package dev.weft.dispatch.engine;

import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TurnBudgetTest {
    @Test
    void aTurnsStepsShareOneBudgetAndAStepThatMightPassItIsNotAllowed() throws Exception {
        TurnBudget turn = new TurnBudget(Duration.ofMillis(300));
        assertThat(turn.onTurnThread()).as("no turn started yet").isFalse();
        turn.start();
        assertThat(turn.onTurnThread()).isTrue();
        assertThat(turn.left()).isPositive().isLessThanOrEqualTo(Duration.ofMillis(300));
        assertThat(turn.allows(Duration.ofMillis(100))).isTrue();
        assertThat(turn.allows(Duration.ofMillis(301))).as("longer than the whole budget").isFalse();
        assertThat(turn.spent()).isFalse();
        Thread.sleep(Duration.ofMillis(320)); // the turn's own time passing is what is tested
        assertThat(turn.spent()).isTrue();
        assertThat(turn.left()).isZero();
        assertThat(turn.allows(Duration.ofMillis(1))).isFalse();
        turn.start();
        assertThat(turn.spent()).as("a new turn, a whole budget").isFalse();
        boolean[] other = new boolean[1];
        Thread t = Thread.ofVirtual().start(() -> other[0] = turn.onTurnThread());
        t.join();
        assertThat(other[0]).as("another thread").isFalse();
    }

    @Test
    void aBudgetMustBePositive() {
        assertThatThrownBy(() -> new TurnBudget(Duration.ZERO)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must be positive");
    }
}
