package dev.weft.os;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** A child JVM that sees one CPU ({@code -XX:ActiveProcessorCount=1}) runs two virtual threads at once or not. */
class CarriersTest {

    /** The child: {@code set} or {@code leave}; prints the carriers two busy virtual threads ran on. */
    public static final class Child {
        public static void main(String[] args) throws Exception {
            if (args[0].equals("set")) {
                Carriers.atLeastTwo();
            }
            Set<String> carriers = ConcurrentHashMap.newKeySet();
            CountDownLatch both = new CountDownLatch(2);
            List<Thread> threads = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                threads.add(Thread.ofVirtual().start(() -> {
                    both.countDown();
                    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
                    // spin (never yield) until the other one has started too, or 3 s
                    while (both.getCount() > 0 && System.nanoTime() < until) {
                        Thread.onSpinWait();
                    }
                    String me = Thread.currentThread().toString(); // VirtualThread[#22]/runnable@ForkJoinPool-1-worker-1
                    carriers.add(me.substring(me.indexOf('@') + 1));
                }));
            }
            for (Thread t : threads) {
                t.join();
            }
            System.out.println("carriers " + carriers.size() + " parallelism " + System.getProperty(Carriers.PROPERTY));
        }
    }

    private static String child(String mode, String... jvm) throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(ProcessHandle.current().info().command().orElse("java"));
        cmd.add("-XX:ActiveProcessorCount=1");
        cmd.addAll(List.of(jvm));
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), Child.class.getName(), mode));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        return out;
    }

    @Test
    void onOneCpuTwoCarriersRunTwoVirtualThreadsAtOnce() throws Exception {
        assertThat(child("leave")).as("the JDK's default on one CPU").isEqualTo("carriers 1 parallelism null");
        assertThat(child("set")).isEqualTo("carriers 2 parallelism 2");
    }

    @Test
    void aParallelismTheUserSetIsKept() throws Exception {
        assertThat(child("set", "-D" + Carriers.PROPERTY + "=1")).isEqualTo("carriers 1 parallelism 1");
    }
}
