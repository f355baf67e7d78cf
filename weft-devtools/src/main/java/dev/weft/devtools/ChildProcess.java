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
        Process p = new ProcessBuilder(command).start();
        StderrTail tail = new StderrTail(p, name);
        BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        String line = r.readLine();
        if (line == null || !line.startsWith("READY ")) {
            // its standard error's last lines say why (Address already in use, a timeout, a stack trace): a test
            // report that only says "it said: null" cannot be diagnosed
            String how;
            try {
                how = p.waitFor(5, TimeUnit.SECONDS) ? "exit code " + p.exitValue() : "still running, killed";
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                how = "interrupted while waiting for it";
            }
            // the lines first: destroying a process closes its streams, and the reader would stop mid-way (a child
            // that exited has written all it will; one still running is killed, then its reader ends)
            List<String> last = p.isAlive() ? List.of() : tail.lines();
            p.destroyForcibly();
            if (last.isEmpty()) {
                last = tail.lines();
            }
            throw new IOException(name + " did not start (it said: " + line + "; " + how + "; its last lines on stderr: "
                    + last + ")");
        }
        return new ChildProcess(p, r, line.substring(6).strip());
    }

    /**
     * Copies a child's standard error to ours line by line (as {@code Redirect.INHERIT} did) and keeps its last
     * {@value #TAIL} lines for an error message.
     */
    private static final class StderrTail implements Runnable {
        static final int TAIL = 20;
        private final java.util.ArrayDeque<String> last = new java.util.ArrayDeque<>();
        private final Process process;
        private final Thread reader;

        StderrTail(Process process, String name) {
            this.process = process;
            this.reader = Thread.ofPlatform().daemon().name("stderr of " + name).unstarted(this);
            reader.start();
        }

        @Override
        public void run() {
            try (BufferedReader err = new BufferedReader(new InputStreamReader(process.getErrorStream(),
                    StandardCharsets.UTF_8))) {
                for (String l; (l = err.readLine()) != null; ) {
                    System.err.println(l);
                    synchronized (last) {
                        if (last.size() == TAIL) {
                            last.removeFirst();
                        }
                        last.addLast(l);
                    }
                }
            } catch (IOException e) {
                // the child is gone
            }
        }

        /** The lines kept, once the reader has drained what the (dead) child wrote, or after 2 s. */
        List<String> lines() {
            try {
                reader.join(2000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            synchronized (last) {
                return new ArrayList<>(last);
            }
        }
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
