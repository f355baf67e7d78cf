package dev.weft.os;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** For tests of what happens while the gateway is short of CPU (shared with other modules as the test-jar). */
public final class Spinners {
    private Spinners() {
    }

    /**
     * Keeps every carrier of the virtual-thread scheduler busy for {@code d} (virtual threads that spin and never
     * yield, so no other virtual thread runs meanwhile); returns once all of them spin.
     */
    public static List<Thread> occupyEveryCarrier(Duration d) throws InterruptedException {
        int carriers = Integer.getInteger("jdk.virtualThreadScheduler.parallelism",
                Runtime.getRuntime().availableProcessors());
        CountDownLatch spinning = new CountDownLatch(carriers);
        long until = System.nanoTime() + d.toNanos();
        List<Thread> spinners = new ArrayList<>();
        for (int i = 0; i < carriers; i++) {
            spinners.add(Thread.ofVirtual().start(() -> {
                spinning.countDown();
                while (System.nanoTime() - until < 0) {
                    Thread.onSpinWait();
                }
            }));
        }
        assertThat(spinning.await(5, TimeUnit.SECONDS)).as("every carrier spins").isTrue();
        return spinners;
    }
}
