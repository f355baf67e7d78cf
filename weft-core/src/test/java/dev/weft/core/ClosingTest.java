package dev.weft.core;

import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class ClosingTest {
    @Test
    void closesAndSwallowsWhatCloseThrows() {
        AtomicInteger closed = new AtomicInteger();
        Closing.quietly(() -> {
            closed.incrementAndGet();
            throw new java.io.IOException("broken pipe");
        });
        Closing.quietly(closed::incrementAndGet);
        assertEquals(2, closed.get());
    }

    @Test
    void nullIsNothingToClose() {
        Closing.quietly(null);
    }

    @Test
    void anErrorStillPropagates() {
        assertThrows(OutOfMemoryError.class, () -> Closing.quietly(() -> {
            throw new OutOfMemoryError("no room");
        }));
    }
}
