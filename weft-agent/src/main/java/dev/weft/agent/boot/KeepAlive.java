package dev.weft.agent.boot;

import java.util.Collections;
import java.util.Map;
import java.util.WeakHashMap;

/**
 * Virtual threads are always daemon threads: a JVM kept alive only by the non-daemon threads of its pools
 * would exit once they became virtual. While any converted worker whose factory made a non-daemon thread
 * lives, one platform non-daemon thread ({@code weft-agent-keepalive}) waits here; it ends with the last of
 * them (after {@code shutdown}, when the pool's workers exit), so the JVM exits when it did before.
 *
 * <p>A worker counts from its creation (so the JVM cannot exit between {@code Thread.start} and its first
 * instruction); one never started (the executor's {@code addWorkerFailed}) is released there.
 */
final class KeepAlive {
    private static final Object LOCK = new Object();
    private static int live;
    private static boolean keeping;
    /** Workers created but not yet running, with nothing: a set by identity (Worker does not override equals). */
    private static final Map<Object, Boolean> PENDING = Collections.synchronizedMap(new WeakHashMap<>());

    private KeepAlive() {
    }

    static void created(Object worker) {
        PENDING.put(worker, Boolean.TRUE);
        synchronized (LOCK) {
            live++;
            if (!keeping) {
                keeping = true;
                // It lives past the worker that made it: it must not hold that thread's inheritable thread
                // locals or its context class loader (a web application's, kept from being unloaded).
                Thread t = Thread.ofPlatform().name("weft-agent-keepalive").daemon(false)
                        .inheritInheritableThreadLocals(false).unstarted(KeepAlive::hold);
                t.setContextClassLoader(null);
                t.start();
            }
        }
    }

    static void started(Object worker) {
        PENDING.remove(worker);
    }

    static void neverStarted(Object worker) {
        if (PENDING.remove(worker) != null) {
            release();
        }
    }

    static void release() {
        synchronized (LOCK) {
            if (--live == 0) {
                LOCK.notifyAll();
            }
        }
    }

    /** Live non-daemon workers (for tests and the verbose log). */
    static int live() {
        synchronized (LOCK) {
            return live;
        }
    }

    private static void hold() {
        synchronized (LOCK) {
            while (live > 0) {
                try {
                    LOCK.wait();
                } catch (InterruptedException e) {
                    // keep holding: only the last worker's exit ends this thread
                }
            }
            keeping = false;
        }
    }
}
