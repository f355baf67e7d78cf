package dev.weft.agent.apps;

import java.lang.management.ManagementFactory;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.management.MBeanServer;
import javax.management.ObjectName;

/**
 * Three fixed pools of one thread, {@code early-N}, {@code pinning-N} and {@code calm-N}, each of which has run
 * an empty task first (a pool's MBean comes with its first worker). On JDK 25 a virtual
 * thread that blocks inside a class initializer cannot leave its carrier (the initializer runs under a VM
 * frame), while one that blocks inside {@code synchronized} can (JEP 491). So:
 * <ol>
 * <li>an {@code early-N} worker initializes {@link EarlyPin} (its initializer sleeps 100 ms: a pin), before
 * anything reads a pool's {@code Pinned} attribute;</li>
 * <li>every pool's {@code Pinned} is read ({@code asked.POOL=...}, -1: a read starts nothing), the JFR
 * recordings running are counted ({@code recordings.asked}), then {@code startPinnedCount} is invoked
 * ({@code started}) under a marker context class loader, and the JFR threads holding that loader are listed
 * ({@code jfr.threads.marker}); every pool's {@code Pinned} is read again ({@code counting.POOL});</li>
 * <li>a {@code pinning-N} worker initializes {@link BriefPin} (a 2 ms pin, under JFR's threshold), then
 * {@link LaterPin} (another 100 ms pin), and a {@code calm-N}
 * worker sleeps 100 ms inside {@code synchronized} (no pin);</li>
 * <li>{@code Pinned} is read until {@code pinning-N}'s is at least the system property {@code pinned.expect} (1
 * unless given; JFR delivers events about a second late),
 * then printed for each pool ({@code pinned.POOL=...}).</li>
 * </ol>
 * With the argument {@code stop} it then prints {@code stop.ready=true}, waits for a line on stdin (the test
 * stopped the agent's recording), reads {@code pinning-N}'s count until it is -1 ({@code stopped.pinning}) and
 * invokes {@code startPinnedCount} again ({@code stopped.started}). With the argument {@code doctor} it prints
 * {@code doctor.ready=true} and waits until stdin ends.
 *
 * <p>At its exit a shutdown hook waits (up to 10 s) for the agent's thread {@code weft-agent-pinned} to end, so
 * that anything the agent says when JFR ends its recording at the exit is said before the JVM is gone.
 */
public final class PinnedApp {
    private static final MBeanServer SERVER = ManagementFactory.getPlatformMBeanServer();
    private static final String[] POOLS = {"early", "pinning", "calm"};

    private PinnedApp() {
    }

    /** Initialized once, on the first worker that touches it: the sleep runs inside its class initializer. */
    static final class EarlyPin {
        static final long SLEPT = sleepInInitializer(100);
    }

    static final class LaterPin {
        static final long SLEPT = sleepInInitializer(100);
    }

    /** A pin shorter than JFR's default threshold of 20 ms: seen only by a recording with a lower one. */
    static final class BriefPin {
        static final long SLEPT = sleepInInitializer(2);
    }

    static long sleepInInitializer(long ms) {
        long start = System.nanoTime();
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
        return System.nanoTime() - start;
    }

    public static void main(String[] args) throws Exception {
        Runtime.getRuntime().addShutdownHook(new Thread(PinnedApp::awaitAgentsReader, "pinned-app-exit"));
        ExecutorService early = pool("early");
        ExecutorService pinning = pool("pinning");
        ExecutorService calm = pool("calm");
        for (ExecutorService e : new ExecutorService[]{early, pinning, calm}) {
            e.submit(() -> { }).get(30, TimeUnit.SECONDS); // its worker, and so its MBean, exists from here
        }

        print("early.thread", early.submit(() -> describe() + " slept " + ms(EarlyPin.SLEPT)).get(30, TimeUnit.SECONDS));
        for (String p : POOLS) {
            print("asked." + p, pinned(p)); // a read, as a JMX scraper's: starts nothing
        }
        print("recordings.asked", runningRecordings());
        // the operation starts the count, here from a thread whose context class loader JFR's threads must not keep
        ClassLoader own = Thread.currentThread().getContextClassLoader();
        ClassLoader marker = new java.net.URLClassLoader("pinned-app-marker", new java.net.URL[0], own);
        Thread.currentThread().setContextClassLoader(marker);
        try {
            print("started", SERVER.invoke(name("pinning"), "startPinnedCount", null, null));
        } finally {
            Thread.currentThread().setContextClassLoader(own);
        }
        print("recordings.started", runningRecordings());
        print("jfr.threads.marker", Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith("JFR") && t.getContextClassLoader() == marker)
                .map(Thread::getName).sorted().toList());
        for (String p : POOLS) {
            print("counting." + p, pinned(p));
        }
        // on the same worker, before LaterPin: JFR delivers one thread's events in order
        print("brief.slept", pinning.submit(() -> BriefPin.SLEPT > 0).get(30, TimeUnit.SECONDS));
        print("pinning.thread", pinning.submit(() -> describe() + " slept " + ms(LaterPin.SLEPT)).get(30, TimeUnit.SECONDS));
        Object lock = new Object();
        print("calm.thread", calm.submit(() -> {
            synchronized (lock) {
                Thread.sleep(100);
            }
            return describe();
        }).get(30, TimeUnit.SECONDS));

        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        long expected = Long.getLong("pinned.expect", 1);
        for (long p; (p = pinned("pinning")) >= 0 && p < expected && System.nanoTime() < deadline; ) {
            Thread.sleep(50); // polling the agent's count: JFR flushes its events about once a second
        }
        for (String p : POOLS) {
            print("pinned." + p, pinned(p));
        }
        if (args.length > 0 && args[0].equals("stop")) {
            // the test stops the agent's recording (jcmd JFR.stop) and says so on our stdin
            print("stop.ready", true);
            new java.io.BufferedReader(new java.io.InputStreamReader(System.in)).readLine();
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (pinned("pinning") >= 0 && System.nanoTime() < until) {
                Thread.sleep(50);
            }
            print("stopped.pinning", pinned("pinning"));
            print("stopped.started", SERVER.invoke(name("pinning"), "startPinnedCount", null, null));
        }
        if (args.length > 0 && args[0].equals("doctor")) {
            print("doctor.ready", true);
            while (System.in.read() >= 0) {
                // until the test closes our stdin
            }
        }
        for (ExecutorService e : new ExecutorService[]{early, pinning, calm}) {
            e.shutdown();
            e.awaitTermination(30, TimeUnit.SECONDS);
        }
        System.out.println("done");
    }

    private static void awaitAgentsReader() {
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().equals("weft-agent-pinned")) {
                try {
                    t.join(java.time.Duration.ofSeconds(10));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    private static ExecutorService pool(String name) {
        AtomicInteger n = new AtomicInteger();
        return Executors.newFixedThreadPool(1, r -> new Thread(r, name + "-" + n.incrementAndGet()));
    }

    private static ObjectName name(String pool) throws Exception {
        return new ObjectName("dev.weft.agent:type=Pool,name=" + ObjectName.quote(pool + "-N"));
    }

    /** The agent's count for the pool, or -2 when it has no MBean (no agent). */
    private static long pinned(String pool) throws Exception {
        ObjectName name = name(pool);
        return SERVER.isRegistered(name) ? (long) SERVER.getAttribute(name, "Pinned") : -2;
    }

    /** JFR recordings running in this JVM; 0 without initializing JFR when nothing did. */
    private static long runningRecordings() {
        return !jdk.jfr.FlightRecorder.isInitialized() ? 0 : jdk.jfr.FlightRecorder.getFlightRecorder().getRecordings()
                .stream().filter(r -> r.getState() == jdk.jfr.RecordingState.RUNNING).count();
    }

    private static String describe() {
        Thread t = Thread.currentThread();
        return t.getName() + (t.isVirtual() ? " virtual" : " platform");
    }

    private static String ms(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(nanos) >= 100 ? ">=100ms" : TimeUnit.NANOSECONDS.toMillis(nanos) + "ms";
    }

    private static void print(String key, Object value) {
        System.out.println(key + "=" + value);
    }
}
