package dev.weft.lab;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

/**
 * The measured service on CPUs of its own, everything else of a lab run (the load generator in this process,
 * the backends, a receiver) on the others, with {@code taskset} (util-linux). On one small machine the load and
 * the backends otherwise take their CPU from the service, and a result says as much about them as about the
 * service. The service's JVM sees only its CPUs (one carrier thread per CPU).
 */
public final class CpuPin {
    private final String service;
    private final String others;

    private CpuPin(String service, String others) {
        this.service = service;
        this.others = others;
    }

    /**
     * @param list CPU numbers and ranges ({@code 1}, {@code 2-3}, {@code 1,3}) of this machine's
     *             {@code online} CPUs (numbered from 0), leaving at least one for the rest
     */
    public static CpuPin of(String list, int online) {
        TreeSet<Integer> cpus = new TreeSet<>();
        for (String part : list.split(",")) {
            String p = part.strip();
            try {
                int dash = p.indexOf('-');
                int from = Integer.parseInt(dash < 0 ? p : p.substring(0, dash));
                int to = dash < 0 ? from : Integer.parseInt(p.substring(dash + 1));
                if (from < 0 || to < from) {
                    throw new NumberFormatException();
                }
                for (int c = from; c <= to; c++) {
                    cpus.add(c);
                }
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("--service-cpus: '" + p + "' is not a CPU number or range (such as 1 or 2-3)");
            }
        }
        if (cpus.isEmpty() || cpus.last() >= online) {
            throw new IllegalArgumentException("--service-cpus " + list + ": this machine has CPUs 0-" + (online - 1));
        }
        List<String> rest = new ArrayList<>();
        for (int c = 0; c < online; c++) {
            if (!cpus.contains(c)) {
                rest.add(Integer.toString(c));
            }
        }
        if (rest.isEmpty()) {
            throw new IllegalArgumentException("--service-cpus " + list + " leaves no CPU for the load and the backends");
        }
        return new CpuPin(String.join(",", cpus.stream().map(String::valueOf).toList()), String.join(",", rest));
    }

    /** The CPUs of the machine, whatever this process's affinity. */
    public static int online() {
        try {
            int n = 0;
            for (String l : java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc/cpuinfo"))) {
                if (l.startsWith("processor")) {
                    n++;
                }
            }
            if (n > 0) {
                return n;
            }
        } catch (IOException | RuntimeException ignored) {
            // not Linux
        }
        return Runtime.getRuntime().availableProcessors();
    }

    /** Put in front of the service's command. */
    public List<String> prefix() {
        return List.of("taskset", "-c", service);
    }

    /** Moves every thread of this process (and so the children it starts later) to the other CPUs. */
    public void pinThisProcess() throws IOException, InterruptedException {
        Process p;
        try {
            p = new ProcessBuilder("taskset", "-a", "-pc", others, Long.toString(ProcessHandle.current().pid()))
                    .redirectErrorStream(true).start();
        } catch (IOException e) {
            throw new IOException("--service-cpus needs taskset (util-linux: apt install util-linux): " + e.getMessage(), e);
        }
        String said = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        if (!p.waitFor(10, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException("taskset could not pin this process to CPUs " + others + ": " + said);
        }
    }

    public String describe() {
        return "the service on CPU " + service + "; the load generator and the backends on CPU " + others;
    }
}
