package dev.weft.os;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Whether this process has its CPU cgroup to itself (Linux). The kernel shares a CPU between cgroups by their weights
 * and, within one, between its threads by their nice values; so a process alone in its cgroup (a container whose
 * entry point is the JVM, a systemd service) may lower some of its threads without giving CPU to any other process,
 * while a process that shares its cgroup (every process of a host without per-service cgroups, or a shell session)
 * would give it to the others. Read from {@code /proc/self/cgroup} and the cgroup's {@code cgroup.procs}: cgroup v1's
 * {@code cpu} hierarchy where there is one, else cgroup v2, where the cgroup must have the {@code cpu} controller
 * ({@code cpu.weight}) to be a group of its own. This process's own ancestors ({@code /proc/<pid>/stat}'s parent, up to
 * the top) do not count as sharing: a container's init ({@code docker run --init}'s tini, dumb-init) or a shell that
 * started the JVM and waits for it are in the same cgroup but do not compete for its CPU.
 */
public final class CpuCgroup {
    /**
     * @param cgroup its path, as {@code /proc/self/cgroup} names it
     * @param alone  whether no other process is in it (and, on cgroup v2, it has the cpu controller)
     * @param detail what was found, for a log line (such as "with 143 other processes")
     */
    public record Sharing(String cgroup, boolean alone, String detail) {
    }

    private CpuCgroup() {
    }

    /** This process's CPU cgroup, or null where it cannot be told (not Linux, no cgroup files). */
    public static Sharing ofThisProcess() {
        return of(Path.of("/"), ProcessHandle.current().pid());
    }

    /**
     * As {@link #ofThisProcess}, reading {@code proc/self/cgroup}, {@code proc/<pid>/stat} and {@code sys/fs/cgroup}
     * under {@code root}.
     */
    static Sharing of(Path root, long pid) {
        try {
            List<String> lines = Files.readAllLines(root.resolve("proc/self/cgroup"));
            for (String l : lines) { // cgroup v1: the hierarchy of the cpu controller ("3:cpu,cpuacct:/path")
                String[] f = l.split(":", 3);
                if (f.length == 3 && Arrays.asList(f[1].split(",")).contains("cpu")) {
                    Path mount = root.resolve("sys/fs/cgroup").resolve(f[1]);
                    if (!Files.isDirectory(mount)) {
                        mount = root.resolve("sys/fs/cgroup/cpu");
                    }
                    return count(root, mount.resolve(relative(f[2])), f[2], pid);
                }
            }
            for (String l : lines) { // cgroup v2 ("0::/path")
                if (l.startsWith("0::")) {
                    String path = l.substring(3);
                    Path dir = root.resolve("sys/fs/cgroup").resolve(relative(path));
                    if (!Files.exists(dir.resolve("cpu.weight"))) {
                        return new Sharing(path, false, "without the cpu controller, so it shares the CPU of an "
                                + "enclosing cgroup with its processes");
                    }
                    return count(root, dir, path, pid);
                }
            }
            return null;
        } catch (Exception e) {
            return null;
        }
    }

    private static Sharing count(Path root, Path dir, String path, long pid) throws java.io.IOException {
        Set<Long> procs = new HashSet<>();
        for (String line : Files.readAllLines(dir.resolve("cgroup.procs"))) {
            if (!line.isBlank()) {
                procs.add(Long.parseLong(line.strip()));
            }
        }
        procs.remove(pid);
        List<String> waiting = new ArrayList<>(); // nearest first
        for (Map.Entry<Long, String> a : ancestors(root, pid).entrySet()) {
            if (procs.remove(a.getKey())) {
                waiting.add(a.getValue() + " (" + a.getKey() + ")");
            }
        }
        int others = procs.size();
        String beside = waiting.isEmpty() ? ""
                : " beside its parent" + (waiting.size() == 1 ? " " : "s ")
                + String.join(", ", waiting.subList(0, Math.min(3, waiting.size())))
                + (waiting.size() > 3 ? " and " + (waiting.size() - 3) + " more" : "");
        return new Sharing(path, others == 0, others == 0 ? "alone" + beside
                : "with " + others + " other process" + (others == 1 ? "" : "es") + beside);
    }

    /**
     * This process's ancestors, nearest first: pid to command name ("process" where its {@code stat} cannot be read or
     * names none), each {@code stat} read once, up to the top (at most 64).
     */
    private static Map<Long, String> ancestors(Path root, long pid) {
        Map<Long, String> out = new LinkedHashMap<>();
        long at = pid;
        while (true) {
            String stat;
            try {
                stat = Files.readString(root.resolve("proc/" + at + "/stat"));
            } catch (java.io.IOException e) {
                break;
            }
            if (at != pid) {
                String name = ProcStat.name(stat);
                out.put(at, name != null ? name : "process");
            }
            long parent;
            try {
                parent = Long.parseLong(ProcStat.fields(stat)[1]);
            } catch (RuntimeException e) { // no name, fewer fields, or not a number
                break;
            }
            if (parent <= 0 || out.containsKey(parent) || parent == pid || out.size() == 64) {
                break;
            }
            out.put(parent, "process"); // named when its stat is read, next round
            at = parent;
        }
        return out;
    }

    private static String relative(String path) {
        String p = path.strip();
        while (p.startsWith("/")) {
            p = p.substring(1);
        }
        return p;
    }
}
