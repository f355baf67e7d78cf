package acme.app;

import acme.lib.Spawner;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;

/**
 * An application that makes its own threads with {@code new Thread(...)}, outside the agent's packages (the
 * agent never changes {@code dev.weft.agent.*}): run with {@code threads=acme.app.*}, its threads become virtual
 * and keep their names, handler, loader and daemon status; {@code acme.lib}'s stay platform threads. Prints
 * {@code key=value} facts; {@code keepalive} instead leaves a non-daemon thread running after main returns.
 */
public final class ThreadsApp {
    private ThreadsApp() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("keepalive")) {
            keepAlive();
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
        Thread named = new Thread(() -> {
            throw new IllegalStateException("boom");
        }, "worker-7");
        named.setUncaughtExceptionHandler((t, e) -> caught.set(describe(t) + ": " + e.getMessage()));
        named.start();
        named.join();
        fact("named.caught", caught.get());

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

    private static String describe(Thread t) {
        return t.getName() + " " + (t.isVirtual() ? "virtual" : "platform");
    }

    private static void fact(String key, String value) {
        System.out.println(key + "=" + value);
    }
}
