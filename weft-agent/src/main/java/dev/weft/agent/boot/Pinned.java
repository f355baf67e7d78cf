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
 * <p>Until it is started it runs no recording and costs one map put and remove per worker lifetime (so that
 * workers already running when it starts are attributed). Reading never starts it: only the agent's
 * {@code pinned} option (at start) or a pool MBean's {@code startPinnedCount()} operation do, because JMX
 * scrapers read every attribute. From then on an in-process {@link jdk.jfr.consumer.RecordingStream} enables
 * that event alone, without stack traces, at the agent's threshold ({@code pinned_threshold}; by default JFR's
 * own, 20 ms, as the JDK's own recordings and {@code weft doctor} use), and counts each event at least that long
 * whose thread is a worker of a converted pool. Counted since started: pins before that are not seen. With the
 * agent's {@code pinned=off} it never starts.
 *
 * <p>If the stream ends (an operator's {@code jcmd PID JFR.stop} of its recording, or a failure), counting
 * stops for good: the counts read -1 again and no worker is registered any more.
 *
 * <p>Attribution: the event's thread is the virtual thread that pinned (JFR records virtual threads under
 * their own id), so each worker registers its {@link Thread#threadId()} with its pool's counter while it runs.
 * The stream delivers events about a second after they happen (at JFR's flush), possibly after the worker
 * ended, so while counting an ended worker's id stays mapped for {@link #RETAIN} more before it is dropped.
 */
final class Pinned {
    /** The shortest pin counted: the agent's {@code pinned_threshold} (JFR's default, 20 ms, unless given). */
    private static volatile Duration threshold = Duration.ofMillis(20);
    /** How long an ended worker's id is still attributed: well past JFR's one-second flush of a stream. */
    static final Duration RETAIN = Duration.ofSeconds(10);
    private static final String EVENT = "jdk.VirtualThreadPinned";
    /** How long the starter waits for the recording to start (it takes well under a second); past it, failed. */
    static final Duration START_WAIT = Duration.ofSeconds(10);

    /** Each running converted worker's thread id, with its pool's counter. */
    private static final ConcurrentHashMap<Long, LongAdder> WORKERS = new ConcurrentHashMap<>();
    /** Ended workers' ids with when they ended (nanoTime), dropped from {@link #WORKERS} after {@link #RETAIN}. */
    private static final ConcurrentLinkedQueue<long[]> ENDED = new ConcurrentLinkedQueue<>();

    private static final int NOT_STARTED = 0;
    private static final int COUNTING = 1;
    /** Could not start (no JFR in this runtime, or it failed), or its stream ended: never counts again. */
    private static final int OFF = -1;

    private static final Object LOCK = new Object();
    private static volatile int state = NOT_STARTED;
    /** Whether it ever counted: its end is then said on stderr. */
    private static volatile boolean counted;

    private Pinned() {
    }

    /** The agent's options, set before any worker runs: the shortest pin counted, and whether it never counts. */
    static void configure(Duration threshold, boolean never) {
        Pinned.threshold = threshold;
        if (never) {
            stop();
        }
    }

    /** The current thread, a converted pool's worker, starts running; its pins count for {@code pool}. */
    static void running(LongAdder pool) {
        if (state != OFF) {
            WORKERS.put(Thread.currentThread().threadId(), pool);
        }
    }

    /** The current thread, a converted pool's worker, ends. */
    static void ended() {
        long id = Thread.currentThread().threadId();
        if (state == COUNTING) {
            ENDED.add(new long[]{id, System.nanoTime()});
        } else {
            WORKERS.remove(id);
        }
    }

    /** Whether pins are counted (started, and its stream still runs). */
    static boolean counting() {
        return state == COUNTING;
    }

    /**
     * Starts counting if nobody did before; returns whether it counts. Synchronous: pins from the moment it
     * returns true are counted. Blocks up to {@link #START_WAIT} the first time.
     */
    static boolean start() {
        if (state != NOT_STARTED) {
            return state == COUNTING;
        }
        synchronized (LOCK) {
            if (state == NOT_STARTED) {
                try {
                    open();
                } catch (Throwable t) {
                    stop();
                    System.err.println("weft agent: pinned virtual threads are not counted: no JFR recording stream ("
                            + t + ")");
                }
            }
        }
        return state == COUNTING;
    }

    /** Counting is off for good: reads say -1, and no worker id is kept. */
    private static void stop() {
        state = OFF;
        WORKERS.clear();
        ENDED.clear();
    }

    /**
     * Creates and starts the stream on a daemon thread of its own and returns once its recording runs. Not
     * {@code startAsync()}: its reader thread is not a daemon and would keep the JVM from exiting. Not created on
     * the asking thread either: JFR's own threads started with the first recording (JFR Periodic Tasks) inherit
     * the creating thread's context class loader (a web application's) and inheritable thread locals, and live
     * as long as the JVM. Its recording's start is seen by a JFR listener on that thread.
     */
    private static void open() throws Throwable {
        CountDownLatch running = new CountDownLatch(1);
        Throwable[] failed = new Throwable[1];
        jdk.jfr.consumer.RecordingStream[] stream = new jdk.jfr.consumer.RecordingStream[1];
        jdk.jfr.FlightRecorderListener[] watching = new jdk.jfr.FlightRecorderListener[1];
        Thread reader = Thread.ofPlatform().name("weft-agent-pinned").daemon(true).inheritInheritableThreadLocals(false)
                .unstarted(() -> {
                    jdk.jfr.consumer.RecordingStream rs = null;
                    try {
                        rs = new jdk.jfr.consumer.RecordingStream();
                        synchronized (stream) {
                            stream[0] = rs;
                            if (failed[0] != null) {
                                return; // the starter gave up waiting: the finally closes it
                            }
                        }
                        rs.enable(EVENT).withThreshold(threshold).withoutStackTrace();
                        rs.onEvent(EVENT, Pinned::onEvent);
                        rs.onFlush(Pinned::dropEnded);
                        rs.start(); // starts the recording, then reads it until it stops
                    } catch (Throwable t) {
                        synchronized (stream) {
                            if (failed[0] == null) {
                                failed[0] = t;
                            }
                        }
                    } finally {
                        boolean wasCounting = counted;
                        stop();
                        synchronized (stream) {
                            if (watching[0] != null) {
                                jdk.jfr.FlightRecorder.removeListener(watching[0]);
                            }
                        }
                        running.countDown();
                        if (rs != null) {
                            rs.close();
                        }
                        if (wasCounting && !exiting()) { // JFR ends every recording at the JVM's exit: no news
                            System.err.println("weft agent: the JFR recording stream that counts pinned virtual threads "
                                    + "ended" + (failed[0] == null ? "" : " (" + failed[0] + ")")
                                    + "; Pinned reads -1 from now on");
                        }
                    }
                });
        reader.setContextClassLoader(null);
        long[] ours = {-1};
        jdk.jfr.FlightRecorderListener started = new jdk.jfr.FlightRecorderListener() {
            private boolean isOurs(jdk.jfr.Recording recording) {
                synchronized (stream) {
                    return recording.getId() == ours[0];
                }
            }

            @Override
            public void recordingStateChanged(jdk.jfr.Recording recording) {
                jdk.jfr.RecordingState now = recording.getState();
                if (Thread.currentThread() == reader && now == jdk.jfr.RecordingState.RUNNING) {
                    // before the latch: the reader's finally must see COUNTING should the stream end at once
                    synchronized (stream) {
                        ours[0] = recording.getId();
                        if (failed[0] == null) {
                            state = COUNTING;
                            counted = true;
                        }
                    }
                    running.countDown();
                } else if ((now == jdk.jfr.RecordingState.STOPPED || now == jdk.jfr.RecordingState.CLOSED)
                        && isOurs(recording)) {
                    // stopped by someone else (jcmd PID JFR.stop): its stream would wait for more and never end.
                    // Off at once, then closed off this (JFR's, or jcmd's) thread, which ends the reader.
                    stop();
                    jdk.jfr.consumer.RecordingStream rs;
                    synchronized (stream) {
                        rs = stream[0];
                    }
                    if (rs != null) {
                        Thread closer = Thread.ofPlatform().name("weft-agent-pinned-close").daemon(true)
                                .inheritInheritableThreadLocals(false).unstarted(rs::close);
                        closer.setContextClassLoader(null);
                        closer.start();
                    }
                }
            }
        };
        synchronized (stream) {
            watching[0] = started;
        }
        jdk.jfr.FlightRecorder.addListener(started);
        boolean began;
        try {
            reader.start();
            boolean interrupted = false;
            while (true) {
                try {
                    began = running.await(START_WAIT.toMillis(), TimeUnit.MILLISECONDS);
                    break;
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        } finally {
            if (state != COUNTING) {
                jdk.jfr.FlightRecorder.removeListener(started);
            }
        }
        if (!began || state != COUNTING) {
            jdk.jfr.consumer.RecordingStream rs;
            synchronized (stream) {
                if (failed[0] == null) {
                    failed[0] = new IllegalStateException(began ? "its stream ended"
                            : "its recording did not start within " + START_WAIT.toSeconds() + " s");
                }
                rs = stream[0];
            }
            if (rs != null) {
                rs.close(); // ends the reader's start(), whose finally turns counting off
            }
            throw failed[0];
        }
    }

    /** Whether the JVM is exiting (its shutdown hooks run, JFR's among them). */
    private static boolean exiting() {
        Thread probe = Thread.ofPlatform().inheritInheritableThreadLocals(false).unstarted(() -> { });
        try {
            Runtime.getRuntime().addShutdownHook(probe);
            Runtime.getRuntime().removeShutdownHook(probe);
            return false;
        } catch (IllegalStateException e) {
            return true; // "Shutdown in progress"
        }
    }

    /** Counts a pin of a converted worker. Another recording may lower the event's threshold: ours still holds. */
    private static void onEvent(jdk.jfr.consumer.RecordedEvent e) {
        if (e.getDuration().compareTo(threshold) < 0) {
            return;
        }
        jdk.jfr.consumer.RecordedThread t = e.getThread();
        if (t != null) {
            LongAdder pool = WORKERS.get(t.getJavaThreadId());
            if (pool != null) {
                pool.increment();
            }
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
