package dev.weft.doctor;

import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/** The report for a terminal. */
public final class ReportText {
    private ReportText() {
    }

    public static String render(Report r) {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "weft doctor: %s, %.1f s from %s; %,d execution samples (every %d ms)%n%n",
                r.target(), r.windowMs() / 1000.0, r.from(), r.executionSamples(), r.samplePeriodMs()));

        Report.VirtualThreads v = r.virtualThreads();
        if (v == null) {
            sb.append("virtual threads: no census taken\n");
        } else {
            sb.append(String.format(Locale.ROOT, "virtual threads at the end: %,d%s%n", v.total(), v.byState().isEmpty() ? ""
                    : " (" + v.byState().entrySet().stream().map(e -> e.getKey() + " "
                    + String.format(Locale.ROOT, "%,d", e.getValue())).collect(Collectors.joining(", ")) + ")"));
            for (Report.StackGroup g : v.stacks()) {
                sb.append(String.format(Locale.ROOT, "  %,7d  %-13s  %s%s%n", g.count(), g.state(), g.where(),
                        g.via().isEmpty() ? "" : "  via " + g.via()));
            }
        }

        sb.append(String.format(Locale.ROOT, "%nrunaways (virtual threads running without a break for %d ms or more): ",
                r.runawayMs()));
        if (r.runaways().isEmpty()) {
            sb.append("none\n");
        } else {
            sb.append(r.runaways().size()).append('\n');
            for (Report.Runaway w : r.runaways()) {
                sb.append(String.format(Locale.ROOT, "  RUNAWAY \"%s\" (tid %d) held %s for %,d ms (%d samples)%n",
                        w.name(), w.tid(), w.carrier().isEmpty() ? "a carrier" : "carrier " + w.carrier(), w.heldMs(),
                        w.samples()));
                for (String f : w.stack()) {
                    sb.append("      at ").append(f).append('\n');
                }
            }
        }

        Report.Pinning p = r.pinning();
        sb.append(String.format(Locale.ROOT, "%npinning (jdk.VirtualThreadPinned, 20 ms or longer): %s%n",
                p.events() == 0 ? "none" : p.events() + " events"));
        for (Report.PinnedGroup g : p.groups()) {
            sb.append(String.format(Locale.ROOT, "  %d x, %,d ms in all, longest %,d ms: %s%s in %s%n", g.count(),
                    g.totalMs(), g.maxMs(), g.reason().isEmpty() ? "pinned" : g.reason(),
                    g.blockingOperation().isEmpty() ? "" : ", blocked in " + g.blockingOperation(), g.where()));
            for (String f : g.stack()) {
                sb.append("      at ").append(f).append('\n');
            }
        }

        Report.Carriers c = r.carriers();
        sb.append(String.format(Locale.ROOT, "%ncarriers: parallelism %d; virtual threads seen running Java code per sample "
                + "period: %.2f on average (time in native code, socket writes for one, is not seen)%n",
                c.parallelism(), c.busyMean()));
        if (c.carriers() != null) {
            sb.append(String.format(Locale.ROOT, "  at the end: %d virtual threads runnable but waiting for a carrier%n",
                    c.runnableWaiting()));
            for (Report.Carrier k : c.carriers()) {
                sb.append(String.format(Locale.ROOT, "  %-32s %s%n", k.name() + " (tid " + k.tid() + ")",
                        k.carrying().isEmpty() ? "idle" : "carrying \"" + k.carrying() + "\""));
            }
        }

        Report.PlatformThreads pt = r.platformThreads();
        if (pt != null) {
            sb.append(String.format(Locale.ROOT, "%nplatform threads besides the carriers: %d%n", pt.total()));
            for (Report.NameGroup g : pt.groups()) {
                sb.append(String.format(Locale.ROOT, "  %5d  %-40s %s%n", g.count(), g.name(), states(g.byState())));
            }
        }
        if (!r.agentPools().isEmpty()) {
            sb.append(String.format(Locale.ROOT, "%nweft agent's pools (virtual threads; dev.weft.agent MBeans): %d%n",
                    r.agentPools().size()));
            sb.append(String.format(Locale.ROOT, "  %-40s %7s %7s %9s %7s %11s %6s %9s%n", "pool", "active", "queued",
                    "rejected", "pinned", "completed", "size", "max"));
            for (Report.AgentPool a : r.agentPools()) {
                sb.append(String.format(Locale.ROOT, "  %-40s %,7d %,7d %,9d %7s %,11d %,6d %,9d%s  %s%n", a.name(), a.active(),
                        a.queued(), a.rejected(), a.pinned() < 0 ? "-" : String.format(Locale.ROOT, "%,d", a.pinned()),
                        a.completed(), a.poolSize(), a.maximumPoolSize(),
                        a.maximumPoolSize() == a.originalMaximumPoolSize() ? "" : " (was " + a.originalMaximumPoolSize() + ")",
                        a.executorClass()));
            }
        }
        for (String n : r.notes()) {
            sb.append("\nnote: ").append(n).append('\n');
        }
        return sb.toString();
    }

    private static String states(Map<String, Integer> byState) {
        return byState.entrySet().stream().map(e -> e.getKey() + " " + e.getValue()).collect(Collectors.joining(", "));
    }
}
