package dev.weft.core;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

/**
 * Whether this process has its CPU cgroup to itself (Linux). The kernel shares a CPU between cgroups by their weights
 * and, within one, between its threads by their nice values; so a process alone in its cgroup (a container whose
 * entry point is the JVM, a systemd service) may lower some of its threads without giving CPU to any other process,
 * while a process that shares its cgroup (every process of a host without per-service cgroups, or a shell session)
 * would give it to the others. Read from {@code /proc/self/cgroup} and the cgroup's {@code cgroup.procs}: cgroup v1's
 * {@code cpu} hierarchy where there is one, else cgroup v2, where the cgroup must have the {@code cpu} controller
 * ({@code cpu.weight}) to be a group of its own.
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

    /** As {@link #ofThisProcess}, reading {@code proc/self/cgroup} and {@code sys/fs/cgroup} under {@code root}. */
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
                    return count(mount.resolve(relative(f[2])), f[2], pid);
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
                    return count(dir, path, pid);
                }
            }
            return null;
        } catch (Exception e) {
            return null;
        }
    }

    private static Sharing count(Path dir, String path, long pid) throws java.io.IOException {
        long others = Files.readAllLines(dir.resolve("cgroup.procs")).stream().map(String::strip)
                .filter(s -> !s.isEmpty() && !s.equals(Long.toString(pid))).count();
        return new Sharing(path, others == 0, others == 0 ? "alone" : "with " + others + " other process"
                + (others == 1 ? "" : "es"));
    }

    private static String relative(String path) {
        String p = path.strip();
        while (p.startsWith("/")) {
            p = p.substring(1);
        }
        return p;
    }
}
