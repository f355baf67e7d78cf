package dev.weft.dispatch.engine;

import dev.weft.dispatch.config.EndpointConfig;
import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

class RateLimiterTest {
    final AtomicLong now = new AtomicLong(1_000_000_000L);
    final long[] wait = new long[1];

    int takeAll() {
        int n = 0;
        while (limiter.tryTake(wait)) {
            n++;
        }
        return n;
    }

    RateLimiter limiter = new RateLimiter(new EndpointConfig.RateLimit(40, 10), now::get);

    @Test
    void startsEmptyRefillsAtItsShareAndHoldsAtMostItsShareOfTheBurst() {
        limiter.share(1);
        assertThat(takeAll()).as("empty at the start: no burst").isZero();
        assertThat(wait[0]).isBetween(25_000_000L, 25_000_001L); // one token at 40/s
        now.addAndGet(1_000_000_000L);
        assertThat(takeAll()).as("a long idle fills only up to the burst").isEqualTo(10);
        now.addAndGet(500_000_000L);
        assertThat(takeAll()).isEqualTo(10);
        now.addAndGet(100_000_000L);
        assertThat(takeAll()).isEqualTo(4);
        limiter.share(0.5); // the other half of the partitions went to another instance
        now.addAndGet(100_000_000L);
        assertThat(takeAll()).isEqualTo(2);
        now.addAndGet(10_000_000_000L);
        assertThat(takeAll()).as("burst x share").isEqualTo(5);
        limiter.share(0);
        now.addAndGet(10_000_000_000L);
        assertThat(takeAll()).as("no partitions: no deliveries").isZero();
        assertThat(wait[0]).isEqualTo(RateLimiter.MAX_NAP_NANOS);
    }

    @Test
    void aSmallShareStillHoldsOneToken() {
        limiter.share(0.01); // 0.4/s, burst 0.1 -> 1
        now.addAndGet(10_000_000_000L);
        assertThat(takeAll()).isEqualTo(1);
    }

    @Test
    void acquireGivesUpWhenAbandoned() throws Exception {
        limiter.share(0);
        assertThat(limiter.acquire(() -> true)).isFalse();
        limiter.share(1);
        now.addAndGet(1_000_000_000L);
        assertThat(limiter.acquire(() -> true)).as("a token is there: taken without waiting").isTrue();
    }
}
