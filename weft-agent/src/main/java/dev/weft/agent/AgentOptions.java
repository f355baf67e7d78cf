package dev.weft.agent;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The agent's options, as given after {@code -javaagent:weft-agent.jar=}: comma-separated, each
 * {@code name=value} or a bare flag.
 *
 * @param concurrency 0 (the default): each converted pool runs as many tasks at once as it did; N: up to N
 *                    (never fewer than it did)
 * @param excludes    globs ({@code *}, {@code ?}) of pools left on platform threads, matched against a pool's
 *                    thread name, its executor's class and its thread factory's class
 * @param verbose     also say which pools were left alone, and why
 * @param pinned      when each pool's pinned workers are counted (a JFR recording stream in the process)
 * @param pinnedThreshold the shortest pin counted ({@code jdk.VirtualThreadPinned}'s threshold)
 * @param threads     globs of class names ({@code com.acme.*}) whose {@code new Thread(runnable)} sites make
 *                    virtual threads; empty (the default): no call site is changed
 */
public record AgentOptions(int concurrency, List<String> excludes, boolean verbose, PinnedCount pinned,
                           Duration pinnedThreshold, List<String> threads) {
    /** The largest {@code concurrency=}: far above what a process's 20,000 descriptors can feed. */
    public static final int MAX_CONCURRENCY = 1_000_000;
    /** JFR's own default threshold for {@code jdk.VirtualThreadPinned} ({@code default.jfc}, {@code profile.jfc}). */
    public static final Duration DEFAULT_PINNED_THRESHOLD = Duration.ofMillis(20);
    /** The longest {@code pinned_threshold=}: a pin that long is a stall anyone sees without a count. */
    public static final Duration MAX_PINNED_THRESHOLD = Duration.ofSeconds(60);

    public static final String USAGE = "options (comma-separated): concurrency=N (1.." + MAX_CONCURRENCY
            + "), exclude=GLOB (repeatable), verbose, pinned[=on|off], pinned_threshold=Nms|Ns (0ms..60s), threads=CLASSGLOB (repeatable)";

    private static final Pattern DURATION = Pattern.compile("(\\d{1,9})(ms|s)");

    /** When the pinned workers of each pool are counted. */
    public enum PinnedCount {
        /** From the first {@code startPinnedCount()} on a pool MBean ({@code weft doctor} invokes it): the default. */
        ASKED,
        /** From the JVM's start (the {@code pinned} option). */
        START,
        /** Never ({@code pinned=off}): no JFR recording is started by the agent, {@code Pinned} reads -1. */
        OFF
    }

    public AgentOptions {
        excludes = List.copyOf(excludes);
        threads = List.copyOf(threads);
    }

    /** Without {@code threads=}. */
    public AgentOptions(int concurrency, List<String> excludes, boolean verbose, PinnedCount pinned,
                        Duration pinnedThreshold) {
        this(concurrency, excludes, verbose, pinned, pinnedThreshold, List.of());
    }

    /** Parses the agent's argument string (null or empty: the defaults). */
    public static AgentOptions parse(String args) {
        int concurrency = 0;
        List<String> excludes = new ArrayList<>();
        boolean verbose = false;
        PinnedCount pinned = PinnedCount.ASKED;
        Duration pinnedThreshold = DEFAULT_PINNED_THRESHOLD;
        List<String> threads = new ArrayList<>();
        if (args == null || args.isBlank()) {
            return new AgentOptions(concurrency, excludes, verbose, pinned, pinnedThreshold, threads);
        }
        for (String part : args.split(",")) {
            String p = part.strip();
            if (p.isEmpty()) {
                continue;
            }
            int eq = p.indexOf('=');
            String name = eq < 0 ? p : p.substring(0, eq);
            String value = eq < 0 ? null : p.substring(eq + 1);
            switch (name) {
                case "concurrency" -> {
                    try {
                        concurrency = Integer.parseInt(required(name, value));
                    } catch (NumberFormatException e) {
                        throw new IllegalArgumentException("concurrency=" + value + " is not a whole number; " + USAGE);
                    }
                    if (concurrency < 1 || concurrency > MAX_CONCURRENCY) {
                        throw new IllegalArgumentException("concurrency=" + value + " is outside 1.." + MAX_CONCURRENCY);
                    }
                }
                case "exclude" -> excludes.add(required(name, value));
                case "threads" -> threads.add(threadsGlob(required(name, value)));
                case "verbose" -> {
                    if (value != null) {
                        throw new IllegalArgumentException("verbose takes no value; " + USAGE);
                    }
                    verbose = true;
                }
                case "pinned" -> pinned = switch (value == null ? "on" : value.strip()) {
                    case "on" -> PinnedCount.START;
                    case "off" -> PinnedCount.OFF;
                    default -> throw new IllegalArgumentException("pinned=" + value + " is neither on nor off; " + USAGE);
                };
                case "pinned_threshold" -> pinnedThreshold = threshold(required(name, value));
                default -> throw new IllegalArgumentException("unknown option '" + p + "'; " + USAGE);
            }
        }
        return new AgentOptions(concurrency, excludes, verbose, pinned, pinnedThreshold, threads);
    }

    /** A class-name glob; refused when it could only match the JDK's or the agent's own classes. */
    private static String threadsGlob(String glob) {
        for (String p : ThreadSites.NEVER) {
            if (glob.startsWith(p)) {
                throw new IllegalArgumentException("threads=" + glob + " names only classes the agent never changes ("
                        + p + "*); " + USAGE);
            }
        }
        return glob;
    }

    /** {@code 20ms}, {@code 0ms}, {@code 1s}: as JFR writes a threshold, within 0..{@link #MAX_PINNED_THRESHOLD}. */
    private static Duration threshold(String value) {
        Matcher m = DURATION.matcher(value);
        if (!m.matches()) {
            throw new IllegalArgumentException("pinned_threshold=" + value + " is not a duration such as 20ms or 1s; " + USAGE);
        }
        long n = Long.parseLong(m.group(1));
        Duration d = m.group(2).equals("ms") ? Duration.ofMillis(n) : Duration.ofSeconds(n);
        if (d.compareTo(MAX_PINNED_THRESHOLD) > 0) {
            throw new IllegalArgumentException("pinned_threshold=" + value + " is above " + MAX_PINNED_THRESHOLD.toSeconds() + "s");
        }
        return d;
    }

    private static String required(String name, String value) {
        if (value == null || value.isBlank()) {
            throw new IllegalArgumentException(name + "= needs a value; " + USAGE);
        }
        return value.strip();
    }
}
