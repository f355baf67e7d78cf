package dev.weft.agent;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A child JVM started with {@code -javaagent:target/weft-agent.jar} (the packaged jar: these tests run in the
 * integration-test phase, after package). Its output lines are read as they come.
 */
final class ChildJvm implements AutoCloseable {
    static final Duration WAIT = Duration.ofSeconds(60);
    final Process process;
    private final LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final List<String> all = java.util.Collections.synchronizedList(new ArrayList<>());
    private final StringBuffer err = new StringBuffer();
    private final Thread outPump;
    private final Thread errPump;

    private ChildJvm(Process process) {
        this.process = process;
        outPump = Thread.ofVirtual().start(() -> pump(process.getInputStream(), true));
        errPump = Thread.ofVirtual().start(() -> pump(process.getErrorStream(), false));
    }

    static Path agentJar() {
        Path jar = Path.of(System.getProperty("weft.agent.jar", "target/weft-agent.jar")).toAbsolutePath();
        if (!Files.isRegularFile(jar)) {
            throw new IllegalStateException(jar + " is missing: these tests run after package "
                    + "(./mvnw -pl weft-agent -am verify -Dit.test=...)");
        }
        return jar;
    }

    static String testClasses() {
        return Path.of(System.getProperty("weft.agent.testClasses", "target/test-classes")).toAbsolutePath().toString();
    }

    /** The OpenTelemetry Java agent's jar, from the test class path (a test dependency). */
    static Path otelAgentJar() {
        for (String e : System.getProperty("java.class.path").split(java.io.File.pathSeparator)) {
            if (Path.of(e).getFileName().toString().startsWith("opentelemetry-javaagent")) {
                return Path.of(e);
            }
        }
        throw new IllegalStateException("opentelemetry-javaagent is not on the test class path");
    }

    /** The test class path without the OpenTelemetry agent's jar (an agent, not a library of the apps). */
    static String classpath() {
        List<String> kept = new ArrayList<>();
        for (String e : System.getProperty("java.class.path").split(java.io.File.pathSeparator)) {
            if (!Path.of(e).getFileName().toString().startsWith("opentelemetry-javaagent")) {
                kept.add(e);
            }
        }
        return String.join(java.io.File.pathSeparator, kept);
    }

    /** The JDK running the tests (25). */
    static String java() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    /** {@code java [agent] jvmFlags -cp classpath main args}; agentOptions null: no agent. */
    static ChildJvm start(String java, String agentOptions, List<String> jvmFlags, String classpath, String main,
                          List<String> args) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(java);
        if (agentOptions != null) {
            cmd.add("-javaagent:" + agentJar() + (agentOptions.isEmpty() ? "" : "=" + agentOptions));
        }
        cmd.addAll(jvmFlags);
        cmd.addAll(List.of("-cp", classpath, main));
        cmd.addAll(args);
        return new ChildJvm(new ProcessBuilder(cmd).start());
    }

    static ChildJvm app(String agentOptions, Class<?> main, String... args) throws IOException {
        return start(java(), agentOptions, List.of(), testClasses(), main.getName(), List.of(args));
    }

    private void pump(java.io.InputStream in, boolean out) {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            for (String line; (line = r.readLine()) != null; ) {
                if (out) {
                    all.add(line);
                    lines.add(line);
                } else {
                    err.append(line).append('\n');
                }
            }
        } catch (IOException ignored) {
            // the child is gone
        }
    }

    /** Waits for a stdout line starting with {@code prefix}; fails with everything the child said. */
    String awaitLine(String prefix) throws InterruptedException {
        long end = System.nanoTime() + WAIT.toNanos();
        while (System.nanoTime() < end) {
            String line = lines.poll(100, TimeUnit.MILLISECONDS);
            if (line != null && line.startsWith(prefix)) {
                return line;
            }
            if (line == null && !process.isAlive() && lines.isEmpty()) {
                break;
            }
        }
        throw new AssertionError("no line starting with '" + prefix + "'; stdout " + all + "; stderr:\n" + err);
    }

    void send(String line) throws IOException {
        OutputStream in = process.getOutputStream();
        in.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        in.flush();
    }

    /** Waits for the exit; its code. */
    int exit() throws InterruptedException {
        if (!process.waitFor(WAIT.toSeconds(), TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new AssertionError("the child did not exit in " + WAIT + "; stdout " + all + "; stderr:\n" + err);
        }
        return process.exitValue();
    }

    /** Runs to the end (exit 0 expected) and returns the {@code key=value} lines of stdout. */
    Map<String, String> facts() throws InterruptedException {
        int code = exit();
        drained();
        if (code != 0) {
            throw new AssertionError("exit " + code + "; stdout " + all + "; stderr:\n" + err);
        }
        Map<String, String> m = new LinkedHashMap<>();
        synchronized (all) {
            for (String l : all) {
                int eq = l.indexOf('=');
                if (eq > 0) {
                    m.put(l.substring(0, eq), l.substring(eq + 1));
                }
            }
        }
        return m;
    }

    /** After the exit: waits until both streams are read to their end. */
    void drained() throws InterruptedException {
        if (!outPump.join(WAIT) || !errPump.join(WAIT)) {
            throw new AssertionError("the child's output did not end");
        }
    }

    String stderr() {
        return err.toString();
    }

    List<String> stdout() {
        synchronized (all) {
            return List.copyOf(all);
        }
    }

    @Override
    public void close() {
        process.destroyForcibly();
    }
}
