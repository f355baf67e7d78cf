package dev.weft.agent.boot;

import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counts, per converted pool, JFR's {@code jdk.VirtualThreadPinned} events of its workers: a virtual thread
 * that blocked while it could not leave its carrier (on JDK 25: inside a class initializer, or under a native
 * frame such as a JNI or foreign-function upcall; {@code synchronized} no longer pins since JEP 491).
 *
 * <p>It costs nothing until someone asks: no recording runs until the first read of a pool MBean's
 * {@code Pinned} attribute (or the agent's {@code pinned} option, at start); from then on an in-process
 * {@link jdk.jfr.consumer.RecordingStream} enables that event alone, without stack traces, at JFR's default
 * threshold (20 ms, as the JDK's own recordings and {@code weft doctor} use), and counts each event whose
 * thread is a worker of a converted pool. Counted since first asked: pins before that are not seen.
 *
 * <p>Attribution: the event's thread is the virtual thread that pinned (JFR records virtual threads under
 * their own id), so each worker registers its {@link Thread#threadId()} with its pool's counter while it runs.
 * The stream delivers events about a second after they happen (at JFR's flush), possibly after the worker
 * ended, so while counting an ended worker's id stays mapped for {@link #RETAIN} more before it is dropped.
 */
final class Pinned {
    /** JFR's default threshold for {@code jdk.VirtualThreadPinned} ({@code default.jfc}, {@code profile.jfc}). */
    static final Duration THRESHOLD = Duration.ofMillis(20);
    /** How long an ended worker's id is still attributed: well past JFR's one-second flush of a stream. */
    static final Duration RETAIN = Duration.ofSeconds(10);
    private static final String EVENT = "jdk.VirtualThreadPinned";
    /** How long the first asker waits for the recording to start (it takes well under a second). */
    private static final Duration START_WAIT = Duration.ofSeconds(10);

    /** Each running converted worker's thread id, with its pool's counter. */
    private static final ConcurrentHashMap<Long, LongAdder> WORKERS = new ConcurrentHashMap<>();
    /** Ended workers' ids with when they ended (nanoTime), dropped from {@link #WORKERS} after {@link #RETAIN}. */
    private static final ConcurrentLinkedQueue<long[]> ENDED = new ConcurrentLinkedQueue<>();

    private static final Object LOCK = new Object();
    /** 0: not asked yet; 1: counting; -1: could not start (no JFR in this runtime, or it failed). */
    private static volatile int state;

    private Pinned() {
    }

    /** The current thread, a converted pool's worker, starts running; its pins count for {@code pool}. */
    static void running(LongAdder pool) {
        WORKERS.put(Thread.currentThread().threadId(), pool);
    }

    /** The current thread, a converted pool's worker, ends. */
    static void ended() {
        long id = Thread.currentThread().threadId();
        if (state == 1) {
            ENDED.add(new long[]{id, System.nanoTime()});
        } else {
            WORKERS.remove(id);
        }
    }

    /** Whether pins are counted (someone asked, and the recording started). */
    static boolean counting() {
        return state == 1;
    }

    /**
     * Starts counting if nobody asked before; returns whether it counts. Synchronous: pins from the moment
     * it returns true are counted.
     */
    static boolean start() {
        if (state != 0) {
            return state == 1;
        }
        synchronized (LOCK) {
            if (state == 0) {
                try {
                    open();
                    state = 1;
                } catch (Throwable t) {
                    state = -1;
                    System.err.println("weft agent: pinned virtual threads are not counted: no JFR recording stream ("
                            + t + ")");
                }
            }
        }
        return state == 1;
    }

    /**
     * Starts the stream on a daemon thread of its own and returns once its recording runs. Not
     * {@code startAsync()}: its reader thread is not a daemon and would keep the JVM from exiting; nor the asking
     * thread, whose context class loader (a web application's) and inheritable thread locals it must not keep.
     * Its recording's start is seen by a JFR listener on that thread.
     */
    private static void open() throws Throwable {
        jdk.jfr.consumer.RecordingStream rs = new jdk.jfr.consumer.RecordingStream();
        rs.enable(EVENT).withThreshold(THRESHOLD).withoutStackTrace();
        // the stream releases the chunks it has read; this bounds the disk it may hold should it fall behind
        rs.setMaxAge(RETAIN.multipliedBy(6));
        rs.onEvent(EVENT, e -> {
            jdk.jfr.consumer.RecordedThread t = e.getThread();
            if (t != null) {
                LongAdder pool = WORKERS.get(t.getJavaThreadId());
                if (pool != null) {
                    pool.increment();
                }
            }
        });
        rs.onFlush(Pinned::dropEnded);
        CountDownLatch running = new CountDownLatch(1);
        Throwable[] failed = new Throwable[1];
        Thread reader = Thread.ofPlatform().name("weft-agent-pinned").daemon(true).inheritInheritableThreadLocals(false)
                .unstarted(() -> {
                    try {
                        rs.start(); // starts the recording, then reads it until the JVM ends
                    } catch (Throwable t) {
                        failed[0] = t;
                    } finally {
                        running.countDown();
                    }
                });
        reader.setContextClassLoader(null);
        jdk.jfr.FlightRecorderListener started = new jdk.jfr.FlightRecorderListener() {
            @Override
            public void recordingStateChanged(jdk.jfr.Recording recording) {
                if (Thread.currentThread() == reader && recording.getState() == jdk.jfr.RecordingState.RUNNING) {
                    running.countDown();
                }
            }
        };
        jdk.jfr.FlightRecorder.addListener(started);
        try {
            reader.start();
            boolean interrupted = false;
            while (true) {
                try {
                    if (!running.await(START_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
                        System.err.println("weft agent: the JFR recording that counts pinned virtual threads did not say "
                                + "it started within " + START_WAIT.toSeconds() + " s; counting from when it does");
                    }
                    break;
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        } finally {
            jdk.jfr.FlightRecorder.removeListener(started);
        }
        if (failed[0] != null) {
            throw failed[0];
        }
    }

    private static void dropEnded() {
        long now = System.nanoTime();
        long retain = TimeUnit.NANOSECONDS.convert(RETAIN);
        for (long[] e; (e = ENDED.peek()) != null && now - e[1] > retain; ) {
            ENDED.poll();
            WORKERS.remove(e[0]);
        }
    }

    /** Workers mapped now (running, or ended less than {@link #RETAIN} ago while counting): for tests. */
    static int mapped() {
        return WORKERS.size();
    }
}
