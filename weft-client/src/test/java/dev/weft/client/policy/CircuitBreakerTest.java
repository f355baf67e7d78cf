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
            long pass = breaker.acquire();
            assertThat(pass).isNotEqualTo(CircuitBreaker.REFUSED);
            breaker.onFailure(pass);
        }
        assertThat(breaker.state()).isEqualTo(CircuitBreaker.State.OPEN);
        assertThat(breaker.acquire()).isEqualTo(CircuitBreaker.REFUSED);

        now.addAndGet(Duration.ofSeconds(1).toNanos());
        long probe = breaker.acquire();
        assertThat(probe).as("the first call after open_for is the probe").isNotEqualTo(CircuitBreaker.REFUSED);
        assertThat(breaker.acquire()).as("only one probe at a time").isEqualTo(CircuitBreaker.REFUSED);
        breaker.onSuccess(probe);
        assertThat(breaker.state()).isEqualTo(CircuitBreaker.State.CLOSED);
        assertThat(breaker.acquire()).isNotEqualTo(CircuitBreaker.REFUSED);
    }

    @Test
    void aFailedProbeOpensAgain() {
        for (int i = 0; i < 3; i++) {
            breaker.onFailure(breaker.acquire());
        }
        now.addAndGet(Duration.ofSeconds(1).toNanos());
        long probe = breaker.acquire();
        assertThat(probe).isNotEqualTo(CircuitBreaker.REFUSED);
        breaker.onFailure(probe);
        assertThat(breaker.state()).isEqualTo(CircuitBreaker.State.OPEN);
        assertThat(breaker.acquire()).isEqualTo(CircuitBreaker.REFUSED);
        assertThat(breaker.timesOpened()).isEqualTo(2);
    }

    @Test
    void opensOnTheFailureRatioOfTheTimeWindowOnlyPastMinCalls() {
        CircuitBreaker b = new CircuitBreaker(BreakerPolicy.DEFAULT.withOpenFor(Duration.ofSeconds(1)), now::get);
        for (int i = 0; i < 99; i++) { // alternate: half of the calls fail, but fewer than min_calls (100)
            long pass = b.acquire();
            if (i % 2 == 0) {
                b.onFailure(pass);
            } else {
                b.onSuccess(pass);
            }
            assertThat(b.state()).as("below min_calls after %d calls", i + 1).isEqualTo(CircuitBreaker.State.CLOSED);
        }
        b.onFailure(b.acquire()); // 100 calls, 51 failed
        assertThat(b.state()).isEqualTo(CircuitBreaker.State.OPEN);
    }

    @Test
    void oldCallsLeaveTheWindow() {
        CircuitBreaker b = new CircuitBreaker(BreakerPolicy.DEFAULT, now::get);
        for (int i = 0; i < 99; i++) {
            b.onFailure(b.acquire());
        }
        now.addAndGet(Duration.ofSeconds(11).toNanos()); // past the 10 s window: the 99 failures are forgotten
        for (int i = 0; i < 99; i++) {
            b.onSuccess(b.acquire());
        }
        b.onFailure(b.acquire());
        assertThat(b.state()).isEqualTo(CircuitBreaker.State.CLOSED);
    }

    @Test
    void byDefaultFailuresInARowDoNotOpenIt() {
        CircuitBreaker b = new CircuitBreaker(BreakerPolicy.DEFAULT, now::get);
        for (int i = 0; i < 50; i++) {
            b.onFailure(b.acquire());
        }
        assertThat(b.state()).as("50 failures, below min_calls").isEqualTo(CircuitBreaker.State.CLOSED);
    }

    @Test
    void halfOpenProbesScaleWithTraffic() {
        CircuitBreaker b = new CircuitBreaker(BreakerPolicy.DEFAULT.withOpenFor(Duration.ofSeconds(1)), now::get);
        for (int i = 0; i < 1000; i++) { // 1000 calls in the 10 s window: 100 calls/s
            b.onFailure(b.acquire());
            now.addAndGet(Duration.ofMillis(5).toNanos());
        }
        assertThat(b.state()).isEqualTo(CircuitBreaker.State.OPEN);
        assertThat(b.probesAllowed()).as("a tenth of the calls per second").isGreaterThanOrEqualTo(10);
        now.addAndGet(Duration.ofSeconds(1).toNanos());
        int probes = b.probesAllowed();
        long[] passes = new long[probes];
        for (int i = 0; i < probes; i++) {
            passes[i] = b.acquire();
            assertThat(passes[i]).isNotEqualTo(CircuitBreaker.REFUSED);
        }
        assertThat(b.acquire()).as("no more than the batch").isEqualTo(CircuitBreaker.REFUSED);
        for (int i = 0; i < probes - 1; i++) {
            b.onSuccess(passes[i]);
            assertThat(b.state()).isEqualTo(CircuitBreaker.State.HALF_OPEN);
        }
        b.onSuccess(passes[probes - 1]);
        assertThat(b.state()).isEqualTo(CircuitBreaker.State.CLOSED);
    }

    @Test
    void ignoredOutcomesDoNotCountAndFreeTheProbe() {
        for (int i = 0; i < 3; i++) {
            breaker.onFailure(breaker.acquire());
        }
        now.addAndGet(Duration.ofSeconds(1).toNanos());
        long probe = breaker.acquire();
        assertThat(probe).isNotEqualTo(CircuitBreaker.REFUSED);
        breaker.onIgnored(probe); // a cancelled probe says nothing
        assertThat(breaker.acquire()).isNotEqualTo(CircuitBreaker.REFUSED);
    }

    @Test
    void aCallPermittedBeforeTheBreakerOpenedNeitherDecidesNorFreesAProbe() {
        long slow = breaker.acquire(); // admitted while closed; it answers much later
        long slow2 = breaker.acquire();
        for (int i = 0; i < 3; i++) {
            breaker.onFailure(breaker.acquire());
        }
        assertThat(breaker.state()).isEqualTo(CircuitBreaker.State.OPEN);
        now.addAndGet(Duration.ofSeconds(1).toNanos());
        long probe = breaker.acquire();
        assertThat(probe).as("the probe").isNotEqualTo(CircuitBreaker.REFUSED);

        breaker.onSuccess(slow); // before: this closed the breaker while its probe was still out
        assertThat(breaker.state()).isEqualTo(CircuitBreaker.State.HALF_OPEN);
        breaker.onIgnored(slow2); // before: this freed the probe's place, and a second probe went out
        assertThat(breaker.acquire()).as("still one probe at a time").isEqualTo(CircuitBreaker.REFUSED);

        breaker.onFailure(probe);
        assertThat(breaker.state()).as("the probe's own answer decides").isEqualTo(CircuitBreaker.State.OPEN);
        now.addAndGet(Duration.ofSeconds(1).toNanos());
        long probe2 = breaker.acquire();
        breaker.onSuccess(probe2);
        assertThat(breaker.state()).isEqualTo(CircuitBreaker.State.CLOSED);
        breaker.onFailure(probe); // late and stale: not counted in the new closed window
        breaker.onFailure(probe);
        breaker.onFailure(probe);
        assertThat(breaker.state()).as("three stale failures do not open it").isEqualTo(CircuitBreaker.State.CLOSED);
    }
}
