package dev.weft.lab;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A JVM of its own for one measured service, so that its CPU, memory and threads are its own. The child
 * prints {@code READY <url>} once it serves and stops when its standard input closes.
 */
final class ChildJvm implements AutoCloseable {
    private final Process process;
    private final String url;

    private ChildJvm(Process process, String url) {
        this.process = process;
        this.url = url;
    }

    static ChildJvm start(List<String> jvmFlags, Class<?> main, List<String> args) throws IOException {
        String java = ProcessHandle.current().info().command().orElse("java");
        List<String> cmd = new ArrayList<>();
        cmd.add(java);
        cmd.addAll(jvmFlags);
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), main.getName()));
        cmd.addAll(args);
        Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        String line = r.readLine();
        if (line == null || !line.startsWith("READY ")) {
            p.destroyForcibly();
            throw new IOException(main.getSimpleName() + " did not start (it said: " + line + ")");
        }
        return new ChildJvm(p, line.substring(6).strip());
    }

    String url() {
        return url;
    }

    long pid() {
        return process.pid();
    }

    Duration cpu() {
        return process.toHandle().info().totalCpuDuration().orElse(Duration.ZERO);
    }

    /** A field of /proc/PID/status in MiB (VmHWM: peak RSS) or as a count (Threads); -1 where unknown. */
    long procStatus(String field) {
        try {
            for (String l : Files.readAllLines(Path.of("/proc/" + process.pid() + "/status"))) {
                if (l.startsWith(field + ":")) {
                    String v = l.substring(field.length() + 1).strip().split("\\s+")[0];
                    long n = Long.parseLong(v);
                    return l.endsWith("kB") ? n / 1024 : n;
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux
        }
        return -1;
    }

    @Override
    public void close() {
        try {
            process.getOutputStream().close();
            if (!process.waitFor(15, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (IOException | InterruptedException e) {
            process.destroyForcibly();
        }
    }
}
