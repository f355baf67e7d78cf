package dev.weft.agent.boot;

import java.util.concurrent.Executor;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Jetty 12's {@code QueuedThreadPool}: its selector and acceptor threads stay; its virtual-threads hook
 * ({@code setVirtualThreadsExecutor}) gets an executor, so Jetty runs blocking handlers on virtual threads
 * named after the pool. At most as many handlers run at once as the pool's {@code maxThreads} (or
 * {@code concurrency=N} when larger); the others wait on their own virtual thread, never on Jetty's.
 */
final class JettyPools {
    private JettyPools() {
    }

    /** At the start of {@code QueuedThreadPool.doStart()}; a pool given a virtual-threads executor keeps it. */
    static void starting(Object pool, int concurrency) throws ReflectiveOperationException {
        Class<?> type = pool.getClass();
        if (type.getMethod("getVirtualThreadsExecutor").invoke(pool) != null) {
            return;
        }
        String name = (String) type.getMethod("getName").invoke(pool);
        for (String glob : Pools.excludes()) {
            if (Glob.matches(glob, name) || Glob.matches(glob, type.getName())) {
                if (Pools.verbose()) {
                    System.err.println("weft agent: left on platform threads: " + name + " (" + type.getName() + "): exclude=" + glob);
                }
                return;
            }
        }
        int max = (int) type.getMethod("getMaxThreads").invoke(pool);
        int bound = Math.max(max, concurrency);
        type.getMethod("setVirtualThreadsExecutor", Executor.class).invoke(pool, new Bounded(name + "-virtual-", bound));
        System.err.println("weft agent: " + name + "-virtual-N (" + type.getName() + "): blocking handlers on virtual threads, "
                + bound + " at once" + (bound > max ? " (concurrency=" + concurrency + "; maxThreads " + max + ")"
                : " (maxThreads)") + "; its selector and acceptor threads stay");
    }

    /** A virtual thread per task, at most {@code bound} running their task at once. */
    static final class Bounded implements Executor {
        private final String prefix;
        private final Semaphore permits;
        private final AtomicLong n = new AtomicLong();

        Bounded(String prefix, int bound) {
            this.prefix = prefix;
            this.permits = new Semaphore(bound);
        }

        @Override
        public void execute(Runnable task) {
            Thread.ofVirtual().name(prefix + n.incrementAndGet()).start(() -> {
                permits.acquireUninterruptibly();
                try {
                    task.run();
                } finally {
                    permits.release();
                }
            });
        }

        @Override
        public String toString() {
            return "weft-agent virtual threads " + prefix + "N, " + permits.availablePermits() + " permits free";
        }
    }
}
