package dev.weft.agent;

import java.util.ArrayList;
import java.util.List;

/**
 * The agent's options, as given after {@code -javaagent:weft-agent.jar=}: comma-separated, each
 * {@code name=value} or a bare flag.
 *
 * @param concurrency 0 (the default): each converted pool runs as many tasks at once as it did; N: up to N
 *                    (never fewer than it did)
 * @param excludes    globs ({@code *}, {@code ?}) of pools left on platform threads, matched against a pool's
 *                    thread name, its executor's class and its thread factory's class
 * @param verbose     also say which pools were left alone, and why
 * @param pinned      count each pool's pinned workers from the start (a JFR recording stream in the process)
 *                    rather than from a pool MBean's {@code startPinnedCount()} operation
 * @param threads     globs of class names ({@code com.acme.*}) whose {@code new Thread(runnable)} sites make
 *                    virtual threads; empty (the default): no call site is changed
 */
public record AgentOptions(int concurrency, List<String> excludes, boolean verbose, boolean pinned, List<String> threads) {
    /** The largest {@code concurrency=}: far above what a process's 20,000 descriptors can feed. */
    public static final int MAX_CONCURRENCY = 1_000_000;

    public static final String USAGE = "options (comma-separated): concurrency=N (1.." + MAX_CONCURRENCY
            + "), exclude=GLOB (repeatable), verbose, pinned, threads=CLASSGLOB (repeatable)";

    public AgentOptions {
        excludes = List.copyOf(excludes);
        threads = List.copyOf(threads);
    }

    /** Without {@code threads=}. */
    public AgentOptions(int concurrency, List<String> excludes, boolean verbose, boolean pinned) {
        this(concurrency, excludes, verbose, pinned, List.of());
    }

    /** Parses the agent's argument string (null or empty: the defaults). */
    public static AgentOptions parse(String args) {
        int concurrency = 0;
        List<String> excludes = new ArrayList<>();
        boolean verbose = false;
        boolean pinned = false;
        List<String> threads = new ArrayList<>();
        if (args == null || args.isBlank()) {
            return new AgentOptions(concurrency, excludes, verbose, pinned, threads);
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
                case "pinned" -> {
                    if (value != null) {
                        throw new IllegalArgumentException("pinned takes no value; " + USAGE);
                    }
                    pinned = true;
                }
                default -> throw new IllegalArgumentException("unknown option '" + p + "'; " + USAGE);
            }
        }
        return new AgentOptions(concurrency, excludes, verbose, pinned, threads);
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

    private static String required(String name, String value) {
        if (value == null || value.isBlank()) {
            throw new IllegalArgumentException(name + "= needs a value; " + USAGE);
        }
        return value.strip();
    }
}
