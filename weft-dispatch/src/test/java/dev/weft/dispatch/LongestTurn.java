package dev.weft.dispatch;

import dev.weft.dispatch.engine.Dispatcher;

import java.util.concurrent.atomic.AtomicLong;

/** Samples a dispatcher's {@code consumer_turn_ms} every 50 ms and keeps the longest seen, until closed. */
final class LongestTurn implements AutoCloseable {
    private final AtomicLong longest = new AtomicLong();
    private final Thread sampler;

    private LongestTurn(Dispatcher d) {
        sampler = Thread.ofVirtual().start(() -> {
            while (!Thread.currentThread().isInterrupted()) {
                longest.accumulateAndGet(d.health().consumerTurnMs(), Math::max);
                try {
                    Thread.sleep(50); // sampling the turn's age, not waiting for a condition
                } catch (InterruptedException e) {
                    return;
                }
            }
        });
    }

    static LongestTurn of(Dispatcher d) {
        return new LongestTurn(d);
    }

    /** The longest turn seen so far, in ms. */
    long ms() {
        return longest.get();
    }

    @Override
    public void close() throws InterruptedException {
        sampler.interrupt();
        sampler.join();
    }
}
