package dev.weft.client.policy;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/** The breaker's state machine, on a hand-moved clock (a unit test; the integration test uses real time). */
class CircuitBreakerTest {
    private final AtomicLong now = new AtomicLong();
    private final BreakerPolicy policy = BreakerPolicy.DEFAULT.withConsecutiveFailures(3)
            .withOpenFor(Duration.ofSeconds(1));
    private final CircuitBreaker breaker = new CircuitBreaker(policy, now::get);

    @Test
    void opensAfterConsecutiveFailuresAndRecoversThroughOneProbe() {
        for (int i = 0; i < 3; i++) {
            assertThat(breaker.tryAcquire()).isTrue();
            breaker.onFailure();
        }
        assertThat(breaker.state()).isEqualTo(CircuitBreaker.State.OPEN);
        assertThat(breaker.tryAcquire()).isFalse();

        now.addAndGet(Duration.ofSeconds(1).toNanos());
        assertThat(breaker.tryAcquire()).as("the first call after open_for is the probe").isTrue();
        assertThat(breaker.tryAcquire()).as("only one probe at a time").isFalse();
        breaker.onSuccess();
        assertThat(breaker.state()).isEqualTo(CircuitBreaker.State.CLOSED);
        assertThat(breaker.tryAcquire()).isTrue();
    }

    @Test
    void aFailedProbeOpensAgain() {
        for (int i = 0; i < 3; i++) {
            breaker.tryAcquire();
            breaker.onFailure();
        }
        now.addAndGet(Duration.ofSeconds(1).toNanos());
        assertThat(breaker.tryAcquire()).isTrue();
        breaker.onFailure();
        assertThat(breaker.state()).isEqualTo(CircuitBreaker.State.OPEN);
        assertThat(breaker.tryAcquire()).isFalse();
        assertThat(breaker.timesOpened()).isEqualTo(2);
    }

    @Test
    void opensOnTheFailureRatioOfTheWindow() {
        CircuitBreaker b = new CircuitBreaker(new BreakerPolicy(true, 100, 0.5, 10, 10, Duration.ofSeconds(1), 1),
                now::get);
        for (int i = 0; i < 9; i++) { // alternate: never 100 in a row, but half of the window fails
            b.tryAcquire();
            if (i % 2 == 0) {
                b.onFailure();
            } else {
                b.onSuccess();
            }
            assertThat(b.state()).as("below min_calls after %d calls", i + 1).isEqualTo(CircuitBreaker.State.CLOSED);
        }
        b.tryAcquire();
        b.onSuccess(); // 10 calls, 5 failed: ratio 0.5
        assertThat(b.state()).isEqualTo(CircuitBreaker.State.OPEN);
    }

    @Test
    void ignoredOutcomesDoNotCountAndFreeTheProbe() {
        for (int i = 0; i < 3; i++) {
            breaker.tryAcquire();
            breaker.onFailure();
        }
        now.addAndGet(Duration.ofSeconds(1).toNanos());
        assertThat(breaker.tryAcquire()).isTrue();
        breaker.onIgnored(); // a cancelled probe says nothing
        assertThat(breaker.tryAcquire()).isTrue();
    }
}
