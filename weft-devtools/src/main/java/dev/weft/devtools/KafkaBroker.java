package dev.weft.devtools;

import dev.weft.core.HostPort;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * A single-node Apache Kafka broker (KRaft; the broker artifacts from Maven Central) in a child JVM,
 * for development, tests and the labs (weft-devtools: in weft-lab.jar and on the tests' class path, not in the
 * product jar). Its data stays under {@code dir}, so a restart finds its topics and committed offsets again.
 * {@link #close()} stops it cleanly.
 */
public final class KafkaBroker implements AutoCloseable {
    private final ChildProcess process;
    private final String bootstrap;
    private final Path dir;

    private KafkaBroker(ChildProcess process, Path dir) {
        this.process = process;
        this.bootstrap = process.ready();
        this.dir = dir;
    }

    /**
     * Starts a broker listening on {@code listen} with its data under {@code dir}; returns once it answers
     * (the first start formats the directory: allow ~10-20 s).
     */
    public static KafkaBroker start(Path dir, InetSocketAddress listen) throws IOException {
        return start(dir, listen, Map.of());
    }

    /**
     * As {@link #start(Path, InetSocketAddress)}, with {@code settings} added to (or replacing) the broker's
     * {@code server.properties}, for a test that needs the broker so (such as {@code alter.config.policy.class.name}
     * naming a policy on the tests' class path, which the child JVM shares).
     */
    public static KafkaBroker start(Path dir, InetSocketAddress listen, Map<String, String> settings) throws IOException {
        if (listen.getPort() != 0 || !empty(dir)) {
            return startOnce(dir, listen.getPort() != 0 ? listen
                    : new InetSocketAddress(listen.getAddress(), freePort(listen)), settings);
        }
        // A port found free can be taken (by any connection's ephemeral port) before the broker binds it, and so can
        // the controller's port BrokerMain picks: a directory that was empty (or absent) is ours to clear, so try
        // again on other ports. One that held anything is never cleared.
        IOException first = null;
        for (int attempt = 1; attempt <= 3; attempt++) {
            try {
                return startOnce(dir, new InetSocketAddress(listen.getAddress(), freePort(listen)), settings);
            } catch (IOException e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
                clear(dir);
            }
        }
        throw first;
    }

    /** Whether {@code dir} is absent or holds nothing. */
    private static boolean empty(Path dir) throws IOException {
        if (!java.nio.file.Files.exists(dir)) {
            return true;
        }
        try (var entries = java.nio.file.Files.list(dir)) {
            return entries.findAny().isEmpty();
        }
    }

    private static void clear(Path dir) {
        try (var paths = java.nio.file.Files.walk(dir)) {
            paths.sorted(java.util.Comparator.reverseOrder()).filter(p -> !p.equals(dir)).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // the next attempt says what is wrong
        }
    }

    private static KafkaBroker startOnce(Path dir, InetSocketAddress listen, Map<String, String> settings)
            throws IOException {
        List<String> flags = List.of("-Xms256m", "-Xmx1g", "-XX:+UseG1GC", "--sun-misc-unsafe-memory-access=allow",
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-Dlog4j2.level=WARN",
                "-Dlogback.configurationFile=dev/weft/devtools/logback-broker.xml", // where Logback is the binding
                // the readiness probe's "connection refused" while the broker starts, and its first-start notice
                "-Dorg.slf4j.simpleLogger.log.org.apache.kafka.clients.NetworkClient=error",
                "-Dorg.slf4j.simpleLogger.log.org.apache.kafka.controller.QuorumController=error");
        List<String> args = new java.util.ArrayList<>(List.of(dir.toAbsolutePath().toString(), HostPort.format(listen)));
        new java.util.TreeMap<>(settings).forEach((k, v) -> args.add(k + "=" + v));
        ChildProcess p = ChildProcess.startJvm(flags, BrokerMain.class, args);
        return new KafkaBroker(p, dir);
    }

    private static int freePort(InetSocketAddress on) throws IOException {
        try (java.net.ServerSocket s = new java.net.ServerSocket()) {
            s.bind(new InetSocketAddress(on.getAddress(), 0));
            return s.getLocalPort();
        }
    }

    /** {@code host:port} for clients. */
    public String bootstrap() {
        return bootstrap;
    }

    /** Creates {@code topic} with {@code partitions} (replication 1); it must not exist yet. */
    public void createTopic(String topic, int partitions) throws IOException {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) Duration.ofSeconds(30).toMillis()))) { // >= request.timeout.ms
            admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get(30, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw new IOException("creating topic " + topic + " on " + bootstrap + ": " + e.getCause().getMessage(),
                    e.getCause());
        } catch (InterruptedException | java.util.concurrent.TimeoutException e) {
            throw new IOException("creating topic " + topic + " on " + bootstrap + ": no answer in 30 s", e);
        }
    }

    /** kill -9 of the broker (no shutdown hook, no flush): for crash tests. Waits until it is gone. */
    public void kill() throws InterruptedException {
        process.kill();
    }

    /**
     * A new broker on this one's directory and address (after {@link #kill()} or {@link #close()}): its topics, records
     * and committed offsets, and the settings it was started with (kept in {@code server.properties}). Kafka recovers
     * its logs after a kill, so this can take longer than a clean start.
     */
    public KafkaBroker restart() throws IOException {
        return startOnce(dir, HostPort.parse(bootstrap), Map.of());
    }

    /** Stops the broker cleanly (closes its standard input: Kafka's shutdown hook runs); kills it after 15 s. */
    @Override
    public void close() {
        process.close();
    }
}
