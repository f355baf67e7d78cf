package dev.weft.core;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

class OncePerTest {
    @Test
    void theFirstCallIsDueThenNoneUntilThePeriodHasPassed() {
        OncePer hourly = new OncePer(Duration.ofHours(1));
        assertThat(hourly.due()).isTrue();
        assertThat(hourly.due()).isFalse();
        assertThat(hourly.due()).isFalse();
        OncePer always = new OncePer(Duration.ZERO);
        assertThat(always.due()).isTrue();
        assertThat(always.due()).isTrue();
    }

    @Test
    void manyThreadsAtOnceGetOneReport() throws Exception {
        OncePer hourly = new OncePer(Duration.ofHours(1));
        AtomicInteger yes = new AtomicInteger();
        Thread[] threads = new Thread[16];
        for (int i = 0; i < threads.length; i++) {
            threads[i] = Thread.ofPlatform().start(() -> {
                for (int k = 0; k < 1_000; k++) {
                    if (hourly.due()) {
                        yes.incrementAndGet();
                    }
                }
            });
        }
        for (Thread t : threads) {
            t.join();
        }
        assertThat(yes.get()).isEqualTo(1);
    }
}
