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
 * first instruction when code the option does not cover starts it.
 */
public final class Threads {
    /** The converted threads, by identity, with what the application asked of them (unstarted ones may be dropped). */
    private static final Map<Thread, Converted> CONVERTED = Collections.synchronizedMap(new WeakHashMap<>());
    private static final AtomicBoolean FAILED_ONCE = new AtomicBoolean();

    private Threads() {
    }

    /** After {@code new Thread(runnable[, name])}: the virtual thread that stands for {@code made}, or {@code made}. */
    public static Thread convert(Thread made) {
        try {
            if (made.getClass() != Thread.class || made.isVirtual() || made.getState() != Thread.State.NEW) {
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
            } finally {
                if (counts) {
                    KeepAlive.release();
                }
            }
        }
    }
}
