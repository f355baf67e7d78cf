package dev.weft.server.admission;

import dev.weft.os.SchedulerLag;
import dev.weft.server.ServerRequest;

import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * An adaptive concurrency limit per key (a route), under a static ceiling ({@link FixedAdmission}).
 *
 * <p>Each key has a limit of requests in flight. Every {@value #INTERVAL_MS} ms the limits are revised from
 * one signal, the {@link SchedulerLag} (how late a ready virtual thread gets a carrier, less the collector's
 * stop-the-world pauses: {@link SchedulerLag#takeMillis()}), by {@link #next}: above
 * {@code lagTarget} every limit is cut in proportion ({@code limit × max(0.8, target/lag)}; from its peak in flight
 * / 0.8 where that is lower, since a limit starts at the ceiling and a cut of 10,000 by a fifth refuses nothing to a
 * route with 4,000 in flight), but never below what the key serves now: its completions of the last second times
 * its no-load latency (the shortest of the last 5 s), plus 10%, so that a lag the gateway did not cause (a busy
 * neighbour) cannot talk the limit down below the goodput; a floor above the limit does not raise it, and until the
 * key's completions have filled one second the floor is unknown and a lag holds the limit. At or below half the
 * target, a key whose requests in flight reached 90% of its limit in the interval gets {@value #GROWTH} more and one
 * place, {@value #CALM_GROWTH} with no cut in the last second (a key that does not use its limit does not grow it),
 * once a no-load latency has passed since the last cut (the requests admitted before then are still in flight:
 * their cost is not all seen yet). Limits stay within {@code minLimit} and the ceiling ({@code max_concurrent}, or
 * the key's own bound).
 *
 * <p>The lag is read as a CPU shortage only while the process uses at least {@code cpuBusy} (default 0.8) of its CPUs
 * ({@link CpuShare}, its CPU time over the last 500 ms, against its CPUs), or while the key's requests take at least
 * {@code queueing} (default 1.5) times their usual latency (the mean of the last second's completions against the
 * lowest such mean of the last 30 s: they wait inside the process, a shortage the CPU share does not see when the
 * process shares its CPUs with others) and the lag is at least a tenth of that usual latency: otherwise a lag over the
 * target holds the limit instead of cutting it, and a busy key grows at any lag. With the front
 * door the lag comes in bursts (ready threads queued behind a batch of wake-ups, a collector's pause) while the CPU
 * still has room: at twice the load one CPU served, the process used 71-92% of it in each second while the limit,
 * cut by those bursts, refused 59% of the requests (docs/design/admission.md). The CPU the front doors spend
 * refusing ({@link #refusingShare()}) does not count towards {@code cpuBusy}: a cut frees none of it but refuses
 * more, and clients that send a 503 again at once (a closed loop) come straight back, so the refusals kept the CPU
 * busy and lag bursts kept cutting a limit learned while the backends were fast, for up to 15 s after they slowed
 * down (docs/design/admission.md).
 *
 * <p>Measured (docs/design/admission.md): the first limit grew 10% every 100 ms at any lag under the
 * target, and its floor followed a rate smoothed over ~300 ms; at twice the load it served the limit swung
 * between 1,100 and 3,000, the lag between 0 and 390 ms, and a burst of completions after a stall raised the
 * limit through the floor while the lag was at its worst.
 *
 * <p>Why not the requests' latency, as Netflix's Gradient or Vegas limits do: behind a gateway the latency is
 * the backends'. A backend that slows from 1 s to 2 s needs twice the requests in flight for the same rate
 * (Little's law); a latency-gradient limit would do the opposite and shed a load the gateway could carry. The
 * scheduling delay grows only when this process is short of CPU, which is exactly when admitting more makes
 * every request slower.
 *
 * <p>Past its limit a request waits (at most {@code queue} of them per key) up to {@code maxWait} for a place;
 * past the queue it is refused at once. Requests without a key (the admin endpoints) pass the ceiling only.
 */
public final class AdaptiveAdmission implements Admission {
    static final long INTERVAL_MS = 100;
    /** The no-load latency is the shortest seen in this many intervals (5 s). */
    static final int NO_LOAD_INTERVALS = 50;
    /** The served rate is the completions of this many intervals (1 s). */
    static final int RATE_INTERVALS = 10;
    /**
     * A key's usual latency is the lowest of its one-second mean latencies over this many intervals (30 s): the mean
     * of a key whose backends answer anywhere from 10 ms to 1 s is far above its shortest answer, and only a mean
     * tells queueing from such a spread.
     */
    static final int USUAL_INTERVALS = 300;
    /** A limit that grows grows by this share per interval (and one place). */
    static final double GROWTH = 0.05;
    /** The process's CPU share is taken over this many revisions (500 ms). */
    static final int CPU_WINDOW = 5;
    /**
     * A limit that grows with no cut in the last {@value #RATE_INTERVALS} revisions (1 s) grows by this share per
     * interval: after the backends slow down, a route needs more in flight for the same rate (Little's law), and a
     * limit learned while they were fast took 8 s to grow from 230 to 4,600 by {@value #GROWTH}
     * (docs/design/admission.md).
     */
    static final double CALM_GROWTH = 0.2;
    /** A lag cuts a limit to this share of it at most per revision. */
    static final double MAX_CUT = 0.8;

    /**
     * One revision of a key's limit.
     *
     * <ul>
     *   <li>Lag above the target while the process used at least {@code cpuBusy} of its CPUs for serving
     *       ({@code cpuShare} less {@code refusingShare}, its front doors' refusing; NaN: unknown, counted as 0):
     *       cut by {@code target/lag}, at most to {@value #MAX_CUT} a revision, of the limit or of {@code peak} (the
     *       most requests in flight in the interval) / {@value #MAX_CUT} where that is lower (a limit far above what
     *       the key uses is cut where it bites, and one revision never cuts below the peak), and not below
     *       {@code floor} (what the key completes now at its no-load latency). A floor above the limit leaves the
     *       limit as it is: a burst of completions after a stall must not raise the limit while the lag is high.</li>
     *   <li>The key's requests in flight near its limit ({@code peak} at least 0.9 of it: busy), not
     *       {@code settling} (a no-load latency has passed since the last cut, so the cut's effect is seen), and
     *       either a lag of at most half the target or a CPU not short as above (under {@code cpuBusy} serving; in
     *       a closed loop the limit then grows until serving takes {@code cpuBusy}, refusing less; in an open loop
     *       past the CPU a higher limit refuses no less, and the admitted work queues: docs/design/admission.md):
     *       grow by {@value #GROWTH} and one place; by {@value #CALM_GROWTH} when {@code calm} (no cut in the
     *       last second).</li>
     *   <li>Otherwise: unchanged.</li>
     * </ul>
     */
    static double next(double limit, double lagMs, double targetMs, double floor, double peak, boolean settling,
                       boolean calm, double cpuShare, double refusingShare, double cpuBusy) {
        return next(limit, lagMs, targetMs, floor, peak, settling, calm, cpuShare, refusingShare, cpuBusy, Double.NaN,
                Double.NaN, 0);
    }

    /**
     * A request waits for a carrier several times (when it starts, when each call's answer wakes it, when it writes its
     * answer): a lag of this share of its usual latency makes it take about half as long again. Below it, a lag does
     * not explain why the requests take longer than usual: their backends do (a backend that slowed from 1 s to 2 s
     * doubled the ratio for 30 s, and a closed loop's lag bursts over the 20 ms target then refused 10,725-36,628
     * requests in 20 s; docs/design/admission.md).
     */
    static final double LAG_SHARE_OF_USUAL = 0.1;

    /**
     * A key that refused at least this many requests per request it served in the last second (or in the last
     * revision's interval, against a tenth of the last second's served) is taken to have
     * callers that send a 503 again at once (a closed loop), and the queueing sign stays silent for it for
     * {@value #USUAL_INTERVALS} revisions (30 s) after: a cut then frees no CPU but multiplies the refusals, and their
     * callers, sharing the CPUs, raise the lag and the latency that made the cut. An open loop at twice what a route
     * serves refuses about one request per one served, at three times two. Measured: 2,000 closed-loop callers at
     * 100 ms HTTPS backends were refused 10-15 times per request served and never settled while the sign cut
     * (docs/design/admission.md).
     */
    static final double RETURNING_REFUSALS = 4;

    /**
     * As above, with a second sign that the lag is a CPU shortage of this process's making: its requests queue inside
     * it. {@code latencyRatio} is the key's mean latency over the last second against its usual one (the lowest such
     * mean of the last 30 s, {@code usualMs}; NaN: unknown); at or above {@code queueing} (0: off) a lag over the
     * target and at least {@value #LAG_SHARE_OF_USUAL} of the usual latency counts as a shortage while the process
     * uses less than {@code cpuBusy} of its CPUs (refusing included: at or above it, the share alone decides). A
     * process that shares its CPUs with others (its load generator, its backends) may never use {@code cpuBusy} of them
     * while its requests wait for a carrier: at twice the load it served at 250 ms backends, sharing two cores, the CPU
     * share alone refused nothing while the requests took 2.3 s (docs/design/admission.md). A closed loop at slow
     * backends, whose lag comes in bursts with the requests at about their usual latency (1.1x at 4,800 in flight and
     * 1 s), is not cut by it; a backend that slows down raises the ratio, and only a lag of a tenth of the usual
     * latency then cuts. Nor is a key whose refusals come back ({@code returning}: see {@link #RETURNING_REFUSALS}).
     */
    static double next(double limit, double lagMs, double targetMs, double floor, double peak, boolean settling,
                       boolean calm, double cpuShare, double refusingShare, double cpuBusy, double latencyRatio,
                       double usualMs, double queueing) {
        return next(limit, lagMs, targetMs, floor, peak, settling, calm, cpuShare, refusingShare, cpuBusy,
                latencyRatio, usualMs, queueing, false);
    }

    static double next(double limit, double lagMs, double targetMs, double floor, double peak, boolean settling,
                       boolean calm, double cpuShare, double refusingShare, double cpuBusy, double latencyRatio,
                       double usualMs, double queueing, boolean returning) {
        // the CPU spent refusing is not short for serving: a cut frees none of it but refuses more, and in a closed
        // loop each refused caller comes straight back (docs/design/admission.md)
        // the queueing sign speaks only for a process that others keep below cpuBusy of its CPUs: one that uses them
        // (refusing included) is judged by its share alone, which leaves out the CPU spent refusing (with the sign on
        // too, a gateway on a CPU of its own kept 1.04 of its capacity at 2x where it kept 1.32 without the sign;
        // docs/design/admission.md)
        boolean cpuShort = (Double.isNaN(refusingShare) ? cpuShare : cpuShare - refusingShare) >= cpuBusy
                || (queueing > 0 && !returning && !(cpuShare >= cpuBusy) && latencyRatio >= queueing
                && lagMs >= LAG_SHARE_OF_USUAL * usualMs);
        if (lagMs > targetMs && cpuShort) {
            double from = Math.min(limit, peak / MAX_CUT);
            return Math.max(Math.min(limit, floor), from * Math.max(MAX_CUT, targetMs / lagMs));
        }
        boolean busy = peak >= 0.9 * limit;
        if ((lagMs <= targetMs / 2 || !cpuShort) && busy && !settling) {
            // a key whose refusals come back grows as a calm one: the cuts that refused them freed no CPU
            return limit * (1 + (calm || returning ? CALM_GROWTH : GROWTH)) + 1;
        }
        return limit;
    }

    /** Refusals per request served (infinite: refused, none served; NaN: neither). */
    static double refusedPerServed(long refused, long served) {
        return served > 0 ? (double) refused / served : refused > 0 ? Double.POSITIVE_INFINITY : Double.NaN;
    }

    private final AdmissionPolicy policy;
    private final FixedAdmission ceiling;
    private final Function<ServerRequest, String> keyOf;
    private final Consumer<String> onNewKey;
    private final SchedulerLag lag = new SchedulerLag(Duration.ofMillis(10));
    private final CpuShare cpu = new CpuShare();
    private final Map<String, Key> keys = new ConcurrentHashMap<>();
    private final AtomicLong nextUpdate = new AtomicLong(System.nanoTime());
    private final AtomicLong shedNoKey = new AtomicLong();

    /**
     * @param keyOf    a request's key (its route), or null for none
     * @param onNewKey told once per key the first time it is seen (to register its metrics)
     */
    public AdaptiveAdmission(AdmissionPolicy policy, FixedAdmission ceiling, Function<ServerRequest, String> keyOf,
                             Consumer<String> onNewKey) {
        this.policy = policy;
        this.ceiling = ceiling;
        this.keyOf = keyOf;
        this.onNewKey = onNewKey;
    }

    @Override
    public Ticket enter(ServerRequest r) {
        String k = keyOf.apply(r);
        return k == null ? countedNoKey(ceiling.enter(r)) : key(k).enter();
    }

    @Override
    public Decision tryEnter(ServerRequest r) {
        String k = keyOf.apply(r);
        return k == null ? countedNoKey(ceiling.tryEnter(r)) : key(k).tryEnter();
    }

    private <D extends Decision> D countedNoKey(D d) {
        if (d instanceof Refused) {
            shedNoKey.incrementAndGet();
        }
        return d;
    }

    /** The key's state (made and announced the first time), after a revision of the limits if one is due. */
    private Key key(String k) {
        revise();
        Key key = keys.get(k);
        if (key == null) {
            key = keys.computeIfAbsent(k, Key::new);
            onNewKey.accept(k);
        }
        return key;
    }

    @Override
    public Queued queue(ServerRequest r) {
        String k = keyOf.apply(r);
        Key key = k == null ? null : keys.get(k);
        return key == null ? null : key.queue();
    }

    /** Yes: a refusal is answered on the server's selector thread, not behind the work on the carriers. */
    @Override
    public boolean door() {
        return true;
    }

    /** {@link AdmissionPolicy#doorNice()}. */
    @Override
    public int doorNice() {
        return policy.doorNice();
    }

    /** {@link AdmissionPolicy#doorFallback()}. */
    @Override
    public AdmissionPolicy.DoorFallback doorFallback() {
        return policy.doorFallback();
    }

    private void revise() {
        long now = System.nanoTime();
        long due = nextUpdate.get();
        if (now - due < 0 || !nextUpdate.compareAndSet(due, now + TimeUnit.MILLISECONDS.toNanos(INTERVAL_MS))) {
            return;
        }
        double lagMs = lag.takeMillis();
        CpuShare.Use use = cpu.share(now);
        double target = policy.lagTarget().toNanos() / 1e6;
        double seconds = INTERVAL_MS / 1000.0;
        for (Key key : keys.values()) {
            key.revise(lagMs, target, seconds, use);
        }
    }

    /**
     * The share of its CPUs the process used over about the last {@value #CPU_WINDOW} revisions (500 ms while requests
     * arrive): its CPU time over the wall time times its CPUs. The JVM counts process CPU time in the kernel's clock
     * ticks (10 ms on Linux), too coarse for one 100 ms interval. Its CPUs: {@link Runtime#availableProcessors()},
     * or a cgroup v2 CPU quota ({@code /sys/fs/cgroup/cpu.max}) where that is lower, since the JVM rounds a quota of
     * 1.5 CPUs up to 2. 1 where the JVM cannot tell its CPU time, so that the lag alone decides as before.
     */
    static final class CpuShare {
        private final com.sun.management.OperatingSystemMXBean os =
                java.lang.management.ManagementFactory.getOperatingSystemMXBean()
                        instanceof com.sun.management.OperatingSystemMXBean o ? o : null;
        private final double cpus = cpus(Runtime.getRuntime().availableProcessors(), quota());
        private final long[] cpuAt = new long[CPU_WINDOW];
        private final long[] wallAt = new long[CPU_WINDOW];
        private final long[] refusingAt = new long[CPU_WINDOW];
        /** The front doors, and what each had done at the last revision. */
        private final java.util.List<DoorSeen> doors = new java.util.concurrent.CopyOnWriteArrayList<>();
        /** Guards the samples, {@code pos} and {@code refusingNanos} (a java.util.concurrent lock: revisions run on
         * virtual threads too). */
        private final ReentrantLock lock = new ReentrantLock();
        private int pos;
        /** The doors' CPU time spent refusing, summed over the revisions (estimated: see {@link #refusing}). */
        private long refusingNanos;
        private volatile Use last = new Use(Double.NaN, Double.NaN);

        /** Over the window: the share of its CPUs the process used, and the share its front doors spent refusing. */
        record Use(double process, double refusing) {
        }

        private static final class DoorSeen {
            final DoorLoad load;
            long cpu;
            long requests;
            long refused;

            DoorSeen(DoorLoad load) {
                this.load = load;
                this.cpu = load.cpuNanos();
                this.requests = load.requests();
                this.refused = load.refused();
            }
        }

        void door(DoorLoad load) {
            doors.add(new DoorSeen(load));
        }

        /**
         * Under the lock: adds each door's CPU time since the last revision, in the share of its requests that it
         * refused, to {@link #refusingNanos}. A door reads every head and writes every answer, admitted or refused,
         * so its CPU per request is about the same for both (the admitted request's own work runs on the carriers);
         * at twice the load one CPU serves it refuses about one request in two, and refusing takes far less CPU
         * than serving.
         */
        private void refusing() {
            for (DoorSeen d : doors) {
                long cpuNow = d.load.cpuNanos();
                long requestsNow = d.load.requests();
                long refusedNow = d.load.refused();
                long requests = requestsNow - d.requests;
                if (cpuNow >= 0 && d.cpu >= 0 && cpuNow > d.cpu && requests > 0) {
                    // at most all: read after the requests, the refusals may count one of a request read since
                    double refusedShare = Math.min(1, (double) (refusedNow - d.refused) / requests);
                    refusingNanos += (long) ((cpuNow - d.cpu) * refusedShare);
                }
                d.cpu = cpuNow;
                d.requests = requestsNow;
                d.refused = refusedNow;
            }
        }

        CpuShare() {
            java.util.Arrays.fill(cpuAt, cpuNanos());
            java.util.Arrays.fill(wallAt, System.nanoTime());
        }

        private long cpuNanos() {
            return os == null ? -1 : os.getProcessCpuTime();
        }

        /** The CPUs a process may use: {@code available}, or a lower quota (CPUs, null: none). */
        static double cpus(int available, Double quota) {
            return quota == null || !(quota > 0) ? available : Math.min(available, quota);
        }

        /** cgroup v2's {@code cpu.max} ("QUOTA PERIOD" or "max PERIOD") as CPUs; null when there is none. */
        static Double quota(String cpuMax) {
            String[] f = cpuMax.strip().split(" ");
            if (f.length != 2 || f[0].equals("max")) {
                return null;
            }
            try {
                long q = Long.parseLong(f[0]);
                long p = Long.parseLong(f[1]);
                return q > 0 && p > 0 ? (double) q / p : null;
            } catch (NumberFormatException e) {
                return null;
            }
        }

        private static Double quota() {
            try {
                return quota(java.nio.file.Files.readString(java.nio.file.Path.of("/sys/fs/cgroup/cpu.max")));
            } catch (java.io.IOException | RuntimeException e) {
                return null; // no cgroup v2 file here: availableProcessors() alone
            }
        }

        /** Called at each revision; two revisions may overlap when one was delayed past the next one's time. */
        Use share(long now) {
            lock.lock();
            try {
                long cpuNow = cpuNanos();
                refusing();
                int oldest = pos; // the sample CPU_WINDOW revisions ago, overwritten below
                long wall = now - wallAt[oldest];
                double share = cpuNow < 0 || cpuAt[oldest] < 0 || wall <= 0 ? 1
                        : (cpuNow - cpuAt[oldest]) / (wall * cpus);
                double refusing = wall <= 0 ? 0 : (refusingNanos - refusingAt[oldest]) / (wall * cpus);
                cpuAt[oldest] = cpuNow;
                wallAt[oldest] = now;
                refusingAt[oldest] = refusingNanos;
                pos = (pos + 1) % CPU_WINDOW;
                Use use = new Use(share, refusing);
                last = use;
                return use;
            } finally {
                lock.unlock();
            }
        }

        Use last() {
            return last;
        }
    }

    /** The key's current limit (0 when unknown). */
    public int limit(String key) {
        Key k = keys.get(key);
        return k == null ? 0 : (int) k.limit;
    }

    public int inFlight(String key) {
        Key k = keys.get(key);
        return k == null ? 0 : k.inFlight;
    }

    public int queued(String key) {
        Key k = keys.get(key);
        return k == null ? 0 : k.waiting;
    }

    /**
     * The key's mean latency over the last second against its usual one (the lowest such mean of the last 30 s), at
     * the last revision (NaN: not yet known); a lag over the target may cut its limit while this is at least
     * {@link AdmissionPolicy#queueing()}.
     */
    public double latencyRatio(String key) {
        Key k = keys.get(key);
        return k == null ? Double.NaN : k.latencyRatio;
    }

    /**
     * The key's refusals of the last second per request it served (NaN: neither); at or above {@value
     * #RETURNING_REFUSALS} its callers are taken to send a 503 again at once, and the queueing sign stays silent for it
     * for 30 s.
     */
    public double refusedPerServed(String key) {
        Key k = keys.get(key);
        return k == null ? Double.NaN : k.refusedPerServed;
    }

    public long shed(String key) {
        Key k = keys.get(key);
        return k == null ? 0 : k.shed.get();
    }

    public Collection<String> keys() {
        return keys.keySet();
    }

    /**
     * The share of its CPUs the process used over the last five revisions (see {@link AdmissionPolicy#cpuBusy()});
     * NaN before the first.
     */
    public double cpuShare() {
        return cpu.last().process();
    }

    /**
     * The share of its CPUs the process's front doors spent refusing over the last five revisions (estimated: a
     * door's CPU time in the share of its requests it refused); NaN before the first. A lag cuts the limits only
     * while {@link #cpuShare()} less this is at least {@link AdmissionPolicy#cpuBusy()}.
     */
    public double refusingShare() {
        return cpu.last().refusing();
    }

    @Override
    public void doorOpened(DoorLoad load) {
        cpu.door(load);
    }

    /**
     * The nice value the (first) front door's thread runs at: {@link AdmissionPolicy#doorNice()} when the kernel
     * allowed it, else the process's own; NaN before a door has started or where it cannot be read.
     */
    public double doorNiceNow() {
        return firstDoor(Admission.DoorLoad::nice);
    }

    /**
     * How many nice steps the (first) front door's thread runs ahead of the process's other threads: raised itself
     * ({@link AdmissionPolicy#doorNice()}), or lowered them ({@link AdmissionPolicy#doorFallback()}); 0 when neither,
     * NaN before a door has started or where it cannot be read.
     */
    public double doorLeadNow() {
        return firstDoor(Admission.DoorLoad::lead);
    }

    private double firstDoor(java.util.function.ToIntFunction<Admission.DoorLoad> value) {
        for (CpuShare.DoorSeen d : cpu.doors) { // the doors the CPU share follows: every one that opened
            int n = value.applyAsInt(d.load);
            return n == Integer.MIN_VALUE ? Double.NaN : n;
        }
        return Double.NaN;
    }

    /** The scheduling delay (ms) at the last revision. */
    public double lagMillis() {
        return lag.lastMillis();
    }

    @Override
    public int inFlight() {
        return ceiling.inFlight();
    }

    @Override
    public long shed() {
        long n = shedNoKey.get();
        for (Key k : keys.values()) {
            n += k.shed.get();
        }
        return n;
    }

    @Override
    public void close() {
        lag.close();
    }

    /** An admitted request: its key and when it started. */
    private record Place(Key key, long started) implements Admitted {
        @Override
        public void exit() {
            key.exit(started);
        }
    }

    private final class Key {
        final String name;
        final int max;
        final ReentrantLock lock = new ReentrantLock();
        final Condition freed = lock.newCondition();
        final AtomicLong shed = new AtomicLong();
        volatile double limit;
        volatile int inFlight;
        volatile int waiting;
        int peak;
        /** Per interval: completions and the shortest latency; the served rate and the no-load latency. */
        int completed;
        long intervalMin = Long.MAX_VALUE;
        final long[] mins = new long[NO_LOAD_INTERVALS];
        int minsPos;
        /** Completions of the last {@value #RATE_INTERVALS} intervals (1 s): the served rate. */
        final int[] done = new int[RATE_INTERVALS];
        /** Per interval: the completions' summed latency (ns); of the last {@value #RATE_INTERVALS}: their mean. */
        long tookSum;
        final long[] tookSums = new long[RATE_INTERVALS];
        /**
         * The mean latency of the last second (ns) at each of the last {@value #USUAL_INTERVALS} revisions (0: none);
         * the lowest is the key's usual latency.
         */
        final double[] means = new double[USUAL_INTERVALS];
        int meansPos;
        /** The mean latency of the last second against the usual one at the last revision (NaN: unknown). */
        volatile double latencyRatio = Double.NaN;
        /** {@link #shed} at each of the last {@value #RATE_INTERVALS} revisions: the refusals of the last second. */
        final long[] shedAt = new long[RATE_INTERVALS];
        /** The last second's refusals per request served, at the last revision (NaN: none served nor refused). */
        volatile double refusedPerServed = Double.NaN;
        /** When the refusals last came back ({@link #RETURNING_REFUSALS}; {@link System#nanoTime()}). */
        long returnedAt = System.nanoTime() - Long.MAX_VALUE / 2;
        int donePos;
        /** Revisions since the first that saw a completion, counted up to {@value #RATE_INTERVALS} + 1. */
        int revisionsSinceFirstDone;
        /**
         * When the lag last cut the limit ({@link System#nanoTime()}); not when the floor kept it from cutting,
         * since a closed loop's refusals brought lag bursts that would then stop the limit from growing.
         */
        long lastCutAt = System.nanoTime() - Long.MAX_VALUE / 2;

        Key(String name) {
            this.name = name;
            this.max = Math.min(ceiling.max(), policy.routes().getOrDefault(name, Integer.MAX_VALUE));
            this.limit = Math.max(Math.min(policy.initialLimit(), max), Math.min(policy.minLimit(), max));
        }

        Ticket enter() {
            lock.lock();
            try {
                Ticket atOnce = atOnce();
                if (atOnce != null) {
                    return atOnce;
                }
                waiting++;
                try {
                    long until = System.nanoTime() + policy.maxWait().toNanos();
                    while (true) {
                        if (take()) {
                            return new Place(this, System.nanoTime());
                        }
                        long left = until - System.nanoTime();
                        if (left <= 0) {
                            return waitedTooLong();
                        }
                        // Held back by this key's own limit: an exit of this key or a raised limit signals
                        // (no polling: a full queue of 100 waking every 5 ms was 20,000 wake-ups a second of a
                        // saturated gateway). Held back by the ceiling: a place freed by another key signals
                        // nobody here, so look again every 5 ms.
                        freed.awaitNanos(inFlight >= (int) limit ? left
                                : Math.min(left, TimeUnit.MILLISECONDS.toNanos(5)));
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return refuse(new Refusal.Stopping());
                } finally {
                    waiting--;
                }
            } finally {
                lock.unlock();
            }
        }

        /** As {@link #enter()}, but {@link WouldWait#WOULD_WAIT} instead of waiting in the queue. */
        Decision tryEnter() {
            lock.lock();
            try {
                Ticket t = atOnce();
                return t != null ? t : WouldWait.WOULD_WAIT;
            } finally {
                lock.unlock();
            }
        }

        /** Under the lock: admitted (a place and nobody waiting before it), refused (the queue is full), or null. */
        private Ticket atOnce() {
            if (waiting == 0 && take()) {
                return new Place(this, System.nanoTime());
            }
            return waiting >= policy.queue() ? queueFull() : null;
        }

        /** A place in the queue that the front door polls (no thread waits in it); counted in {@code waiting}. */
        Queued queue() {
            lock.lock();
            try {
                if (waiting >= policy.queue()) {
                    return null; // full since tryEnter looked: enter() gives the answer
                }
                waiting++;
            } finally {
                lock.unlock();
            }
            long deadline = System.nanoTime() + policy.maxWait().toNanos();
            return new Queued() {
                private boolean left;

                @Override
                public long deadline() {
                    return deadline;
                }

                @Override
                public Decision poll() {
                    lock.lock();
                    try {
                        if (left || !take()) {
                            return WouldWait.WOULD_WAIT;
                        }
                        left = true;
                        waiting--;
                        return new Place(Key.this, System.nanoTime());
                    } finally {
                        lock.unlock();
                    }
                }

                @Override
                public Refused expire() {
                    leave();
                    return waitedTooLong();
                }

                @Override
                public void leave() {
                    lock.lock();
                    try {
                        if (!left) {
                            left = true;
                            waiting--;
                        }
                    } finally {
                        lock.unlock();
                    }
                }
            };
        }

        private Refused waitedTooLong() {
            return refuse(new Refusal.WaitedTooLong(at(), policy.maxWait()));
        }

        private Ticket queueFull() {
            return refuse(new Refusal.QueueFull(at(), waiting));
        }

        /** This key's limit as it stands, and the ceiling's. */
        private Refusal.RouteLimit at() {
            return new Refusal.RouteLimit(name, inFlight, (int) limit, ceiling.inFlight(), ceiling.max());
        }

        /** Under the lock: a place below the limit and under the ceiling. */
        private boolean take() {
            if (inFlight >= (int) limit || !ceiling.tryTake()) {
                return false;
            }
            inFlight++;
            if (inFlight > peak) {
                peak = inFlight;
            }
            return true;
        }

        private Refused refuse(Refusal why) {
            shed.incrementAndGet();
            return new Refused(why);
        }

        void exit(long started) {
            long took = System.nanoTime() - started;
            lock.lock();
            try {
                inFlight--;
                completed++;
                tookSum += took;
                if (took < intervalMin) {
                    intervalMin = took;
                }
                ceiling.give();
                if (waiting > 0) {
                    freed.signal();
                }
            } finally {
                lock.unlock();
            }
        }

        void revise(double lagMs, double targetMs, double intervalSeconds, CpuShare.Use use) {
            lock.lock();
            try {
                done[donePos] = completed;
                tookSums[donePos] = tookSum;
                long shedNow = shed.get();
                long refused = shedNow - shedAt[donePos]; // since the revision a second ago
                // since the last revision, whose count is in the slot before this one
                long refusedLately = shedNow - shedAt[(donePos + RATE_INTERVALS - 1) % RATE_INTERVALS];
                shedAt[donePos] = shedNow;
                donePos = (donePos + 1) % done.length;
                int sum = 0;
                long tookTotal = 0;
                for (int i = 0; i < done.length; i++) {
                    sum += done[i];
                    tookTotal += tookSums[i];
                }
                tookSum = 0;
                double rate = sum / (done.length * intervalSeconds);
                if (completed > 0) {
                    mins[minsPos] = intervalMin;
                    minsPos = (minsPos + 1) % mins.length;
                }
                if ((completed > 0 || revisionsSinceFirstDone > 0) && revisionsSinceFirstDone <= RATE_INTERVALS) {
                    revisionsSinceFirstDone++;
                }
                completed = 0;
                intervalMin = Long.MAX_VALUE;
                long noLoad = Long.MAX_VALUE;
                for (long m : mins) {
                    if (m > 0 && m < noLoad) {
                        noLoad = m;
                    }
                }
                // what the route serves now, at its no-load latency, with 10% room: a lag never cuts below it.
                // Unknown (the limit: a lag holds it) until its completions have filled one rate window: before
                // that the cost of what it admitted is not seen, and the rate understates what it serves (a
                // cold start with 4,000 callers at 1 s backends stalled the JVM ~1 s before anything completed,
                // and a floor of 0 let the lag cut the limit from 10,000 to 137; docs/design/admission.md)
                double floor = noLoad == Long.MAX_VALUE || revisionsSinceFirstDone <= RATE_INTERVALS
                        ? Double.POSITIVE_INFINITY : 1.1 * rate * (noLoad / 1e9) + policy.minLimit();
                long now = System.nanoTime();
                boolean settling = noLoad != Long.MAX_VALUE && now - lastCutAt < noLoad;
                boolean calm = now - lastCutAt >= TimeUnit.MILLISECONDS.toNanos(RATE_INTERVALS * INTERVAL_MS);
                // the requests' mean latency over the last second against their usual one (the lowest such mean of
                // the last 30 s): above 1, they wait inside the process (for a carrier, when the lag is high too);
                // unknown with the floor
                double ratio = Double.NaN;
                double usualMs = Double.NaN;
                if (!Double.isInfinite(floor) && sum > 0) {
                    double mean = (double) tookTotal / sum;
                    means[meansPos] = mean;
                    meansPos = (meansPos + 1) % means.length;
                    double usual = mean;
                    for (double m : means) {
                        if (m > 0 && m < usual) {
                            usual = m;
                        }
                    }
                    ratio = mean / usual;
                    usualMs = usual / 1e6;
                }
                latencyRatio = ratio;
                refusedPerServed = refusedPerServed(refused, sum);
                // the last interval's refusals against a tenth of the last second's served: a closed loop's refused
                // callers come back within it, and a second's window let the sign cut for a second more
                if (refusedPerServed >= RETURNING_REFUSALS
                        || refusedPerServed(refusedLately * RATE_INTERVALS, sum) >= RETURNING_REFUSALS) {
                    returnedAt = now;
                }
                boolean returning = now - returnedAt < TimeUnit.MILLISECONDS.toNanos(USUAL_INTERVALS * INTERVAL_MS);
                double l = next(limit, lagMs, targetMs, floor, peak, settling, calm, use.process(), use.refusing(),
                        policy.cpuBusy(), ratio, usualMs, policy.queueing(), returning);
                if (l < limit) {
                    lastCutAt = now;
                }
                limit = Math.max(Math.min(policy.minLimit(), max), Math.min(max, l));
                peak = inFlight;
                if (waiting > 0 && inFlight < (int) limit) {
                    freed.signalAll();
                }
            } finally {
                lock.unlock();
            }
        }
    }
}
