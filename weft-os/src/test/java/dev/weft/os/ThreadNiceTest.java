package dev.weft.os;

import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

class ThreadNiceTest {
    /** Runs {@code body} on a fresh platform thread (a thread's nice is its own) and returns what it returned. */
    private static <T> T onOwnThread(java.util.function.Supplier<T> body) throws InterruptedException {
        AtomicReference<T> out = new AtomicReference<>();
        Thread t = Thread.ofPlatform().start(() -> out.set(body.get()));
        t.join();
        return out.get();
    }

    private static boolean linux() {
        return Files.isDirectory(Path.of("/proc/thread-self"));
    }

    @Test
    void loweringTheCallingThreadIsAlwaysAllowedAndTouchesNoOtherThread() throws Exception {
        assumeTrue(linux(), "ThreadNice works on Linux only (no /proc/thread-self here)");
        Integer before = ThreadNice.current();
        int target = Math.min(19, before + 3);
        Object[] r = onOwnThread(() -> new Object[] {ThreadNice.setCurrent(target), ThreadNice.current()});
        assertThat(r[0]).isEqualTo(ThreadNice.Result.SET);
        assertThat(r[1]).isEqualTo(target);
        assertThat(ThreadNice.current()).as("the test's own thread").isEqualTo(before);
    }

    @Test
    void raisingNeedsCapSysNice() throws Exception {
        assumeTrue(linux(), "ThreadNice works on Linux only (no /proc/thread-self here)");
        Integer before = ThreadNice.current();
        int target = Math.max(-20, before - 5);
        Object[] r = onOwnThread(() -> new Object[] {ThreadNice.setCurrent(target), ThreadNice.current()});
        if (ThreadNice.mayRaiseTo(target)) { // what /proc says of the process's rights, against what the kernel did
            assertThat(r[0]).isEqualTo(ThreadNice.Result.SET);
            assertThat(r[1]).isEqualTo(target);
        } else {
            assertThat(r[0]).isEqualTo(ThreadNice.Result.DENIED);
            assertThat(r[1]).as("unchanged").isEqualTo(before);
        }
    }

    @Test
    void outOfRangeIsRefused() {
        assertThatThrownBy(() -> ThreadNice.setCurrent(-21)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ThreadNice.setCurrent(20)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aRaisedThreadSetsBackTheThreadsThatInheritedItsNiceButNotThoseItKeeps() throws Exception {
        assumeTrue(linux(), "ThreadNice works on Linux only (no /proc/thread-self here)");
        int before = ThreadNice.current();
        int raised = Math.max(-20, before - 5);
        assumeTrue(ThreadNice.mayRaiseTo(raised),
                "raising a thread needs CAP_SYS_NICE, which this process has not: nothing to set back");
        java.util.concurrent.CountDownLatch up = new java.util.concurrent.CountDownLatch(2);
        java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(1);
        AtomicReference<Integer> inherited = new AtomicReference<>();
        AtomicReference<Integer> kept = new AtomicReference<>();
        Runnable raise = () -> {
            ThreadNice.setCurrent(raised);
            up.countDown();
            try {
                done.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            (Thread.currentThread().getName().equals("keep-me") ? kept : inherited).set(ThreadNice.current());
        };
        Thread a = Thread.ofPlatform().name("inherited").start(raise);
        Thread b = Thread.ofPlatform().name("keep-me").start(raise);
        up.await();
        int n = ThreadNice.resetOthers(raised, before, "keep-me");
        done.countDown();
        a.join();
        b.join();
        assertThat(n).isGreaterThanOrEqualTo(1);
        assertThat(inherited.get()).isEqualTo(before);
        assertThat(kept.get()).isEqualTo(raised);
    }
}
