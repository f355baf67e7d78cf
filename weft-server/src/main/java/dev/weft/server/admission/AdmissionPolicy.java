package dev.weft.server.admission;

import java.time.Duration;
import java.util.Map;

/**
 * The adaptive admission limit of a server (see {@link AdaptiveAdmission}).
 *
 * @param enabled      default true (the adaptive limit; measured: docs/design/admission.md); false: only the
 *                     static {@code max_concurrent}
 * @param initialLimit each key's (route's) limit before it has learned one; default {@link #AT_CEILING}, the
 *                     ceiling ({@code max_concurrent} or the route's bound), so that nothing is refused before the
 *                     CPU is short (it was 1000, which refused a closed loop of 4,000 at 1 s backends)
 * @param minLimit     a limit never goes below this, default 10
 * @param queue        requests that may wait for a place per key, default 100; more are refused at once
 * @param maxWait      how long a request waits in the queue before it is refused, default 20ms
 * @param lagTarget    the scheduling delay the gateway accepts before it lowers its limits, default 20ms
 * @param cpuBusy      the share of its CPUs (0..1) the process must have used over the last 500 ms for serving (its
 *                     front doors' refusing left out) for a lag over the target to cut the limits, default
 *                     {@value #DEFAULT_CPU_BUSY}; 0: the lag alone decides (as at first)
 * @param routes       per key (route id such as {@code GET /orders/{id}}): a fixed upper bound of its limit
 * @param doorNice     the Linux nice value (-20..0) the front door's thread asks for as it starts, default
 *                     {@value #DEFAULT_DOOR_NICE}, so that it reads and refuses ahead of the carriers when the CPU is
 *                     short (docs/design/door.md); raising it needs {@code CAP_SYS_NICE}, and without it the
 *                     door runs at the process's priority ({@code doorFallback}); 0 leaves it alone
 * @param doorFallback what the door does when it may not raise its thread ({@code admission.door_fallback}, default
 *                     {@link DoorFallback#AUTO})
 * @param queueing     a lag over the target also cuts, whatever the CPU share, while a key's requests take at least
 *                     this many times their usual latency (their mean over the last second against the lowest
 *                     such mean of the last 30 s: they queue inside the process), default {@value #DEFAULT_QUEUEING}; 0: never
 *                     (the CPU share alone decides, as before); see docs/design/admission.md
 */
public record AdmissionPolicy(boolean enabled, int initialLimit, int minLimit, int queue, Duration maxWait,
                              Duration lagTarget, double cpuBusy, Map<String, Integer> routes, int doorNice,
                              DoorFallback doorFallback, double queueing) {
    public static final double DEFAULT_CPU_BUSY = 0.8;
    public static final double DEFAULT_QUEUEING = 1.5;
    public static final int DEFAULT_DOOR_NICE = -5;
    /** An {@code initialLimit} that starts each key at its ceiling. */
    public static final int AT_CEILING = Integer.MAX_VALUE;
    public static final AdmissionPolicy DEFAULT = new AdmissionPolicy(true, AT_CEILING, 10, 100, Duration.ofMillis(20),
            Duration.ofMillis(20), Map.of());

    /** With the default {@code cpuBusy} and {@code doorNice}. */
    public AdmissionPolicy(boolean enabled, int initialLimit, int minLimit, int queue, Duration maxWait,
                           Duration lagTarget, Map<String, Integer> routes) {
        this(enabled, initialLimit, minLimit, queue, maxWait, lagTarget, DEFAULT_CPU_BUSY, routes);
    }

    /** What the front door does when it may not raise its thread to {@code doorNice} (no {@code CAP_SYS_NICE}). */
    public enum DoorFallback {
        /**
         * Lower every other thread of the process by as many steps instead, which needs no permission: the door keeps
         * the same lead within the process, and the process's threads yield to the other processes of its CPU cgroup.
         */
        LOWER_OTHERS,
        /** {@link #LOWER_OTHERS} where the process is alone in its CPU cgroup (a container, a service), else none. */
        AUTO,
        /** Leave them: the door has no lead (one warning). */
        NONE;

        /** Whether the door lowers the other threads, in a process whose CPU cgroup is {@code cgroup} (null: unknown). */
        public boolean lowers(dev.weft.os.CpuCgroup.Sharing cgroup) {
            return this == LOWER_OTHERS || (this == AUTO && cgroup != null && cgroup.alone());
        }
    }

    /**
     * The nice the door lowers the other threads to, in a process at {@code processNice}: as many steps below as
     * {@code doorNice} is above (-5: +5 in a process at 0), at most 19.
     */
    public static int othersNice(int processNice, int doorNice) {
        return Math.min(19, processNice - doorNice);
    }

    /** With the default {@code queueing}. */
    public AdmissionPolicy(boolean enabled, int initialLimit, int minLimit, int queue, Duration maxWait,
                           Duration lagTarget, double cpuBusy, Map<String, Integer> routes, int doorNice,
                           DoorFallback doorFallback) {
        this(enabled, initialLimit, minLimit, queue, maxWait, lagTarget, cpuBusy, routes, doorNice, doorFallback,
                DEFAULT_QUEUEING);
    }

    /** With the default {@code doorFallback} ({@link DoorFallback#AUTO}). */
    public AdmissionPolicy(boolean enabled, int initialLimit, int minLimit, int queue, Duration maxWait,
                           Duration lagTarget, double cpuBusy, Map<String, Integer> routes, int doorNice) {
        this(enabled, initialLimit, minLimit, queue, maxWait, lagTarget, cpuBusy, routes, doorNice, DoorFallback.AUTO);
    }

    /** With the default {@code doorNice}. */
    public AdmissionPolicy(boolean enabled, int initialLimit, int minLimit, int queue, Duration maxWait,
                           Duration lagTarget, double cpuBusy, Map<String, Integer> routes) {
        this(enabled, initialLimit, minLimit, queue, maxWait, lagTarget, cpuBusy, routes, DEFAULT_DOOR_NICE);
    }

    public AdmissionPolicy {
        if (minLimit < 1 || initialLimit < minLimit) {
            throw new IllegalArgumentException("admission min_limit must be at least 1 and initial_limit at least min_limit");
        }
        if (queue < 0 || queue > 100_000) {
            throw new IllegalArgumentException("admission queue must be 0..100000");
        }
        if (maxWait.isNegative() || lagTarget.isNegative() || lagTarget.isZero()) {
            throw new IllegalArgumentException("admission max_wait must be 0 or more and lag_target above zero");
        }
        if (!(cpuBusy >= 0 && cpuBusy <= 1)) {
            throw new IllegalArgumentException("admission cpu_busy must be 0..1");
        }
        if (!(queueing == 0 || (queueing >= 1 && queueing <= 100))) {
            throw new IllegalArgumentException("admission queueing must be 0 (off) or 1..100");
        }
        if (doorNice < -20 || doorNice > 0) {
            throw new IllegalArgumentException("admission door_nice must be -20..0");
        }
        java.util.Objects.requireNonNull(doorFallback, "doorFallback");
        routes = Map.copyOf(routes);
        for (Map.Entry<String, Integer> e : routes.entrySet()) {
            if (e.getValue() < 1) {
                throw new IllegalArgumentException("admission limit of route " + e.getKey() + " must be at least 1");
            }
        }
    }
}
