package dev.weft.agent.boot;

import java.io.Closeable;
import java.lang.reflect.Method;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Jetty 12's {@code QueuedThreadPool}: its selector and acceptor threads stay; its virtual-threads hook
 * ({@code setVirtualThreadsExecutor}) gets an executor, so Jetty runs blocking handlers on virtual threads
 * named after the pool. At most as many handlers run at once as the pool's {@code maxThreads} (or
 * {@code concurrency=N} when larger); the others wait in the order they came, never on Jetty's threads, and
 * no more of them than the pool's own queue holds. When the pool stops, the waiting ones are dropped as the
 * pool drops its queued jobs.
 */
final class JettyPools {
    /**
     * Tasks that may wait when the pool's queue is unbounded (Jetty's default queue grows to
     * {@code Integer.MAX_VALUE}): the capacity Jetty first gives that queue, {@code max(minThreads, 8) * 1024}.
     */
    static final int DEFAULT_QUEUE_PER_MIN_THREAD = 1024;

    private JettyPools() {
    }

    /**
     * At the start of {@code QueuedThreadPool.doStart()}; a pool given a virtual-threads executor by the
     * application keeps it (ours, from a start before a stop, is replaced: it was stopped).
     */
    static void starting(Object pool, int concurrency) throws ReflectiveOperationException {
        Class<?> type = pool.getClass();
        Object given = type.getMethod("getVirtualThreadsExecutor").invoke(pool);
        if (given != null && !(given instanceof Bounded)) {
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
        int min = (int) type.getMethod("getMinThreads").invoke(pool);
        int bound = Math.max(max, concurrency);
        int queue = queueCapacity(pool, min);
        type.getMethod("setVirtualThreadsExecutor", Executor.class).invoke(pool, new Bounded(name + "-virtual-", bound, queue));
        if (given == null) {
            System.err.println("weft agent: " + name + "-virtual-N (" + type.getName() + "): blocking handlers on virtual threads, "
                    + bound + " at once" + (bound > max ? " (concurrency=" + concurrency + "; maxThreads " + max + ")"
                    : " (maxThreads)") + ", up to " + queue + " waiting; its selector and acceptor threads stay");
        }
    }

    /** At the start of {@code QueuedThreadPool.doStop()}: tasks still waiting for a permit are not run. */
    static void stopping(Object pool) throws ReflectiveOperationException {
        if (pool.getClass().getMethod("getVirtualThreadsExecutor").invoke(pool) instanceof Bounded b) {
            b.stop();
        }
    }

    /**
     * The pool's own queue capacity ({@code getQueue()}, protected: Jetty rejects past it), or, when that queue
     * is unbounded or cannot be read (Jetty as a named module that does not open its package),
     * {@code max(minThreads, 8) * 1024}.
     */
    static int queueCapacity(Object pool, int minThreads) {
        for (Class<?> c = pool.getClass(); c != null; c = c.getSuperclass()) {
            try {
                Method m = c.getDeclaredMethod("getQueue");
                m.setAccessible(true);
                if (m.invoke(pool) instanceof BlockingQueue<?> q) {
                    long capacity = (long) q.remainingCapacity() + q.size();
                    if (q.remainingCapacity() != Integer.MAX_VALUE && capacity < Integer.MAX_VALUE) {
                        return (int) capacity;
                    }
                }
                break;
            } catch (NoSuchMethodException next) {
                // a subclass: look in its parent
            } catch (ReflectiveOperationException | RuntimeException unreadable) {
                break;
            }
        }
        return Math.max(minThreads, 8) * DEFAULT_QUEUE_PER_MIN_THREAD;
    }

    /**
     * A virtual thread per task, at most {@code bound} running their task at once; the others wait in a queue of
     * at most {@code maxWaiting} in the order {@code execute} took them (first in, first out: a fair semaphore
     * would order them by when their threads first ran instead), each started on its own virtual thread when
     * one ends. Past {@code maxWaiting}, {@link RejectedExecutionException}, as Jetty's own pool rejects past
     * its queue. Stopped: no task is accepted and the waiting ones are not run ({@link Closeable} ones are
     * closed, as Jetty does with the jobs left in its queue); the running ones finish.
     */
    static final class Bounded implements Executor {
        private final String prefix;
        private final int bound;
        private final int maxWaiting;
        private final Semaphore permits;
        private final LinkedBlockingQueue<Runnable> waiting;
        private final AtomicLong n = new AtomicLong();
        private volatile boolean stopped;

        Bounded(String prefix, int bound, int maxWaiting) {
            this.prefix = prefix;
            this.bound = bound;
            this.maxWaiting = maxWaiting;
            this.permits = new Semaphore(bound);
            this.waiting = new LinkedBlockingQueue<>(maxWaiting);
        }

        @Override
        public void execute(Runnable task) {
            if (stopped) {
                throw new RejectedExecutionException(prefix + "N stopped: " + task);
            }
            if (waiting.isEmpty() && permits.tryAcquire()) {
                start(task);
                return;
            }
            if (!waiting.offer(task)) {
                throw new RejectedExecutionException(prefix + "N: " + bound + " tasks running and " + maxWaiting
                        + " waiting (the pool's queue capacity): " + task);
            }
            startWaiting(); // a turn may have come free meanwhile
        }

        /** Runs waiting tasks while turns are free (each task's end hands its turn on). */
        private void startWaiting() {
            while (!stopped && !waiting.isEmpty() && permits.tryAcquire()) {
                Runnable next = waiting.poll();
                if (next == null) {
                    permits.release();
                } else {
                    start(next);
                }
            }
        }

        /** Holding a turn. */
        private void start(Runnable task) {
            try {
                Thread.ofVirtual().name(prefix + n.incrementAndGet()).start(() -> {
                    try {
                        task.run();
                    } finally {
                        ended();
                    }
                });
            } catch (RuntimeException | Error e) {
                permits.release();
                throw e;
            }
        }

        private void ended() {
            Runnable next = stopped ? null : waiting.poll();
            if (next != null) {
                start(next); // keeps the turn
                return;
            }
            permits.release();
            startWaiting();
        }

        void stop() {
            stopped = true;
            for (Runnable task; (task = waiting.poll()) != null; ) {
                if (task instanceof Closeable c) {
                    try {
                        c.close();
                    } catch (Throwable ignored) {
                        // Jetty logs and goes on; the pool is stopping
                    }
                }
            }
        }

        @Override
        public String toString() {
            return "weft-agent virtual threads " + prefix + "N, " + bound + " at once, " + permits.availablePermits()
                    + " free, " + waiting.size() + " waiting of " + maxWaiting + (stopped ? ", stopped" : "");
        }
    }
}
