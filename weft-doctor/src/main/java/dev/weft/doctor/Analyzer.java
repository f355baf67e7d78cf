package dev.weft.doctor;

import dev.weft.doctor.ThreadDump.DumpedThread;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** Turns a window of thread dumps and pinning events into a {@link Report}. Pure: no I/O, no clock. */
public final class Analyzer {
    /** Stack groups and platform thread groups listed at most. */
    static final int MAX_GROUPS = 15;
    /** Frames kept of a runaway's or a pinned event's stack. */
    static final int MAX_FRAMES = 12;

    private Analyzer() {
    }

    public static Report analyze(String target, List<ThreadDump> samples, List<Pinned> pinned, int parallelism,
                                 Duration interval, Duration runaway, List<String> notes) {
        if (samples.isEmpty()) {
            throw new IllegalArgumentException("no samples");
        }
        ThreadDump last = samples.getLast();
        long windowMs = Duration.between(samples.getFirst().taken(), last.taken()).toMillis();
        Map<Long, String> names = new HashMap<>();
        for (ThreadDump d : samples) {
            for (DumpedThread t : d.threads()) {
                if (!t.virtual()) {
                    names.put(t.tid(), t.name());
                }
            }
        }
        Report.Carriers carriers = carriers(samples, parallelism, names);
        return new Report(target, samples.getFirst().taken().toString(), windowMs, samples.size(),
                interval.toMillis(), runaway.toMillis(), virtualThreads(last), runaways(samples, runaway, names),
                pinning(pinned), carriers, platformThreads(last, carriers), List.copyOf(notes));
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
        return frame.startsWith("java.") || frame.startsWith("jdk.") || frame.startsWith("sun.");
    }

    /** A frame without its module ({@code java.base/}). */
    static String frame(String f) {
        int slash = f.indexOf('/');
        int paren = f.indexOf('(');
        return slash > 0 && (paren < 0 || slash < paren) ? f.substring(slash + 1) : f;
    }

    private static List<Report.Runaway> runaways(List<ThreadDump> samples, Duration threshold, Map<Long, String> names) {
        record Run(long carrier, java.time.Instant first, java.time.Instant last, int samples, DumpedThread seen) {
        }
        Map<Long, Run> open = new HashMap<>();
        Map<Long, Run> longest = new HashMap<>();
        for (ThreadDump d : samples) {
            Map<Long, Run> next = new HashMap<>();
            for (DumpedThread t : d.threads()) {
                if (!t.running()) {
                    continue;
                }
                Run r = open.get(t.tid());
                Run now = r != null && r.carrier() == t.carrier()
                        ? new Run(r.carrier(), r.first(), d.taken(), r.samples() + 1, t)
                        : new Run(t.carrier(), d.taken(), d.taken(), 1, t);
                next.put(t.tid(), now);
                Run best = longest.get(t.tid());
                if (best == null || Duration.between(now.first(), now.last())
                        .compareTo(Duration.between(best.first(), best.last())) > 0) {
                    longest.put(t.tid(), now);
                }
            }
            open = next;
        }
        List<Report.Runaway> out = new ArrayList<>();
        for (Map.Entry<Long, Run> e : longest.entrySet()) {
            Run r = e.getValue();
            Duration held = Duration.between(r.first(), r.last());
            if (r.samples() >= 2 && held.compareTo(threshold) >= 0) {
                out.add(new Report.Runaway(e.getKey(), r.seen().name(),
                        names.getOrDefault(r.carrier(), "tid " + r.carrier()) + " (tid " + r.carrier() + ")",
                        held.toMillis(), r.samples(),
                        r.seen().stack().stream().limit(MAX_FRAMES).map(Analyzer::frame).toList()));
            }
        }
        out.sort(Comparator.comparingLong(Report.Runaway::heldMs).reversed());
        return out;
    }

    private static Report.Pinning pinning(List<Pinned> events) {
        Map<List<String>, List<Pinned>> groups = new LinkedHashMap<>();
        for (Pinned p : events) {
            String where = place(p.stack().stream().map(s -> s.replaceFirst("\\(line (\\d+)\\)$", "(:$1)")).toList())[0];
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

    private static Report.Carriers carriers(List<ThreadDump> samples, int parallelism, Map<Long, String> names) {
        Map<Long, Integer> busy = new TreeMap<>();
        String prefix = null;
        long waitingSum = 0;
        int waitingMax = 0;
        for (ThreadDump d : samples) {
            int waiting = 0;
            for (DumpedThread t : d.threads()) {
                if (t.virtual() && t.carrier() >= 0) {
                    busy.merge(t.carrier(), 1, Integer::sum);
                    String n = names.get(t.carrier());
                    if (prefix == null && n != null && n.lastIndexOf('-') > 0) {
                        prefix = n.substring(0, n.lastIndexOf('-') + 1);
                    }
                } else if (t.virtual() && "RUNNABLE".equals(t.state())) {
                    waiting++;
                }
            }
            waitingSum += waiting;
            waitingMax = Math.max(waitingMax, waiting);
        }
        if (prefix != null) { // idle carriers of the same pool, never seen carrying
            for (Map.Entry<Long, String> e : names.entrySet()) {
                if (e.getValue().startsWith(prefix)
                        && e.getValue().substring(prefix.length()).chars().allMatch(Character::isDigit)) {
                    busy.putIfAbsent(e.getKey(), 0);
                }
            }
        }
        List<Report.Carrier> carriers = busy.entrySet().stream()
                .map(e -> new Report.Carrier(e.getKey(), names.getOrDefault(e.getKey(), "?"),
                        round((double) e.getValue() / samples.size())))
                .toList();
        return new Report.Carriers(parallelism, carriers, round((double) waitingSum / samples.size()), waitingMax);
    }

    private static Report.PlatformThreads platformThreads(ThreadDump last, Report.Carriers known) {
        java.util.Set<Long> carriers = new java.util.HashSet<>();
        known.carriers().forEach(c -> carriers.add(c.tid()));
        Map<String, Map<String, Integer>> groups = new HashMap<>();
        int total = 0;
        for (DumpedThread t : last.threads()) {
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

    private static double round(double v) {
        return Math.round(v * 1000) / 1000.0;
    }
}
