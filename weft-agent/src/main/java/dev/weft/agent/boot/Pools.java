package dev.weft.agent.boot;

import java.lang.management.ManagementFactory;
import java.lang.ref.WeakReference;
import java.lang.reflect.Method;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import javax.management.MBeanServer;
import javax.management.ObjectName;

/**
 * The agent's run-time side, on the boot class path: the code the agent inlines into the executors' classes
 * (the JDK's {@code ThreadPoolExecutor}, Tomcat's copy of it) calls these static methods. It may use the
 * JDK only; no exception leaves it (an executor always gets a thread: the factory's own when in doubt).
 *
 * <p>The shape: an executor's {@code Worker} still asks the pool's own {@code ThreadFactory} for its thread;
 * that thread is never started but lends its name, uncaught-exception handler and context class loader to
 * a virtual thread, which runs the Worker. Queue, rejection, hooks, {@code shutdownNow} and the statistics
 * stay the executor's own code.
 */
public final class Pools {
    /** The JDK's executor and Tomcat's copy of it (not a subclass: same fields and methods). */
    static final String JDK_EXECUTOR = "java.util.concurrent.ThreadPoolExecutor";
    static final String TOMCAT_EXECUTOR = "org.apache.tomcat.util.threads.ThreadPoolExecutor";
    /** Thread subclasses converted even so: Tomcat's TaskThread only records its creation time for renewal. */
    private static final List<String> KNOWN_SUBCLASSES = List.of("org.apache.tomcat.util.threads.TaskThread");

    private static volatile int concurrency;
    private static volatile List<String> excludes = List.of();
    private static volatile boolean verbose;

    /** Every executor seen, by identity, with its pool (or {@link #LEFT_ALONE}). */
    private static final Map<Object, Object> SEEN = Collections.synchronizedMap(new WeakHashMap<>());
    private static final Object LEFT_ALONE = new Object();
    /** True while this thread decides about a new pool: a pool the JDK makes meanwhile is left alone. */
    private static final ThreadLocal<Boolean> DECIDING = new ThreadLocal<>();
    private static final AtomicBoolean FAILED_ONCE = new AtomicBoolean();

    private Pools() {
    }

    /**
     * Set once by the installer, before any transform.
     *
     * @param concurrency 0: each pool keeps its own bound; otherwise each converted pool runs up to this many
     *                    tasks at once (never fewer than it did)
     * @param excludes    globs matched against the pool's first thread name, its executor's class and its
     *                    factory's class
     */
    public static void configure(int concurrency, List<String> excludes, boolean verbose) {
        Pools.concurrency = concurrency;
        Pools.excludes = List.copyOf(excludes);
        Pools.verbose = verbose;
    }

    /**
     * The {@code pinned} option: counts pinned workers from now on rather than from a pool MBean's
     * {@code startPinnedCount()}. Called by the installer once the executors' classes are changed.
     */
    public static void countPinnedNow() {
        Pinned.start();
    }

    /**
     * The {@code pinned_threshold} option (the shortest pin counted, in nanoseconds) and {@code pinned=off} (never
     * count: no JFR recording, {@code Pinned} reads -1). Called by the installer before the first transform.
     */
    public static void configurePinned(long thresholdNanos, boolean never) {
        Pinned.configure(java.time.Duration.ofNanos(thresholdNanos), never);
    }

    /**
     * Called at the end of every {@code Worker} constructor with the thread the pool's factory returned;
     * returns the thread the Worker keeps.
     */
    public static Thread worker(Object executor, Thread fromFactory, Runnable worker) {
        if (fromFactory == null || executor == null || fromFactory.isVirtual()
                || fromFactory.getState() != Thread.State.NEW) {
            return fromFactory; // virtual already (the factory's own), or started already: the factory's own business
        }
        try {
            Pool pool = pool(executor, fromFactory);
            return pool == null ? fromFactory : pool.newWorker(fromFactory, worker);
        } catch (Throwable t) {
            failed(t);
            return fromFactory;
        }
    }

    /** Per thread: the Worker constructors running on it, each asking a pool's ThreadFactory for its thread. */
    private static final ThreadLocal<int[]> MAKING_WORKER = ThreadLocal.withInitial(() -> new int[1]);

    /** Called at the start of every {@code Worker} constructor (and around the factory call in its stead). */
    public static void workerConstructing() {
        MAKING_WORKER.get()[0]++;
    }

    /** Called at the end of every {@code Worker} constructor, and from {@code addWorkerFailed} when it threw. */
    public static void workerConstructed() {
        int[] depth = MAKING_WORKER.get();
        if (depth[0] > 0) {
            depth[0]--;
        }
    }

    /**
     * Whether this thread runs a pool's {@code ThreadFactory} for a Worker: a {@code new Thread} that
     * {@code threads=} names is then left to {@link #worker}, which applies the pools' rules to it.
     */
    static boolean makingWorker() {
        return MAKING_WORKER.get()[0] > 0;
    }

    /** Set when a Worker class could not be retransformed: then {@link #threadFactory} converts instead. */
    private static volatile boolean throughFactory;
    private static final StackWalker WALKER = StackWalker.getInstance();

    /** The installer says that a Worker class kept its code (another agent changed it first). */
    public static void convertThroughFactory() {
        throughFactory = true;
    }

    /**
     * Called at the end of every {@code getThreadFactory()} of a converted executor class. Only when a Worker
     * class could not be changed, and only for the call from a Worker's constructor, it returns a factory that
     * converts the thread the pool's own factory makes.
     */
    public static ThreadFactory threadFactory(Object executor, ThreadFactory factory) {
        if (!throughFactory || factory == null) {
            return factory;
        }
        try {
            // frames: this method, getThreadFactory (the advice is inlined there), its caller
            boolean fromWorker = WALKER.walk(s -> s.skip(2).findFirst()
                    .map(f -> f.getMethodName().equals("<init>") && f.getClassName().endsWith("ThreadPoolExecutor$Worker"))
                    .orElse(false));
            return fromWorker ? r -> {
                Thread made;
                workerConstructing();
                try {
                    made = factory.newThread(r);
                } finally {
                    workerConstructed();
                }
                return worker(executor, made, r);
            } : factory;
        } catch (Throwable t) {
            failed(t);
            return factory;
        }
    }

    /** Called when an executor calls its rejection handler. */
    public static void rejected(Object executor) {
        try {
            if (SEEN.get(executor) instanceof Pool p) {
                p.rejected.increment();
            }
        } catch (Throwable t) {
            failed(t);
        }
    }

    /** Called when a connection pool the agent knows lends a connection. */
    public static void connectionPoolUsed(Object pool) {
        try {
            ConnectionPools.used(pool, concurrency);
        } catch (Throwable t) {
            failed(t);
        }
    }

    /** Called when a Jetty 12 {@code QueuedThreadPool} starts. */
    public static void jettyStarting(Object pool) {
        try {
            JettyPools.starting(pool, concurrency);
        } catch (Throwable t) {
            failed(t);
        }
    }

    /** Called when a Jetty 12 {@code QueuedThreadPool} stops. */
    public static void jettyStopping(Object pool) {
        try {
            JettyPools.stopping(pool);
        } catch (Throwable t) {
            failed(t);
        }
    }

    static List<String> excludes() {
        return excludes;
    }

    /** Called when an executor drops a Worker it created but could not start ({@code addWorkerFailed}). */
    public static void workerFailed(Object worker) {
        try {
            if (worker != null) {
                KeepAlive.neverStarted(worker);
            } else {
                workerConstructed(); // the Worker constructor threw (its factory did): its exit advice never ran
            }
        } catch (Throwable t) {
            failed(t);
        }
    }

    private static Pool pool(Object executor, Thread first) throws ReflectiveOperationException {
        Object seen = SEEN.get(executor);
        if (seen != null) {
            return seen instanceof Pool p ? p : null;
        }
        if (executor instanceof ScheduledThreadPoolExecutor) {
            return null; // its threads keep the timer; decided without the lock (it never becomes a Pool)
        }
        if (DECIDING.get() != null) {
            return null;
        }
        DECIDING.set(Boolean.TRUE);
        try {
            // The executor's and factory's own code (getThreadFactory may be overridden) runs outside the lock.
            String why = leaveAlone(executor, first);
            Pool created = why == null ? new Pool(executor, pattern(first.getName())) : null;
            synchronized (SEEN) {
                seen = SEEN.get(executor);
                if (seen != null) {
                    return seen instanceof Pool p ? p : null;
                }
                // before the bound changes: that may start workers, which come back here
                SEEN.put(executor, created == null ? LEFT_ALONE : created);
            }
            if (created == null) {
                if (verbose) {
                    System.err.println("weft agent: left on platform threads: " + pattern(first.getName()) + " ("
                            + executor.getClass().getName() + "): " + why);
                }
                return null;
            }
            created.bound(concurrency);
            // the first MBean starts the platform MBean server
            created.announce(executor);
            return created;
        } finally {
            DECIDING.remove();
        }
    }

    /** The converted pools whose executor is still reachable and not terminated; a terminated one's MBean goes. */
    static List<PoolMXBean> live() {
        List<Pool> pools = new java.util.ArrayList<>();
        synchronized (SEEN) {
            for (Object v : SEEN.values()) {
                if (v instanceof Pool p) {
                    pools.add(p);
                }
            }
        }
        List<PoolMXBean> live = new java.util.ArrayList<>();
        for (Pool p : pools) { // the executors' methods outside the lock
            if (p.alive()) {
                live.add(p);
            } else {
                p.unregister();
            }
        }
        return live;
    }

    /** Null to convert, or why not. */
    private static String leaveAlone(Object executor, Thread first) throws ReflectiveOperationException {
        Class<?> type = executor.getClass();
        if (executor instanceof ScheduledThreadPoolExecutor) {
            return "a ScheduledThreadPoolExecutor (its threads keep the timer)";
        }
        Object factory = Ops.of(type).factory.invoke(executor);
        Class<?> factoryType = factory == null ? null : factory.getClass();
        if (isJdk(type) && !type.getName().equals(JDK_EXECUTOR)) {
            return "a JDK-internal pool";
        }
        if (factoryType != null && isJdk(factoryType) && !PUBLIC_JDK_FACTORIES.contains(factoryType.getName())
                && !factoryType.getName().startsWith("java.util.concurrent.Executors$")) {
            return "a JDK-internal pool (factory " + factoryType.getName() + ")";
        }
        if (first.getClass() != Thread.class && !KNOWN_SUBCLASSES.contains(first.getClass().getName())) {
            return "its factory makes " + first.getClass().getName() + ", a Thread subclass";
        }
        for (String glob : excludes) {
            if (Glob.matches(glob, first.getName()) || Glob.matches(glob, type.getName())
                    || (factoryType != null && Glob.matches(glob, factoryType.getName()))) {
                return "exclude=" + glob;
            }
        }
        return null;
    }

    /** JDK factory classes an application gets from public API: its pools are the application's. */
    private static final List<String> PUBLIC_JDK_FACTORIES = List.of("java.lang.ThreadBuilders$PlatformThreadFactory");

    private static boolean isJdk(Class<?> c) {
        ClassLoader l = c.getClassLoader();
        return l == null || l == ClassLoader.getPlatformClassLoader();
    }

    /** The thread name with its trailing number as N: {@code pool-1-thread-3} -> {@code pool-1-thread-N}. */
    static String pattern(String name) {
        int end = name.length();
        while (end > 0 && Character.isDigit(name.charAt(end - 1))) {
            end--;
        }
        return end == name.length() ? name : name.substring(0, end) + "N";
    }

    private static void failed(Throwable t) {
        if (FAILED_ONCE.compareAndSet(false, true)) {
            System.err.println("weft agent: internal error, the pool or class it met is left as it was (said once; verbose "
                    + "prints the stack): " + t);
            if (verbose) {
                t.printStackTrace();
            }
        }
    }

    static boolean verbose() {
        return verbose;
    }

    /** The executor's public methods, looked up once per executor class (the JDK's and Tomcat's have the same). */
    static final class Ops {
        private static final ClassValue<Ops> BY_CLASS = new ClassValue<>() {
            @Override
            protected Ops computeValue(Class<?> type) {
                Class<?> base = type;
                while (base != null && !base.getName().equals(JDK_EXECUTOR) && !base.getName().equals(TOMCAT_EXECUTOR)) {
                    base = base.getSuperclass();
                }
                try {
                    return new Ops(base == null ? type : base);
                } catch (NoSuchMethodException e) {
                    throw new IllegalStateException(e);
                }
            }
        };
        final boolean tomcat;
        final Method factory;
        final Method active;
        final Method queue;
        final Method completed;
        final Method poolSize;
        final Method core;
        final Method max;
        final Method setCore;
        final Method setMax;
        final Method terminated;

        private Ops(Class<?> base) throws NoSuchMethodException {
            tomcat = base.getName().equals(TOMCAT_EXECUTOR);
            factory = base.getMethod("getThreadFactory");
            active = base.getMethod("getActiveCount");
            queue = base.getMethod("getQueue");
            completed = base.getMethod("getCompletedTaskCount");
            poolSize = base.getMethod("getPoolSize");
            core = base.getMethod("getCorePoolSize");
            max = base.getMethod("getMaximumPoolSize");
            setCore = base.getMethod("setCorePoolSize", int.class);
            setMax = base.getMethod("setMaximumPoolSize", int.class);
            terminated = base.getMethod("isTerminated");
        }

        static Ops of(Class<?> type) {
            return BY_CLASS.get(type);
        }
    }

    /** MBean instance numbers per thread-name pattern (instance=2 and up), never reused. */
    private static final Map<String, java.util.concurrent.atomic.AtomicInteger> INSTANCES = new java.util.concurrent.ConcurrentHashMap<>();
    /** The thread-name shapes (every number as N) whose conversion line was said: one line per shape. */
    private static final java.util.Set<String> SAID = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private static volatile java.lang.ref.Cleaner cleaner;

    private static java.lang.ref.Cleaner cleaner() {
        java.lang.ref.Cleaner c = cleaner;
        if (c == null) {
            synchronized (INSTANCES) {
                c = cleaner;
                if (c == null) {
                    c = java.lang.ref.Cleaner.create(r -> {
                        Thread t = new Thread(null, r, "weft-agent-cleaner", 0, false);
                        t.setDaemon(true);
                        t.setContextClassLoader(null);
                        return t;
                    });
                    cleaner = c;
                }
            }
        }
        return c;
    }

    /** {@code pool-12-thread-N} -> {@code pool-N-thread-N}: pools made alike are said once. */
    static String shape(String pattern) {
        return pattern.replaceAll("\\d+", "N");
    }

    /** Called at the start of a converted executor class's {@code setCorePoolSize} / {@code setMaximumPoolSize}. */
    public static int resized(Object executor, int requested, boolean maximum) {
        try {
            return SEEN.get(executor) instanceof Pool p ? p.resized(requested, maximum) : requested;
        } catch (Throwable t) {
            failed(t);
            return requested;
        }
    }

    /** A pool's MXBean with a description per attribute (jconsole and other JMX clients show them). */
    private static final class Described extends javax.management.StandardMBean {
        private static final Map<String, String> ATTRIBUTES = Map.of(
                "ExecutorClass", "The executor's class",
                "ThreadNamePattern", "The pool's thread names, the trailing number as N",
                "Active", "Tasks running now (the executor's getActiveCount())",
                "Queued", "Tasks waiting in the executor's queue",
                "Rejected", "Tasks the executor refused since the agent converted it",
                "Pinned", "Times a worker blocked pinned to its carrier (JFR jdk.VirtualThreadPinned, at least the agent's "
                        + "pinned_threshold long, 20 ms by default), counted since started (the agent's pinned option, "
                        + "or the operation startPinnedCount of any pool); -1 until then, with pinned=off, when this "
                        + "runtime has no JFR, or after its recording was stopped",
                "Completed", "Tasks completed (the executor's getCompletedTaskCount())",
                "PoolSize", "Worker threads now, each a virtual thread (the executor's getPoolSize())",
                "MaximumPoolSize", "The bound: at most this many tasks at once (the executor's getMaximumPoolSize())",
                "OriginalMaximumPoolSize", "The maximum pool size the application gave, before concurrency=N");

        Described(PoolMXBean pool) {
            super(pool, PoolMXBean.class, true);
        }

        @Override
        protected String getDescription(javax.management.MBeanInfo info) {
            return "A thread pool weft-agent moved onto virtual threads";
        }

        @Override
        protected String getDescription(javax.management.MBeanAttributeInfo info) {
            return ATTRIBUTES.getOrDefault(info.getName(), info.getDescription());
        }

        @Override
        protected String getDescription(javax.management.MBeanOperationInfo info) {
            return info.getName().equals("startPinnedCount")
                    ? "Starts counting every pool's Pinned (one JFR recording stream in this JVM, of "
                    + "jdk.VirtualThreadPinned alone) unless it runs; waits up to 10 s for it to start; true when counting; "
                    + "false with the agent's pinned=off"
                    : info.getDescription();
        }

        @Override
        protected int getImpact(javax.management.MBeanOperationInfo info) {
            return javax.management.MBeanOperationInfo.ACTION;
        }
    }

    /** One converted pool. Holds its executor weakly: the agent never keeps a pool alive. */
    static final class Pool implements PoolMXBean {
        private final WeakReference<Object> executor;
        private final String executorClass;
        private final String pattern;
        private final Ops ops;
        final LongAdder rejected = new LongAdder();
        /** jdk.VirtualThreadPinned events of this pool's workers, once {@link Pinned} counts. */
        final LongAdder pinned = new LongAdder();
        private volatile int originalMax;
        /** The MBean's name while registered; whoever takes it (last worker, Cleaner, sweep) unregisters. */
        private final java.util.concurrent.atomic.AtomicReference<ObjectName> name = new java.util.concurrent.atomic.AtomicReference<>();
        /** concurrency=N when applied (0: the pool keeps its own bound), and whether the core was raised with it. */
        private volatile int applied;
        private volatile boolean coreRaised;
        /** What the application asked for (its own sizes before the bound, then its later set*PoolSize calls). */
        private volatile int askedCore;
        private volatile int askedMax;

        Pool(Object executor, String pattern) {
            this.executor = new WeakReference<>(executor);
            this.executorClass = executor.getClass().getName();
            this.pattern = pattern;
            this.ops = Ops.of(executor.getClass());
        }

        private volatile String line;

        /** Applies {@code concurrency=N}. */
        void bound(int concurrency) throws ReflectiveOperationException {
            Object e = executor.get();
            int core = (int) ops.core.invoke(e);
            int max = (int) ops.max.invoke(e);
            originalMax = max;
            askedCore = core;
            askedMax = max;
            String bound;
            if (concurrency > 0 && max == 1) {
                bound = "1 task at once (a single-thread pool keeps its order; concurrency=" + concurrency + " not applied)";
            } else if (concurrency > max) {
                // A queue that never fills never starts threads past the core size: raise the core too
                // (a fixed pool is core == max). Tomcat's TaskQueue starts threads up to the maximum itself.
                boolean unbounded = ((java.util.Queue<?>) ops.queue.invoke(e)) instanceof java.util.concurrent.BlockingQueue<?> q
                        && q.remainingCapacity() == Integer.MAX_VALUE;
                ops.setMax.invoke(e, concurrency);
                if (!ops.tomcat && (core == max || unbounded)) {
                    ops.setCore.invoke(e, concurrency);
                    coreRaised = true;
                }
                applied = concurrency; // after the calls above: the resize advice lets them through unchanged
                bound = concurrency + " tasks at once (concurrency=" + concurrency + "; was " + max + ")";
            } else {
                bound = max == Integer.MAX_VALUE ? "unbounded (as before)"
                        : max + (max == 1 ? " task" : " tasks") + " at once (as before)";
            }
            line = "weft agent: " + pattern + " (" + executorClass + "): virtual threads, " + bound
                    + "; core " + core + ", max " + (max == Integer.MAX_VALUE ? "unbounded" : max) + " platform threads before";
        }

        /**
         * The size the application's {@code setCorePoolSize} / {@code setMaximumPoolSize} call really sets:
         * under {@code concurrency=N} never below the bound (else a later {@code setMaximumPoolSize(x < N)} below
         * the raised core would throw); what the application asked for is kept. A request the executor would
         * have refused before (core above its maximum, maximum below its core) is still refused.
         */
        int resized(int requested, boolean maximum) {
            int n = applied;
            if (maximum) {
                if (n == 0 || requested <= 0 || requested < askedCore) {
                    return requested;
                }
                askedMax = requested;
                return Math.max(requested, n);
            }
            if (n == 0 || requested < 0) {
                return requested;
            }
            if (requested > askedMax) {
                return -1; // the executor refuses it, as it did before the bound (core above maximum)
            }
            askedCore = requested;
            return coreRaised ? Math.max(requested, n) : requested;
        }

        /** Says what {@link #bound} did (once per thread-name shape), registers the MBean and the JFR event. */
        void announce(Object executor) {
            if (SAID.add(shape(pattern) + " (" + executorClass + ")") || verbose) {
                System.err.println(line);
            }
            register();
            // A pool dropped without shutdown (its workers timed out: cached, allowCoreThreadTimeOut) never
            // terminates: its MBean goes when the executor is collected. The action holds the name only.
            java.util.concurrent.atomic.AtomicReference<ObjectName> n = name;
            cleaner().register(executor, () -> unregister(n));
            try {
                PoolEvent.register(Pools::live);
            } catch (Throwable t) { // a runtime without jdk.jfr
                if (verbose) {
                    System.err.println("weft agent: no JFR event: " + t);
                }
            }
        }

        Thread newWorker(Thread fromFactory, Runnable worker) {
            boolean daemon = fromFactory.isDaemon();
            Thread.Builder.OfVirtual b = Thread.ofVirtual().name(fromFactory.getName());
            Thread.UncaughtExceptionHandler h = fromFactory.getUncaughtExceptionHandler();
            // The plain ThreadGroup only passes on to the default handler, as a virtual thread's group does;
            // a subclass (its own uncaughtException) is kept as the handler.
            if (h != null && (h != fromFactory.getThreadGroup() || h.getClass() != ThreadGroup.class)) {
                b.uncaughtExceptionHandler(h);
            }
            LongAdder pins = pinned;
            Thread v = b.unstarted(() -> {
                if (!daemon) {
                    KeepAlive.started(worker);
                }
                try {
                    try {
                        Pinned.running(pins);
                    } catch (Throwable t) {
                        failed(t); // an Error here (an OutOfMemoryError) must not keep the worker from running
                    }
                    // Thread.run() of the unstarted thread runs its target: the Runnable the factory built around
                    // the Worker (its logging, MDC, monitoring), and TaskThread's wrapper, then the Worker.
                    fromFactory.run();
                } finally {
                    // release first: a failure after it must not keep the JVM from exiting
                    if (!daemon) {
                        KeepAlive.release();
                    }
                    try {
                        Pinned.ended();
                    } catch (Throwable t) {
                        failed(t);
                    }
                    exited();
                }
            });
            v.setContextClassLoader(fromFactory.getContextClassLoader());
            if (!daemon) {
                KeepAlive.created(worker);
            }
            return v;
        }

        boolean alive() {
            Object e = executor.get();
            try {
                return e != null && !(boolean) ops.terminated.invoke(e);
            } catch (ReflectiveOperationException x) {
                return false;
            }
        }

        /** After each worker's end: a terminated pool's MBean goes. */
        private void exited() {
            if (name.get() != null && !alive()) {
                unregister();
            }
        }

        void unregister() {
            unregister(name);
        }

        private static void unregister(java.util.concurrent.atomic.AtomicReference<ObjectName> name) {
            ObjectName n = name.getAndSet(null); // one of several racing callers gets it
            if (n != null) {
                try {
                    ManagementFactory.getPlatformMBeanServer().unregisterMBean(n);
                } catch (Throwable t) {
                    // gone already
                }
            }
        }

        private void register() {
            try {
                MBeanServer server = ManagementFactory.getPlatformMBeanServer();
                String base = "dev.weft.agent:type=Pool,name=" + ObjectName.quote(pattern);
                int i = INSTANCES.computeIfAbsent(pattern, k -> new java.util.concurrent.atomic.AtomicInteger()).incrementAndGet();
                ObjectName n = new ObjectName(i == 1 ? base : base + ",instance=" + i);
                server.registerMBean(new Described(this), n);
                name.set(n);
            } catch (Throwable t) {
                if (verbose) {
                    System.err.println("weft agent: no MBean for " + pattern + ": " + t);
                }
            }
        }

        private Object call(Method m) {
            Object e = executor.get();
            if (e == null) {
                return null;
            }
            try {
                return m.invoke(e);
            } catch (ReflectiveOperationException x) {
                throw new IllegalStateException(x);
            }
        }

        private int intOf(Method m) {
            Object v = call(m);
            return v == null ? 0 : (int) v;
        }

        @Override
        public String getExecutorClass() {
            return executorClass;
        }

        @Override
        public String getThreadNamePattern() {
            return pattern;
        }

        @Override
        public int getActive() {
            return intOf(ops.active);
        }

        @Override
        public int getQueued() {
            Object q = call(ops.queue);
            return q == null ? 0 : ((java.util.Collection<?>) q).size();
        }

        @Override
        public long getRejected() {
            return rejected.sum();
        }

        @Override
        public long getPinned() {
            return Pinned.counting() ? pinned.sum() : -1;
        }

        @Override
        public boolean startPinnedCount() {
            return Pinned.start();
        }

        @Override
        public long getCompleted() {
            Object v = call(ops.completed);
            return v == null ? 0 : (long) v;
        }

        @Override
        public int getPoolSize() {
            return intOf(ops.poolSize);
        }

        @Override
        public int getMaximumPoolSize() {
            return intOf(ops.max);
        }

        @Override
        public int getOriginalMaximumPoolSize() {
            return originalMax;
        }
    }
}
