package dev.weft.sim;

import dev.weft.core.HostPort;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A weft-sim server in a JVM of its own, so that its CPU and memory are not the measured client's.
 * The child prints {@code READY <url>} once it listens and stops when its standard input closes.
 */
public final class SimProcess implements AutoCloseable {
    private final Process process;
    private final List<String> urls;

    private SimProcess(Process process, List<String> urls) {
        this.process = process;
        this.urls = urls;
    }

    /** Starts a child JVM with weft-sim listening on {@code addresses} (port 0 picks a free one). */
    public static SimProcess start(List<InetSocketAddress> addresses) throws IOException {
        String java = ProcessHandle.current().info().command().orElse("java");
        List<String> cmd = new ArrayList<>(List.of(java, "-XX:+UseParallelGC", "-Xss256k", "-cp",
                System.getProperty("java.class.path"), SimProcess.class.getName()));
        for (InetSocketAddress a : addresses) {
            cmd.add(HostPort.format(a));
        }
        Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        String line = r.readLine();
        if (line == null || !line.startsWith("READY ")) {
            p.destroyForcibly();
            throw new IOException("the backend process did not start (it said: " + line + ")");
        }
        return new SimProcess(p, List.of(line.substring(6).strip().split(",")));
    }

    /** {@code http://host:port} of the first address. */
    public String url() {
        return urls.getFirst();
    }

    /** {@code http://host:port} of every address, in the order asked. */
    public List<String> urls() {
        return urls;
    }

    public long pid() {
        return process.pid();
    }

    @Override
    public void close() {
        try {
            process.getOutputStream().close();
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (IOException | InterruptedException e) {
            process.destroyForcibly();
        }
    }

    /** The child's entry point: {@code SimProcess HOST:PORT...}. */
    public static void main(String[] args) throws Exception {
        List<InetSocketAddress> addresses = new ArrayList<>();
        for (String a : args) {
            addresses.add(HostPort.parse(a));
        }
        try (SimServer sim = SimServer.start(SimConfig.local().withListen(addresses))) {
            System.out.println("READY " + String.join(",", sim.addresses().stream()
                    .map(a -> "http://" + HostPort.format(a)).toList()));
            System.out.flush();
            while (System.in.read() >= 0) {
                // run until the parent closes our standard input (or dies)
            }
        }
    }
}
