package dev.weft.agent.apps;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.locks.LockSupport;

/**
 * What the agent's pinned count costs (docs/agent.md, "What the count costs"): run it with and without the agent's
 * {@code pinned} option, alternately. Arguments: TASKS IDLE_SECONDS. A fixed pool of 200 (converted by the agent)
 * runs TASKS/4 tasks to warm up, then TASKS tasks, each parking its virtual thread 20 us (a park is where JFR checks
 * whether a virtual thread is pinned), then the process idles IDLE_SECONDS. Prints one line: the milliseconds from
 * the JVM's start to {@code main} ({@code toMainMs}: the option starts JFR before {@code main}), the process's CPU
 * seconds and wall seconds for the TASKS, its CPU seconds while idle, and its peak resident memory ({@code VmHWM}).
 */
public final class PinnedCostApp {
    private PinnedCostApp() {
    }

    public static void main(String[] args) throws Exception {
        long toMain = System.currentTimeMillis() - ManagementFactory.getRuntimeMXBean().getStartTime();
        int tasks = Integer.parseInt(args[0]);
        ExecutorService pool = Executors.newFixedThreadPool(200);
        run(pool, tasks / 4);
        double c0 = cpuSeconds();
        long t0 = System.nanoTime();
        run(pool, tasks);
        double c1 = cpuSeconds();
        long t1 = System.nanoTime();
        Thread.sleep(Long.parseLong(args[1]) * 1000); // idle: what the recording's flushes cost on their own
        double c2 = cpuSeconds();
        String hwm = Files.readAllLines(Path.of("/proc/self/status")).stream().filter(l -> l.startsWith("VmHWM"))
                .findFirst().orElse("VmHWM: ?").replaceAll("\\s+", " ");
        System.out.printf("toMainMs=%d tasksCpuS=%.2f tasksWallS=%.2f idleCpuS=%.3f %s%n", toMain, c1 - c0,
                (t1 - t0) / 1e9, c2 - c1, hwm);
        pool.shutdown();
    }

    private static double cpuSeconds() {
        return ProcessHandle.current().info().totalCpuDuration().orElseThrow().toNanos() / 1e9;
    }

    private static void run(ExecutorService pool, int n) throws InterruptedException {
        CountDownLatch done = new CountDownLatch(n);
        for (int i = 0; i < n; i++) {
            pool.execute(() -> {
                LockSupport.parkNanos(20_000);
                done.countDown();
            });
        }
        done.await();
    }
}
