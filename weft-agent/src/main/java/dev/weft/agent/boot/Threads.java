package dev.weft.agent.boot;

import java.util.Collections;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The {@code threads=} option's run-time side: the classes it names call these instead of
 * {@code new Thread(runnable)} alone and instead of {@code Thread}'s methods a virtual thread would refuse
 * ({@code setDaemon(false)} throws) or ignore ({@code run()} does nothing).
 *
 * <p>{@link #convert} gets the unstarted platform thread the application's constructor just made: it lends its
 * name (the JDK's {@code Thread-N} when none was given), daemon status (the creating thread's) and context
 * class loader to a virtual thread that runs its {@code run()}, the application's {@code Runnable}. A converted
 * thread that is not daemon keeps the JVM alive while it runs, through the pools' {@link KeepAlive}: counted at
 * {@link #start} (so the JVM cannot exit between {@code start()} and the thread's first instruction), or at its
 * first instruction when code the option does not cover starts it. Its uncaught exception reaches its handler
 * before it stops counting. Not converted: a thread a pool's factory makes for a Worker (the pools' conversion
 * decides), and one made in a thread group the application made (a virtual thread's group is fixed).
 */
public final class Threads {
    /** The converted threads, by identity, with what the application asked of them (unstarted ones may be dropped). */
    private static final Map<Thread, Converted> CONVERTED = Collections.synchronizedMap(new WeakHashMap<>());
    private static final AtomicBoolean FAILED_ONCE = new AtomicBoolean();
    private static final AtomicBoolean GROUP_SAID = new AtomicBoolean();
    /** The group of every virtual thread, which a thread made by a virtual thread joins. */
    private static final ThreadGroup VIRTUAL_GROUP = Thread.ofVirtual().unstarted(() -> { }).getThreadGroup();

    private Threads() {
    }

    /** After {@code new Thread(runnable[, name])}: the virtual thread that stands for {@code made}, or {@code made}. */
    public static Thread convert(Thread made) {
        try {
            if (made.getClass() != Thread.class || made.isVirtual() || made.getState() != Thread.State.NEW) {
                return made;
            }
            if (Pools.makingWorker()) {
                // a pool's ThreadFactory making a Worker's thread: the pools' conversion decides (exclude= by
                // executor or factory class, ScheduledThreadPoolExecutor never, the bound and the MBean)
                return made;
            }
            ThreadGroup group = made.getThreadGroup();
            if (!jdkGroup(group)) {
                if (GROUP_SAID.compareAndSet(false, true) || Pools.verbose()) {
                    System.err.println("weft agent: thread " + made.getName() + " left on a platform thread: made in "
                            + "thread group " + group.getName() + " (" + group.getClass().getName() + "), the "
                            + "application's own, which a virtual thread cannot join (said once; verbose names each)");
                }
                return made;
            }
            for (String glob : Pools.excludes()) {
                if (Glob.matches(glob, made.getName())) {
                    if (Pools.verbose()) {
                        System.err.println("weft agent: thread " + made.getName() + " left on a platform thread (exclude="
                                + glob + ")");
                    }
                    return made;
                }
            }
            Converted c = new Converted(made);
            Thread v = Thread.ofVirtual().name(made.getName()).unstarted(c);
            v.setContextClassLoader(made.getContextClassLoader());
            CONVERTED.put(v, c);
            return v;
        } catch (Throwable t) {
            failed(t);
            return made;
        }
    }

    /** {@code t.setDaemon(on)}: a converted thread records it (a virtual thread would refuse {@code false}). */
    public static void setDaemon(Thread t, boolean on) {
        Converted c = converted(t);
        if (c == null) {
            t.setDaemon(on);
            return;
        }
        if (t.isAlive()) {
            throw new IllegalThreadStateException(); // as Thread.setDaemon on a started thread
        }
        c.daemon = on;
    }

    /** {@code t.isDaemon()}: what the application asked for, for a converted thread. */
    public static boolean isDaemon(Thread t) {
        Converted c = converted(t);
        return c == null ? t.isDaemon() : c.daemon;
    }

    /** {@code t.start()}: a converted non-daemon thread counts for the keep-alive from here to its end. */
    public static void start(Thread t) {
        Converted c = converted(t);
        if (c == null || c.daemon || !c.counted.compareAndSet(false, true)) {
            t.start();
            return;
        }
        KeepAlive.created(c);
        try {
            t.start();
        } catch (Throwable e) {
            if (t.getState() == Thread.State.NEW) { // not started by anyone: nothing will release it
                KeepAlive.neverStarted(c);
                c.counted.set(false);
            }
            throw e;
        }
    }

    /** {@code t.run()} called directly: runs the task on the calling thread, as a platform thread's does. */
    public static void run(Thread t) {
        Converted c = converted(t);
        if (c == null) {
            t.run();
        } else {
            c.lender.run();
        }
    }

    /**
     * The groups a thread joins when the application chose none: {@code main}, the system group, and the virtual
     * threads' (a thread made by a virtual thread). A group the application made (its {@code activeCount()}, a
     * subclass's {@code uncaughtException}) would be lost: a virtual thread's group is fixed.
     */
    private static boolean jdkGroup(ThreadGroup g) {
        if (g == null) {
            return true; // only a terminated thread has none
        }
        if (g.getClass() != ThreadGroup.class) {
            return false;
        }
        ThreadGroup parent = g.getParent();
        return parent == null || g == VIRTUAL_GROUP || (parent.getParent() == null && g.getName().equals("main"));
    }

    private static Converted converted(Thread t) {
        return t.isVirtual() ? CONVERTED.get(t) : null; // t null: the NullPointerException the call would throw
    }

    private static void failed(Throwable t) {
        if (FAILED_ONCE.compareAndSet(false, true)) {
            System.err.println("weft agent: internal error, new Thread(...) left as it was (said once; verbose prints the "
                    + "stack): " + t);
            if (Pools.verbose()) {
                t.printStackTrace();
            }
        }
    }

    /** What runs on the virtual thread: the unstarted thread's {@code run()}, counted while it runs if not daemon. */
    private static final class Converted implements Runnable {
        final Thread lender;
        volatile boolean daemon;
        /** Set once this thread counts in {@link KeepAlive}. */
        final AtomicBoolean counted = new AtomicBoolean();

        Converted(Thread lender) {
            this.lender = lender;
            this.daemon = lender.isDaemon();
        }

        @Override
        public void run() {
            // started by code the option does not cover: count from here (the JVM may have exited before)
            if (!daemon && counted.compareAndSet(false, true)) {
                KeepAlive.created(this);
            }
            boolean counts = counted.get();
            if (counts) {
                KeepAlive.started(this);
            }
            try {
                lender.run();
            } catch (Throwable e) {
                // The JDK's virtual thread hands an uncaught exception to its handler only after the task returns,
                // past the release below: a handler that logs or calls System.exit would lose to a JVM whose last
                // non-daemon thread this was. Handled here, it is not thrown on (so not handled twice).
                uncaught(e);
            } finally {
                if (counts) {
                    KeepAlive.release();
                }
            }
        }

        /** What the JVM does with a platform thread's uncaught exception: its handler, else its group's. */
        private static void uncaught(Throwable e) {
            Thread self = Thread.currentThread();
            try {
                self.getUncaughtExceptionHandler().uncaughtException(self, e);
            } catch (Throwable ignored) {
                // as for a platform thread: what the handler itself throws is ignored
            }
        }
    }
}
