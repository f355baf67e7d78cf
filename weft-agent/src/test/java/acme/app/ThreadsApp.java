package acme.app;

import acme.lib.Spawner;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import javax.management.ObjectName;

/**
 * An application that makes its own threads with {@code new Thread(...)}, outside the agent's packages (the
 * agent never changes {@code dev.weft.agent.*}): run with {@code threads=acme.app.*}, its threads become virtual
 * and keep their names, handler, loader and daemon status; {@code acme.lib}'s stay platform threads. Prints
 * {@code key=value} facts; {@code keepalive} instead leaves a non-daemon thread running after main returns;
 * {@code uncaught}, {@code startref} and {@code pools} are the cases their methods describe.
 */
public final class ThreadsApp {
    private ThreadsApp() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length > 0) {
            switch (args[0]) {
                case "keepalive" -> keepAlive();
                case "uncaught" -> uncaughtAfterMain();
                case "startref" -> startedByReference();
                case "pools" -> pools();
                default -> throw new IllegalArgumentException(args[0]);
            }
            return;
        }
        Thread main = Thread.currentThread();
        main.setContextClassLoader(new ClassLoader(ThreadsApp.class.getClassLoader()) {
            @Override
            public String toString() {
                return "main's-loader";
            }
        });

        // the JDK's own name, Thread-N; the thread it runs on is the one the application holds
        InheritableThreadLocal<String> tenant = new InheritableThreadLocal<>();
        tenant.set("acme-tenant");
        AtomicReference<String> ranOn = new AtomicReference<>();
        Thread plain = new Thread(() -> ranOn.set(describe(Thread.currentThread())
                + " loader=" + Thread.currentThread().getContextClassLoader() + " inherited=" + tenant.get()));
        fact("plain.held", describe(plain) + " daemon=" + plain.isDaemon());
        plain.start();
        plain.join();
        fact("plain.ran", ranOn.get());

        // a given name; the application's uncaught-exception handler
        AtomicReference<String> caught = new AtomicReference<>();
        AtomicInteger calls = new AtomicInteger();
        Thread named = new Thread(() -> {
            throw new IllegalStateException("boom");
        }, "worker-7");
        named.setUncaughtExceptionHandler((t, e) -> {
            caught.set(describe(t) + ": " + e.getMessage());
            calls.incrementAndGet();
        });
        named.start();
        named.join(); // the JDK calls the handler before the thread terminates
        fact("named.caught", caught.get());
        fact("named.calls", String.valueOf(calls.get()));

        // setDaemon(true) and (false) before start: kept, and said back by isDaemon
        CountDownLatch release = new CountDownLatch(1);
        Thread daemon = new Thread(() -> {
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "daemon-1");
        daemon.setDaemon(true);
        boolean asked = daemon.isDaemon();
        daemon.setDaemon(false);
        daemon.setDaemon(true);
        fact("daemon", describe(daemon) + " isDaemon=" + asked + "," + daemon.isDaemon());
        daemon.start();
        try {
            daemon.setDaemon(false); // while it runs: refused, as on a platform thread
            fact("daemon.whileAlive", "accepted");
        } catch (IllegalThreadStateException e) {
            fact("daemon.whileAlive", "IllegalThreadStateException");
        }
        release.countDown();
        daemon.join();

        // setPriority: accepted, and ignored on a virtual thread
        Thread prio = new Thread(() -> { }, "prio-1");
        prio.setPriority(Thread.MAX_PRIORITY);
        fact("priority", describe(prio) + " " + prio.getPriority());

        // a ternary in the arguments: a stack-map frame between NEW and <init>
        fact("ternary", ternary(args.length == 0));

        // run() called directly runs the task on the caller, as on a platform thread
        AtomicReference<String> direct = new AtomicReference<>();
        Thread notStarted = new Thread(() -> direct.set(Thread.currentThread().getName()), "run-direct");
        notStarted.run();
        fact("run.direct", describe(notStarted) + " ran on " + direct.get());
        // the same through a method reference
        AtomicReference<String> byReference = new AtomicReference<>();
        Thread referenced = new Thread(() -> byReference.set(Thread.currentThread().getName()), "run-ref");
        List.of(referenced).forEach(Thread::run);
        fact("run.ref", describe(referenced) + " ran on " + byReference.get());

        // made in a group the application made: it joins that group, so it stays a platform thread
        AtomicReference<String> inGroup = new AtomicReference<>();
        Thread creator = new Thread(new ThreadGroup("acme-tenants"), () -> {
            Thread t = new Thread(() -> { }, "in-group-1");
            inGroup.set(describe(t) + " group=" + t.getThreadGroup().getName());
        }, "group-creator");
        creator.start();
        creator.join();
        fact("in.group", inGroup.get());
        // made by a converted (virtual) thread, in the virtual threads' group: converted
        AtomicReference<String> nested = new AtomicReference<>();
        Thread outer = new Thread(() -> nested.set(describe(new Thread(() -> { }, "nested-1"))), "outer-1");
        outer.start();
        outer.join();
        fact("nested", nested.get());

        // a ThreadGroup: kept as it was
        Thread grouped = new Thread(new ThreadGroup("acme-group"), () -> { }, "grouped-1");
        fact("grouped", describe(grouped) + " group=" + grouped.getThreadGroup().getName());

        // exclude= by thread name wins
        fact("excluded", describe(new Thread(() -> { }, "kept-1")));

        // a package threads= does not name
        fact("lib", describe(Spawner.make(() -> { })));

        // a class whose loader does not see dev.weft.agent.boot (an OSGi bundle's without boot delegation)
        fact("isolated", isolated());

        // a shutdown hook made here: the JDK accepts a virtual one and runs it at exit
        Runtime.getRuntime().addShutdownHook(new Thread(() -> fact("hook", describe(Thread.currentThread()))));
    }

    private static String isolated() throws Exception {
        ClassLoader bundle = new ClassLoader(ThreadsApp.class.getClassLoader()) {
            @Override
            protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
                if (name.startsWith("dev.weft.agent.")) {
                    throw new ClassNotFoundException(name + " is not delegated");
                }
                if (!name.startsWith("acme.app.isolated.")) {
                    return super.loadClass(name, resolve);
                }
                synchronized (getClassLoadingLock(name)) {
                    Class<?> c = findLoadedClass(name);
                    if (c == null) {
                        try (var in = ThreadsApp.class.getResourceAsStream("/" + name.replace('.', '/') + ".class")) {
                            byte[] b = in.readAllBytes();
                            c = defineClass(name, b, 0, b.length);
                        } catch (java.io.IOException e) {
                            throw new ClassNotFoundException(name, e);
                        }
                    }
                    return c;
                }
            }

            @Override
            public String toString() {
                return "bundle-loader";
            }
        };
        return (String) bundle.loadClass("acme.app.isolated.Isolated").getMethod("make").invoke(null);
    }

    private static String ternary(boolean first) throws InterruptedException {
        AtomicReference<String> seen = new AtomicReference<>();
        Runnable a = () -> seen.set("a");
        Runnable b = () -> seen.set("b");
        Thread t = new Thread(first ? a : b, first ? "ternary-a" : "ternary-b");
        t.start();
        t.join();
        return describe(t) + " ran " + seen.get();
    }

    /** Main starts a non-daemon thread (the default) and a daemon one, and returns; the first waits for stdin. */
    private static void keepAlive() {
        Thread main = Thread.currentThread();
        CountDownLatch forever = new CountDownLatch(1);
        Thread idle = new Thread(() -> {
            try {
                forever.await(); // never: a daemon thread must not keep the JVM alive
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "idle-daemon");
        idle.setDaemon(true);
        idle.start();
        Thread worker = new Thread(() -> {
            try {
                main.join();
                System.out.println("main ended; worker " + describe(Thread.currentThread()) + " daemon asked "
                        + Thread.currentThread().isDaemon());
                String line = new BufferedReader(new InputStreamReader(System.in)).readLine();
                System.out.println("worker finished after " + line);
            } catch (Exception e) {
                System.out.println("worker failed: " + e);
            }
        }, "keeper");
        worker.start();
    }

    /**
     * A converted non-daemon thread throws once main has returned; the default handler has work to do (a log to
     * flush, {@link #HANDLER_WORK}), says whether the JVM began to exit meanwhile (a shutdown hook), then exits 3.
     */
    private static void uncaughtAfterMain() {
        Thread main = Thread.currentThread();
        CountDownLatch exiting = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(exiting::countDown));
        Thread.setDefaultUncaughtExceptionHandler((t, e) -> {
            System.out.println("handler called: " + t.getName() + " " + e.getMessage());
            boolean meanwhile;
            try {
                meanwhile = exiting.await(HANDLER_WORK.toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException x) {
                meanwhile = false;
            }
            System.out.println("handler done; JVM exiting meanwhile: " + meanwhile);
            System.exit(3);
        });
        new Thread(() -> {
            try {
                main.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            throw new IllegalStateException("late boom");
        }, "failing").start();
    }

    /** How long the handler of {@link #uncaughtAfterMain} works: far longer than a JVM takes to exit. */
    private static final Duration HANDLER_WORK = Duration.ofSeconds(2);

    /**
     * {@code Thread::start} as a method reference, right before main returns. Run with one carrier
     * ({@code -Djdk.virtualThreadScheduler.parallelism=1}) held by a spinning virtual thread, the converted thread
     * cannot have run its first instruction when main looks for the agent's keep-alive thread.
     */
    private static void startedByReference() throws InterruptedException {
        Thread main = Thread.currentThread();
        CountDownLatch spinning = new CountDownLatch(1);
        AtomicBoolean stop = new AtomicBoolean();
        Thread.ofVirtual().start(() -> {
            spinning.countDown();
            while (!stop.get()) {
                Thread.onSpinWait();
            }
        });
        spinning.await();
        Thread worker = new Thread(() -> {
            try {
                main.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            System.out.println("worker finished after main");
        }, "by-reference");
        List.of(worker).forEach(Thread::start);
        boolean keeping = Thread.getAllStackTraces().keySet().stream()
                .anyMatch(t -> t.getName().equals("weft-agent-keepalive"));
        System.out.println("keep-alive before the worker ran: " + keeping);
        stop.set(true);
    }

    /** Pools whose ThreadFactory is a lambda of this class, which threads= names: the pools' rules apply. */
    private static void pools() throws Exception {
        ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, named("sched-"));
        fact("scheduled", timer.schedule(() -> describe(Thread.currentThread()), 1, TimeUnit.MILLISECONDS).get());
        timer.shutdown();

        ExecutorService fixed = Executors.newFixedThreadPool(2, named("fixed-"));
        fact("fixed", fixed.submit(() -> describe(Thread.currentThread())).get());
        fact("fixed.mbean", String.valueOf(ManagementFactory.getPlatformMBeanServer()
                .isRegistered(new ObjectName("dev.weft.agent:type=Pool,name=" + ObjectName.quote("fixed-N")))));
        fixed.shutdown();

        ExecutorService kept = new KeptPool(named("kept-pool-"));
        fact("kept", kept.submit(() -> describe(Thread.currentThread())).get());
        kept.shutdown();

        // a factory that throws: the Worker constructor ends in addWorkerFailed; new Thread here converts again
        ExecutorService failing = Executors.newSingleThreadExecutor(r -> {
            throw new IllegalStateException("no thread");
        });
        try {
            failing.execute(() -> { });
            fact("failing", "accepted");
        } catch (IllegalStateException e) {
            fact("failing", e.getMessage());
        }
        fact("after.failing", describe(new Thread(() -> { }, "after-1")));
    }

    private static ThreadFactory named(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return r -> new Thread(r, prefix + n.incrementAndGet());
    }

    /** A pool whose class {@code exclude=} names. */
    static final class KeptPool extends ThreadPoolExecutor {
        KeptPool(ThreadFactory factory) {
            super(1, 1, 0, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), factory);
        }
    }

    private static String describe(Thread t) {
        return t.getName() + " " + (t.isVirtual() ? "virtual" : "platform");
    }

    private static void fact(String key, String value) {
        System.out.println(key + "=" + value);
    }
}
