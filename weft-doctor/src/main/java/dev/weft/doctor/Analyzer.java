package dev.weft.doctor;

import dev.weft.doctor.ThreadDump.DumpedThread;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/** Turns a window's JFR events and its census (a thread dump) into a {@link Report}. Pure: no I/O, no clock. */
public final class Analyzer {
    /** Stack groups and platform thread groups listed at most. */
    static final int MAX_GROUPS = 15;
    /** Frames kept of a runaway's or a pinned event's stack. */
    static final int MAX_FRAMES = 12;
    /** A run of samples may skip this many periods and still count as one run (the sampler takes a few threads a period). */
    static final int GAP_PERIODS = 3;

    private Analyzer() {
    }

    /**
     * @param census     the thread dump at the window's end, or null when none was taken
     * @param agentPools the pools weft-agent converted in the target, empty without the agent
     */
    public static Report analyze(String target, Instant from, Duration window, Jfr.Recorded recorded,
                                 ThreadDump census, int parallelism, List<Report.AgentPool> agentPools,
                                 Doctor.Options o, List<String> notes) {
        Map<Long, String> carrierOf = new HashMap<>(); // virtual tid -> carrier name, from the census
        Map<Long, String> names = new HashMap<>();
        if (census != null) {
            for (DumpedThread t : census.threads()) {
                if (!t.virtual()) {
                    names.put(t.tid(), t.name());
                }
            }
            for (DumpedThread t : census.threads()) {
                if (t.virtual() && t.carrier() >= 0) {
                    carrierOf.put(t.tid(), names.getOrDefault(t.carrier(), "?") + " (tid " + t.carrier() + ")");
                }
            }
        }
        Report.Carriers carriers = carriers(recorded, census, parallelism, o, window, names);
        return new Report(target, from.toString(), window.toMillis(), o.samplePeriod().toMillis(),
                recorded.samples().size(), o.runaway().toMillis(), census == null ? null : virtualThreads(census),
                runaways(recorded.samples(), o, carrierOf), pinning(recorded.pinned()), carriers,
                census == null ? null : platformThreads(census, carriers), List.copyOf(agentPools),
                List.copyOf(notes));
    }

    private static Report.VirtualThreads virtualThreads(ThreadDump d) {
        Map<String, Integer> byState = new TreeMap<>();
        Map<List<String>, Integer> groups = new HashMap<>();
        int total = 0;
        for (DumpedThread t : d.threads()) {
            if (!t.virtual()) {
                continue;
            }
            total++;
            byState.merge(t.state(), 1, Integer::sum);
            String[] place = place(t.stack());
            groups.merge(List.of(t.state(), place[0], place[1]), 1, Integer::sum);
        }
        List<Report.StackGroup> stacks = groups.entrySet().stream()
                .sorted(Map.Entry.<List<String>, Integer>comparingByValue().reversed())
                .limit(MAX_GROUPS)
                .map(e -> new Report.StackGroup(e.getValue(), e.getKey().get(0), e.getKey().get(1), e.getKey().get(2)))
                .toList();
        return new Report.VirtualThreads(total, byState, stacks);
    }

    /** {where, via}: the first frame outside the JDK, and the JDK frame just inside it. */
    static String[] place(List<String> stack) {
        for (int i = 0; i < stack.size(); i++) {
            if (!jdk(stack.get(i))) {
                return new String[] {frame(stack.get(i)), i > 0 ? frame(stack.get(i - 1)) : ""};
            }
        }
        return new String[] {stack.isEmpty() ? "(no frames)" : frame(stack.getFirst()), ""};
    }

    private static boolean jdk(String frame) {
        String f = frame(frame);
        return f.startsWith("java.") || f.startsWith("jdk.") || f.startsWith("sun.");
    }

    /** A frame without its module ({@code java.base/}). */
    static String frame(String f) {
        int slash = f.indexOf('/');
        int paren = f.indexOf('(');
        return slash > 0 && (paren < 0 || slash < paren) ? f.substring(slash + 1) : f;
    }

    static List<Report.Runaway> runaways(List<Jfr.Sample> samples, Doctor.Options o, Map<Long, String> carrierOf) {
        long period = o.samplePeriod().toNanos();
        long maxGap = period * GAP_PERIODS + period / 2;
        record Run(Instant first, Instant last, int samples, Jfr.Sample seen) {
            long heldNanos(long period) {
                return Duration.between(first, last).toNanos() + period;
            }
        }
        Map<Long, Run> open = new HashMap<>();
        Map<Long, Run> longest = new HashMap<>();
        for (Jfr.Sample s : samples) { // in time order
            if (!s.virtual()) {
                continue;
            }
            Run r = open.get(s.tid());
            Run now = r != null && Duration.between(r.last(), s.time()).toNanos() <= maxGap
                    ? new Run(r.first(), s.time(), r.samples() + 1, s)
                    : new Run(s.time(), s.time(), 1, s);
            open.put(s.tid(), now);
            Run best = longest.get(s.tid());
            if (best == null || now.heldNanos(period) > best.heldNanos(period)) {
                longest.put(s.tid(), now);
            }
        }
        List<Report.Runaway> out = new ArrayList<>();
        for (Map.Entry<Long, Run> e : longest.entrySet()) {
            Run r = e.getValue();
            long held = r.heldNanos(period);
            if (r.samples() >= 3 && held >= o.runaway().toNanos()) {
                out.add(new Report.Runaway(e.getKey(), r.seen().name(), carrierOf.getOrDefault(e.getKey(), ""),
                        held / 1_000_000, r.samples(), r.seen().stack().stream().limit(MAX_FRAMES).toList()));
            }
        }
        out.sort(Comparator.comparingLong(Report.Runaway::heldMs).reversed());
        return out;
    }

    private static Report.Pinning pinning(List<Pinned> events) {
        Map<List<String>, List<Pinned>> groups = new LinkedHashMap<>();
        for (Pinned p : events) {
            String where = place(p.stack())[0];
            groups.computeIfAbsent(List.of(where, p.reason(), p.blockingOperation()), k -> new ArrayList<>()).add(p);
        }
        List<Report.PinnedGroup> out = new ArrayList<>();
        for (Map.Entry<List<String>, List<Pinned>> e : groups.entrySet()) {
            List<Pinned> ps = e.getValue();
            long total = ps.stream().mapToLong(p -> p.duration().toMillis()).sum();
            long max = ps.stream().mapToLong(p -> p.duration().toMillis()).max().orElse(0);
            out.add(new Report.PinnedGroup(ps.size(), total, max, e.getKey().get(1), e.getKey().get(2),
                    e.getKey().get(0), ps.getFirst().stack().stream().limit(MAX_FRAMES).toList()));
        }
        out.sort(Comparator.comparingLong(Report.PinnedGroup::totalMs).reversed());
        return new Report.Pinning(events.size(), out);
    }

    private static Report.Carriers carriers(Jfr.Recorded recorded, ThreadDump census, int parallelism,
                                            Doctor.Options o, Duration window, Map<Long, String> names) {
        long period = o.samplePeriod().toNanos();
        Map<Long, Set<Long>> perPeriod = new HashMap<>();
        Instant start = recorded.samples().isEmpty() ? Instant.EPOCH : recorded.samples().getFirst().time();
        for (Jfr.Sample s : recorded.samples()) {
            if (s.virtual()) {
                perPeriod.computeIfAbsent(Duration.between(start, s.time()).toNanos() / period, k -> new HashSet<>())
                        .add(s.tid());
            }
        }
        long periods = Math.max(1, window.toNanos() / period);
        double busy = perPeriod.values().stream().mapToInt(Set::size).sum() / (double) periods;
        List<Report.Carrier> list = null;
        int waiting = -1;
        if (census != null) {
            Map<Long, String> carrying = new TreeMap<>();
            String prefix = null;
            waiting = 0;
            for (DumpedThread t : census.threads()) {
                if (t.virtual() && t.carrier() >= 0) {
                    carrying.put(t.carrier(), t.name().isEmpty() ? "#" + t.tid() : t.name());
                    String n = names.get(t.carrier());
                    if (prefix == null && n != null && n.lastIndexOf('-') > 0) {
                        prefix = n.substring(0, n.lastIndexOf('-') + 1);
                    }
                } else if (t.virtual() && "RUNNABLE".equals(t.state())) {
                    waiting++;
                }
            }
            if (prefix != null) { // idle carriers of the same pool
                for (Map.Entry<Long, String> e : names.entrySet()) {
                    if (e.getValue().startsWith(prefix)
                            && e.getValue().substring(prefix.length()).chars().allMatch(Character::isDigit)) {
                        carrying.putIfAbsent(e.getKey(), "");
                    }
                }
            }
            list = carrying.entrySet().stream()
                    .map(e -> new Report.Carrier(e.getKey(), names.getOrDefault(e.getKey(), "?"), e.getValue()))
                    .toList();
        }
        return new Report.Carriers(parallelism, Math.round(busy * 100) / 100.0, list, waiting);
    }

    private static Report.PlatformThreads platformThreads(ThreadDump census, Report.Carriers known) {
        Set<Long> carriers = new HashSet<>();
        if (known.carriers() != null) {
            known.carriers().forEach(c -> carriers.add(c.tid()));
        }
        Map<String, Map<String, Integer>> groups = new HashMap<>();
        int total = 0;
        for (DumpedThread t : census.threads()) {
            if (t.virtual() || carriers.contains(t.tid())) {
                continue;
            }
            total++;
            groups.computeIfAbsent(t.name().replaceAll("\\d+", "#"), k -> new TreeMap<>()).merge(t.state(), 1, Integer::sum);
        }
        List<Report.NameGroup> out = groups.entrySet().stream()
                .map(e -> new Report.NameGroup(e.getKey(), e.getValue().values().stream().mapToInt(Integer::intValue).sum(),
                        e.getValue()))
                .sorted(Comparator.comparingInt(Report.NameGroup::count).reversed().thenComparing(Report.NameGroup::name))
                .limit(MAX_GROUPS)
                .toList();
        return new Report.PlatformThreads(total, out);
    }
}
