package dev.weft.devtools;

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
 * A process of its own for one server (a simulator, or a service being measured: a JVM, or a Go
 * program), so that its CPU, memory, threads and file descriptors are its own. The child prints
 * {@code READY <text>} once it serves and stops when its standard input closes (or the parent dies).
 */
public final class ChildProcess implements AutoCloseable {
    private final Process process;
    private final BufferedReader output;
    private final String ready;

    private ChildProcess(Process process, BufferedReader output, String ready) {
        this.process = process;
        this.output = output;
        this.ready = ready;
    }

    /** Starts {@code main} of this classpath with {@code jvmFlags} and {@code args}; waits for its READY line. */
    public static ChildProcess startJvm(List<String> jvmFlags, Class<?> main, List<String> args) throws IOException {
        return startJvm(List.of(), jvmFlags, main, args);
    }

    /** The same, the command put after {@code prefix} (such as {@code taskset -c 1}). */
    public static ChildProcess startJvm(List<String> prefix, List<String> jvmFlags, Class<?> main, List<String> args)
            throws IOException {
        String java = ProcessHandle.current().info().command().orElse("java");
        List<String> cmd = new ArrayList<>(prefix);
        cmd.add(java);
        cmd.add("--enable-native-access=ALL-UNNAMED"); // as ./weft: the front door sets its thread's nice (ThreadNice)
        cmd.addAll(jvmFlags);
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), main.getName()));
        cmd.addAll(args);
        return start(cmd, main.getSimpleName());
    }

    /** Starts {@code command}; waits for its READY line. {@code name} is for errors. */
    public static ChildProcess start(List<String> command, String name) throws IOException {
        Process p = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        String line = r.readLine();
        if (line == null || !line.startsWith("READY ")) {
            p.destroyForcibly();
            throw new IOException(name + " did not start (it said: " + line + ")");
        }
        return new ChildProcess(p, r, line.substring(6).strip());
    }

    /** What the child printed after READY (its URL, or URLs separated by commas). */
    public String ready() {
        return ready;
    }

    /** What the child writes to its standard output after the READY line. */
    public BufferedReader output() {
        return output;
    }

    public long pid() {
        return process.pid();
    }

    /** Null while the child runs; otherwise a sentence saying that it exited and how. */
    public String exited() {
        return process.isAlive() ? null : "the process exited with code " + process.exitValue();
    }

    /** CPU time the child has used so far. */
    public Duration cpu() {
        return process.toHandle().info().totalCpuDuration().orElse(Duration.ZERO);
    }

    /** A field of /proc/PID/status in MiB (VmHWM: peak RSS) or as a count (Threads); -1 where unknown. */
    public long procStatus(String field) {
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

    /** SIGKILL (kill -9): the child gets no chance to clean up; for crash tests. Waits until it is gone. */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor();
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
