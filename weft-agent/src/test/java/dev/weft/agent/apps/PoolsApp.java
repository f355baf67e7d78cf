package dev.weft.agent.apps;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import javax.management.MBeanServer;
import javax.management.ObjectName;

/**
 * An application that knows nothing of the agent: it uses thread pools as code written before virtual threads
 * does, and prints what it sees as {@code scenario.key=value} lines, for AgentIT to judge with and without the
 * agent. Arguments: the scenarios to run.
 */
public final class PoolsApp {
    private PoolsApp() {
    }

    public static void main(String[] args) throws Exception {
        for (String s : args) {
            switch (s) {
                case "fixed" -> fixed();
                case "cached" -> cached();
                case "single" -> single();
                case "custom" -> custom();
                case "hooks" -> hooks();
                case "abort" -> abort();
                case "callerruns" -> callerRuns();
                case "shutdownnow" -> shutdownNow();
                case "invokeall" -> invokeAll();
                case "subclass" -> subclass();
                case "scheduled" -> scheduled();
                case "excluded" -> excluded();
                case "concurrency" -> concurrency();
                case "jfr" -> jfr();
                case "wrapped" -> wrapped();
                case "group" -> group();
                case "platformfactory" -> platformFactory();
                case "started" -> started();
                case "resize" -> resize();
                case "churn" -> churn();
                case "doctor" -> doctor();
                default -> throw new IllegalArgumentException(s);
            }
        }
        System.out.println("done");
    }

    static void print(String scenario, String key, Object value) {
        System.out.println(scenario + "." + key + "=" + value);
    }

    static String describe(Thread t) {
        return t.getName() + (t.isVirtual() ? " virtual" : " platform");
    }

    /** Runs {@code n} tasks that all wait until every one has started; returns their threads. */
    static Set<String> together(ExecutorService e, int n) throws Exception {
        CountDownLatch all = new CountDownLatch(n);
        List<Future<String>> fs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            fs.add(e.submit(() -> {
                all.countDown();
                all.await();
                return describe(Thread.currentThread());
            }));
        }
        Set<String> threads = new TreeSet<>();
        for (Future<String> f : fs) {
            threads.add(f.get(30, TimeUnit.SECONDS));
        }
        return threads;
    }

    static void fixed() throws Exception {
        ThreadPoolExecutor e = (ThreadPoolExecutor) Executors.newFixedThreadPool(3);
        print("fixed", "threads", together(e, 3));
        print("fixed", "poolSize", e.getPoolSize());
        print("fixed", "max", e.getMaximumPoolSize());

        // the agent's MBean for this pool, named by its thread-name pattern
        String pattern = e.submit(() -> Thread.currentThread().getName()).get().replaceAll("\\d+$", "N");
        ObjectName name = new ObjectName("dev.weft.agent:type=Pool,name=" + ObjectName.quote(pattern));
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        print("fixed", "mbean", server.isRegistered(name));
        if (server.isRegistered(name)) {
            print("fixed", "mbean.poolSize", server.getAttribute(name, "PoolSize"));
            print("fixed", "mbean.max", server.getAttribute(name, "MaximumPoolSize"));
            print("fixed", "mbean.class", server.getAttribute(name, "ExecutorClass"));
        }
        e.shutdown();
        print("fixed", "terminated", e.awaitTermination(30, TimeUnit.SECONDS));
        print("fixed", "completed", e.getCompletedTaskCount()); // the three together and the name
    }

    static void cached() throws Exception {
        ThreadPoolExecutor e = (ThreadPoolExecutor) Executors.newCachedThreadPool();
        print("cached", "threads", together(e, 5));
        print("cached", "largest", e.getLargestPoolSize());
        e.shutdown();
        e.awaitTermination(30, TimeUnit.SECONDS);
    }

    static void single() throws Exception {
        ExecutorService e = Executors.newSingleThreadExecutor();
        List<Integer> order = new java.util.concurrent.CopyOnWriteArrayList<>();
        Set<String> threads = new java.util.concurrent.ConcurrentSkipListSet<>();
        for (int i = 0; i < 20; i++) {
            int k = i;
            e.execute(() -> {
                order.add(k);
                threads.add(describe(Thread.currentThread()));
            });
        }
        e.shutdown();
        e.awaitTermination(30, TimeUnit.SECONDS);
        print("single", "threads", threads);
        print("single", "inOrder", order.equals(java.util.stream.IntStream.range(0, 20).boxed().toList()));
    }

    static void custom() throws Exception {
        AtomicInteger n = new AtomicInteger();
        AtomicReference<String> caught = new AtomicReference<>();
        CountDownLatch handled = new CountDownLatch(1);
        ClassLoader loader = new ClassLoader(PoolsApp.class.getClassLoader()) {
            @Override
            public String toString() {
                return "the-factory's-loader";
            }
        };
        ThreadFactory f = r -> {
            Thread t = new Thread(r, "http-worker-" + n.incrementAndGet());
            t.setUncaughtExceptionHandler((th, ex) -> {
                caught.set(describe(th) + ": " + ex.getMessage());
                handled.countDown();
            });
            t.setContextClassLoader(loader);
            return t;
        };
        ThreadPoolExecutor e = new ThreadPoolExecutor(2, 2, 0, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), f);
        print("custom", "threads", together(e, 2));
        print("custom", "loader", e.submit(() -> String.valueOf(Thread.currentThread().getContextClassLoader())).get());
        e.execute(() -> {
            throw new IllegalStateException("boom");
        });
        print("custom", "handlerCalled", handled.await(30, TimeUnit.SECONDS));
        print("custom", "caught", caught.get());
        e.shutdown();
        e.awaitTermination(30, TimeUnit.SECONDS);
    }

    static void hooks() throws Exception {
        List<String> calls = new java.util.concurrent.CopyOnWriteArrayList<>();
        CountDownLatch terminated = new CountDownLatch(1);
        ThreadPoolExecutor e = new ThreadPoolExecutor(1, 1, 0, TimeUnit.SECONDS, new LinkedBlockingQueue<>()) {
            @Override
            protected void beforeExecute(Thread t, Runnable r) {
                calls.add("before on " + describe(t) + " current " + (t == Thread.currentThread()));
            }

            @Override
            protected void afterExecute(Runnable r, Throwable t) {
                calls.add("after on " + describe(Thread.currentThread()));
            }

            @Override
            protected void terminated() {
                calls.add("terminated");
                terminated.countDown();
            }
        };
        e.submit(() -> calls.add("task on " + describe(Thread.currentThread()))).get();
        e.shutdown();
        terminated.await(30, TimeUnit.SECONDS);
        print("hooks", "calls", calls);
    }

    /**
     * Fills a pool of one thread with a queue of one: its worker waits on the returned latch, one task waits in
     * the queue; the next task is refused.
     */
    static CountDownLatch full(ThreadPoolExecutor e) throws InterruptedException {
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch running = new CountDownLatch(1);
        e.execute(waitFor(running, release));
        running.await();
        e.execute(() -> { }); // queued: the queue holds one
        return release;
    }

    /** A task that says it runs, then waits for {@code release}. */
    static Runnable waitFor(CountDownLatch running, CountDownLatch release) {
        return () -> {
            running.countDown();
            try {
                release.await();
            } catch (InterruptedException ignored) {
                Thread.currentThread().interrupt();
            }
        };
    }

    static void abort() throws Exception {
        ThreadPoolExecutor e = new ThreadPoolExecutor(1, 1, 0, TimeUnit.SECONDS, new ArrayBlockingQueue<>(1),
                r -> new Thread(r, "bounded-" + 1), new ThreadPoolExecutor.AbortPolicy());
        CountDownLatch release = full(e);
        String third;
        try {
            e.execute(() -> { });
            third = "accepted";
        } catch (RejectedExecutionException x) {
            third = "rejected";
        }
        print("abort", "third", third);
        print("abort", "queued", e.getQueue().size());
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        for (ObjectName n : server.queryNames(new ObjectName("dev.weft.agent:type=Pool,name=\"bounded-N\",*"), null)) {
            print("abort", "mbean.rejected", server.getAttribute(n, "Rejected"));
            print("abort", "mbean.queued", server.getAttribute(n, "Queued"));
            print("abort", "mbean.active", server.getAttribute(n, "Active"));
        }
        release.countDown();
        e.shutdown();
        e.awaitTermination(30, TimeUnit.SECONDS);
    }

    static void callerRuns() throws Exception {
        ThreadPoolExecutor e = new ThreadPoolExecutor(1, 1, 0, TimeUnit.SECONDS, new ArrayBlockingQueue<>(1),
                new ThreadPoolExecutor.CallerRunsPolicy());
        CountDownLatch release = full(e);
        AtomicReference<String> ranOn = new AtomicReference<>();
        e.execute(() -> ranOn.set(describe(Thread.currentThread())));
        print("callerruns", "ranOn", ranOn.get());
        release.countDown();
        e.shutdown();
        e.awaitTermination(30, TimeUnit.SECONDS);
    }

    static void shutdownNow() throws Exception {
        ExecutorService e = Executors.newFixedThreadPool(2);
        CountDownLatch running = new CountDownLatch(2);
        List<Future<String>> fs = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            fs.add(e.submit(() -> {
                running.countDown();
                try {
                    new CountDownLatch(1).await(); // until interrupted
                    return "not interrupted";
                } catch (InterruptedException x) {
                    return "interrupted on " + describe(Thread.currentThread());
                }
            }));
        }
        running.await();
        List<Runnable> never = e.shutdownNow();
        print("shutdownnow", "neverRan", never.size());
        print("shutdownnow", "terminated", e.awaitTermination(30, TimeUnit.SECONDS));
        Set<String> outcomes = new TreeSet<>();
        for (Future<String> f : fs) {
            outcomes.add(f.get().replaceAll("\\d+", "K"));
        }
        print("shutdownnow", "outcomes", outcomes);
    }

    static void invokeAll() throws Exception {
        ExecutorService e = Executors.newFixedThreadPool(4);
        List<Callable<Integer>> tasks = new ArrayList<>();
        Set<Boolean> virtual = java.util.concurrent.ConcurrentHashMap.newKeySet();
        for (int i = 0; i < 10; i++) {
            int k = i;
            tasks.add(() -> {
                virtual.add(Thread.currentThread().isVirtual());
                return k * k;
            });
        }
        int sum = 0;
        for (Future<Integer> f : e.invokeAll(tasks)) {
            sum += f.get();
        }
        print("invokeall", "sum", sum);
        print("invokeall", "virtual", virtual);
        e.shutdown();
        e.awaitTermination(30, TimeUnit.SECONDS);
    }

    /** A factory that makes a Thread subclass (as Netty's FastThreadLocalThread): left alone. */
    static void subclass() throws Exception {
        final class Special extends Thread {
            Special(Runnable r) {
                super(r, "special-worker");
            }
        }
        ExecutorService e = new ThreadPoolExecutor(1, 1, 0, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), Special::new);
        print("subclass", "thread", e.submit(() -> describe(Thread.currentThread()) + " "
                + (Thread.currentThread() instanceof Special)).get());
        e.shutdown();
        e.awaitTermination(30, TimeUnit.SECONDS);
    }

    static void scheduled() throws Exception {
        ScheduledExecutorService e = Executors.newScheduledThreadPool(1);
        print("scheduled", "thread", e.schedule(() -> describe(Thread.currentThread()).replaceAll("\\d+", "K"),
                1, TimeUnit.MILLISECONDS).get());
        e.shutdown();
        e.awaitTermination(30, TimeUnit.SECONDS);
    }

    /** Two pools: batch-N (the test excludes it) and api-N. */
    static void excluded() throws Exception {
        AtomicInteger n = new AtomicInteger();
        ExecutorService batch = Executors.newFixedThreadPool(1, r -> new Thread(r, "batch-" + n.incrementAndGet()));
        ExecutorService api = Executors.newFixedThreadPool(1, r -> new Thread(r, "api-" + n.incrementAndGet()));
        print("excluded", "batch", batch.submit(() -> describe(Thread.currentThread()).replaceAll("\\d+", "K")).get());
        print("excluded", "api", api.submit(() -> describe(Thread.currentThread()).replaceAll("\\d+", "K")).get());
        batch.shutdown();
        api.shutdown();
    }

    /** A recording stream of the agent's JFR event while a pool of 2 runs one task and queues another. */
    static void jfr() throws Exception {
        ThreadPoolExecutor e = new ThreadPoolExecutor(1, 1, 0, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
                r -> new Thread(r, "recorded-1"));
        CountDownLatch release = new CountDownLatch(1);
        e.execute(() -> {
            try {
                release.await();
            } catch (InterruptedException ignored) {
                Thread.currentThread().interrupt();
            }
        });
        e.execute(() -> { });
        AtomicReference<String> seen = new AtomicReference<>();
        CountDownLatch got = new CountDownLatch(1);
        try (jdk.jfr.consumer.RecordingStream rs = new jdk.jfr.consumer.RecordingStream()) {
            rs.enable("dev.weft.agent.Pool").withPeriod(java.time.Duration.ofMillis(100));
            rs.onEvent("dev.weft.agent.Pool", ev -> {
                if (ev.getString("pool").equals("recorded-N") && got.getCount() > 0) {
                    seen.set("pool=" + ev.getString("pool") + " active=" + ev.getInt("active") + " queued="
                            + ev.getInt("queued") + " poolSize=" + ev.getInt("poolSize") + " max=" + ev.getInt("maximumPoolSize"));
                    got.countDown();
                }
            });
            rs.startAsync();
            print("jfr", "seen", got.await(30, TimeUnit.SECONDS));
        }
        print("jfr", "event", seen.get());
        release.countDown();
        e.shutdown();
        e.awaitTermination(30, TimeUnit.SECONDS);
    }

    /** A fixed pool of 2 and a single-thread pool, under concurrency=N. */
    static void concurrency() throws Exception {
        ThreadPoolExecutor e = (ThreadPoolExecutor) Executors.newFixedThreadPool(2);
        int n = Integer.getInteger("tasks", 50);
        print("concurrency", "together", together(e, n).size());
        print("concurrency", "poolSize", e.getPoolSize());
        print("concurrency", "max", e.getMaximumPoolSize());
        print("concurrency", "core", e.getCorePoolSize());
        e.shutdown();
        ExecutorService single = Executors.newSingleThreadExecutor();
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        List<Future<?>> fs = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            fs.add(single.submit(() -> {
                most.accumulateAndGet(inside.incrementAndGet(), Math::max);
                Thread.yield();
                inside.decrementAndGet();
            }));
        }
        for (Future<?> f : fs) {
            f.get();
        }
        print("concurrency", "singleMostAtOnce", most.get());
        single.shutdown();
    }

    /** A factory that wraps the task in its own Runnable (logging, MDC, monitoring): the wrapper runs. */
    static void wrapped() throws Exception {
        List<String> log = new java.util.concurrent.CopyOnWriteArrayList<>();
        ExecutorService e = Executors.newFixedThreadPool(1, r -> new Thread(() -> {
            log.add("wrapper on " + describe(Thread.currentThread()));
            r.run();
        }, "wrapped-1"));
        print("wrapped", "task", e.submit(() -> describe(Thread.currentThread())).get());
        print("wrapped", "log", log);
        e.shutdown();
        e.awaitTermination(30, TimeUnit.SECONDS);
    }

    /** A factory whose threads belong to a ThreadGroup subclass that handles uncaught exceptions. */
    static void group() throws Exception {
        AtomicReference<String> caught = new AtomicReference<>();
        CountDownLatch handled = new CountDownLatch(1);
        ThreadGroup g = new ThreadGroup("app-group") {
            @Override
            public void uncaughtException(Thread t, Throwable ex) {
                caught.set(describe(t) + ": " + ex.getMessage());
                handled.countDown();
            }
        };
        ExecutorService e = Executors.newFixedThreadPool(1, r -> new Thread(g, r, "grouped-1"));
        e.execute(() -> {
            throw new IllegalStateException("boom");
        });
        print("group", "handlerCalled", handled.await(30, TimeUnit.SECONDS));
        print("group", "caught", caught.get());
        e.shutdown();
        e.awaitTermination(30, TimeUnit.SECONDS);
    }

    /** A pool whose factory is the JDK's public Thread.ofPlatform().factory(). */
    static void platformFactory() throws Exception {
        ExecutorService e = Executors.newFixedThreadPool(1, Thread.ofPlatform().name("plat-", 1).factory());
        print("platformfactory", "thread", e.submit(() -> describe(Thread.currentThread())).get());
        e.shutdown();
        e.awaitTermination(30, TimeUnit.SECONDS);
    }

    /** A factory that returns a thread it started itself (it runs the task there): left as it is. */
    static void started() throws Exception {
        CountDownLatch ran = new CountDownLatch(1);
        AtomicReference<String> on = new AtomicReference<>();
        ThreadPoolExecutor e = new ThreadPoolExecutor(1, 1, 0, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), r -> {
            Thread t = new Thread(r, "prestarted-1");
            t.setDaemon(true); // the executor drops its Worker; the thread may wait in getTask for good
            t.start();
            return t;
        });
        try {
            e.execute(() -> {
                on.set(describe(Thread.currentThread()));
                ran.countDown();
            });
            print("started", "outcome", ran.await(30, TimeUnit.SECONDS) ? "ran on " + on.get() : "never ran");
        } catch (IllegalThreadStateException x) {
            print("started", "outcome", "refused " + x.getClass().getSimpleName()); // what the JDK does by itself
        }
        e.shutdownNow();
    }

    /** The application resizes its pool later, as Spring's ThreadPoolTaskExecutor.setMaxPoolSize does. */
    static void resize() throws Exception {
        ThreadPoolExecutor e = new ThreadPoolExecutor(2, 2, 0, TimeUnit.SECONDS, new LinkedBlockingQueue<>());
        e.submit(() -> { }).get(); // the first worker: the pool is converted (and bounded) now
        String error = "none";
        try {
            e.setMaximumPoolSize(3);
            e.setCorePoolSize(3);
        } catch (IllegalArgumentException x) {
            error = x.toString();
        }
        print("resize", "error", error);
        print("resize", "together", together(e, Integer.getInteger("tasks", 50)).size());
        print("resize", "max", e.getMaximumPoolSize());
        String refused;
        try {
            e.setMaximumPoolSize(1); // below its core (3): refused, as without the agent
            refused = "accepted";
        } catch (IllegalArgumentException x) {
            refused = "refused";
        }
        print("resize", "belowCore", refused);
        e.shutdown();
        e.awaitTermination(30, TimeUnit.SECONDS);
    }

    /**
     * Pools created and dropped without shutdown, their workers timing out (as a cached pool's do): once they
     * are collected no MBean of theirs is left.
     */
    static void churn() throws Exception {
        int pools = Integer.getInteger("pools", 200);
        for (int i = 0; i < pools; i++) {
            ThreadPoolExecutor e = new ThreadPoolExecutor(1, 1, 10, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>());
            e.allowCoreThreadTimeOut(true);
            e.submit(() -> { }).get();
        }
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        ObjectName all = new ObjectName("dev.weft.agent:type=Pool,*");
        print("churn", "registeredAfterUse", server.queryNames(all, null).size() > 0);
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        int left = server.queryNames(all, null).size();
        while (left > 0 && System.nanoTime() < end) {
            System.gc();
            java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20)); // a poll, not a guess
            left = server.queryNames(all, null).size();
        }
        print("churn", "left", left);
    }

    /**
     * For weft doctor: a fixed pool of 2 named {@code orders-N} with a queue of 2 and {@code AbortPolicy}, that
     * completed one task, runs 2 that wait, holds 2 in its queue and refused one. Stays so until stdin ends.
     */
    static void doctor() throws Exception {
        AtomicInteger n = new AtomicInteger();
        ThreadPoolExecutor e = new ThreadPoolExecutor(2, 2, 0, TimeUnit.SECONDS, new ArrayBlockingQueue<>(2),
                r -> new Thread(r, "orders-" + n.incrementAndGet()), new ThreadPoolExecutor.AbortPolicy());
        e.submit(() -> { }).get(30, TimeUnit.SECONDS);
        while (e.getCompletedTaskCount() < 1) { // counted after the task returns, on the worker
            Thread.onSpinWait();
        }
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch running = new CountDownLatch(2);
        for (int i = 0; i < 2; i++) {
            e.execute(waitFor(running, release));
        }
        running.await();
        e.execute(() -> { });
        e.execute(() -> { });
        try {
            e.execute(() -> { });
            print("doctor", "fifth", "accepted");
        } catch (RejectedExecutionException x) {
            print("doctor", "fifth", "rejected");
        }
        print("doctor", "ready", true);
        while (System.in.read() >= 0) {
            // until the test closes our stdin
        }
        release.countDown();
        e.shutdown();
        e.awaitTermination(30, TimeUnit.SECONDS);
    }
}
