package dev.weft.client.policy;

import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RetryPolicyTest {
    @Test
    void backoffGrowsWithJitterAndStaysUnderTheCap() {
        RetryPolicy p = RetryPolicy.DEFAULT.withAttempts(10).withBackoff(Duration.ofMillis(100), Duration.ofSeconds(1));
        for (int i = 0; i < 200; i++) {
            assertThat(p.backoffBefore(2)).isBetween(Duration.ofMillis(50), Duration.ofMillis(100));
            assertThat(p.backoffBefore(3)).isBetween(Duration.ofMillis(100), Duration.ofMillis(200));
            assertThat(p.backoffBefore(9)).isBetween(Duration.ofMillis(500), Duration.ofSeconds(1));
        }
    }

    @Test
    void onlyIdempotentMethodsUnlessAsked() {
        assertThat(RetryPolicy.DEFAULT.allows("GET")).isTrue();
        assertThat(RetryPolicy.DEFAULT.allows("PUT")).isTrue();
        assertThat(RetryPolicy.DEFAULT.allows("POST")).isFalse();
        assertThat(RetryPolicy.DEFAULT.withNonIdempotent(true).allows("POST")).isTrue();
    }

    @Test
    void attemptsAreBounded() {
        assertThatThrownBy(() -> RetryPolicy.DEFAULT.withAttempts(0)).hasMessageContaining("1..10");
        assertThatThrownBy(() -> RetryPolicy.DEFAULT.withAttempts(11)).hasMessageContaining("1..10");
    }
}
