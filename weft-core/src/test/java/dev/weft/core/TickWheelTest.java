package dev.weft.core;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

class TickWheelTest {
    /** An item due at a fixed time; records when the wheel fired it. */
    private static final class Item {
        final long due;
        volatile long firedAt;

        Item(long due) {
            this.due = due;
        }
    }

    @Test
    void firesEveryItemNotBeforeItsTimeAndNeverARemovedOne() throws InterruptedException {
        int n = 300;
        ConcurrentHashMap<Item, Boolean> seen = new ConcurrentHashMap<>();
        // 8 slots of 1 ms: most items are due more than one turn of the wheel away
        TickWheel<Item> wheel = new TickWheel<>("test-wheel", Duration.ofMillis(1), 8, i -> i.due, i -> {
            i.firedAt = System.nanoTime();
            seen.put(i, true);
        });
        Item[] items = new Item[n];
        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++) {
            items[i] = new Item(t0 + TimeUnit.MILLISECONDS.toNanos(300 + i % 100));
            wheel.add(items[i]);
        }
        int removed = 0;
        for (int i = 1; i < n; i += 2) {
            if (wheel.remove(items[i])) {
                removed++;
            }
        }
        int kept = n - removed;
        await("the items not removed have fired").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(10))
                .until(() -> seen.size() >= kept);
        Thread.sleep(200); // the condition under test: any removed item that would (wrongly) fire has had its time
        assertThat(seen).hasSize(n - removed);
        for (int i = 0; i < n; i++) {
            if (seen.containsKey(items[i])) {
                assertThat(items[i].firedAt - items[i].due).as("item %d fired early", i).isGreaterThanOrEqualTo(0);
                assertThat(wheel.remove(items[i])).as("a fired item is no longer filed").isFalse();
            }
        }
        assertThat(removed).as("removed before their time (all were 300 ms or more away)").isPositive();
    }

    @Test
    void sleepsWhileEmptyAndWakesForTheNextItem() throws InterruptedException {
        CountDownLatch fired = new CountDownLatch(1);
        TickWheel<Item> wheel = new TickWheel<>("test-wheel-idle", Duration.ofMillis(1), 16, i -> i.due,
                i -> fired.countDown());
        Thread.sleep(50); // the condition under test: nothing filed, the sweeper parks
        wheel.add(new Item(System.nanoTime()));
        assertThat(fired.await(30, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void closeHandsBackWhatIsFiledStopsTheSweeperAndFilesNothingMore() throws InterruptedException {
        ConcurrentHashMap<Item, Boolean> seen = new ConcurrentHashMap<>();
        TickWheel<Item> wheel = new TickWheel<>("test-wheel-close", Duration.ofMillis(1), 16, i -> i.due,
                i -> seen.put(i, true));
        Item later = new Item(System.nanoTime() + TimeUnit.HOURS.toNanos(1));
        Item other = new Item(System.nanoTime() + TimeUnit.HOURS.toNanos(2));
        assertThat(wheel.add(later)).isTrue();
        assertThat(wheel.add(other)).isTrue();
        assertThat(wheel.close()).containsExactlyInAnyOrder(later, other);
        assertThat(wheel.add(new Item(System.nanoTime()))).as("closed: not filed").isFalse();
        assertThat(wheel.remove(later)).as("handed back, so no longer filed").isFalse();
        Thread sweeper = Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().equals("test-wheel-close")).findFirst().orElse(null);
        if (sweeper != null) {
            sweeper.join(TimeUnit.SECONDS.toMillis(30));
            assertThat(sweeper.isAlive()).as("the sweeper stopped").isFalse();
        }
        assertThat(seen).as("the action never ran").isEmpty();
    }
}
