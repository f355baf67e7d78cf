package dev.weft.devtools;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.Uuid;

import java.io.IOException;
import java.io.PrintStream;
import java.io.Reader;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

/**
 * The child JVM of {@link KafkaBroker}: {@code BrokerMain DIR HOST:PORT [KEY=VALUE...]} (the settings are written to
 * {@code server.properties}, over what it holds). Writes {@code DIR/server.properties}
 * the first time (single-node KRaft, broker and controller in one process, controller on a free port),
 * formats {@code DIR/data} when it is not yet, runs Apache Kafka's own {@code kafka.Kafka}, prints
 * {@code READY HOST:PORT} once the broker answers, and stops cleanly (Kafka's shutdown hook) when its
 * standard input closes.
 */
public final class BrokerMain {
    private BrokerMain() {
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]).toAbsolutePath();
        String host = args[1].substring(0, args[1].lastIndexOf(':'));
        int port = Integer.parseInt(args[1].substring(args[1].lastIndexOf(':') + 1));
        Files.createDirectories(dir);
        Path props = dir.resolve("server.properties");
        Properties p = new Properties();
        if (Files.exists(props)) {
            try (Reader r = Files.newBufferedReader(props)) {
                p.load(r);
            }
            // the listener it binds, not advertised.listeners: a caller may advertise another address (a proxy in
            // front of it, as weft lab chaos does), and a restart on the same directory and port must still start
            String want = "PLAINTEXT://" + host + ":" + port;
            String listens = java.util.Arrays.stream(p.getProperty("listeners", "").split(","))
                    .filter(l -> l.startsWith("PLAINTEXT://")).findFirst().orElse("");
            if (!listens.equals(want)) {
                System.err.println("weft kafka: " + dir + " holds a broker that listens on "
                        + listens + ", not " + want
                        + "; give that address, another --dir, or remove " + dir);
                System.exit(2);
            }
        } else {
            int controller;
            try (ServerSocket s = new ServerSocket()) {
                s.bind(new InetSocketAddress(host, 0));
                controller = s.getLocalPort();
            }
            p.putAll(Map.ofEntries(
                    Map.entry("process.roles", "broker,controller"),
                    Map.entry("node.id", "1"),
                    Map.entry("listeners", "PLAINTEXT://" + host + ":" + port + ",CONTROLLER://" + host + ":" + controller),
                    Map.entry("advertised.listeners", "PLAINTEXT://" + host + ":" + port),
                    Map.entry("controller.listener.names", "CONTROLLER"),
                    Map.entry("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"),
                    Map.entry("controller.quorum.bootstrap.servers", host + ":" + controller),
                    Map.entry("log.dirs", dir.resolve("data").toString()),
                    Map.entry("num.partitions", "3"),
                    Map.entry("auto.create.topics.enable", "false"),
                    Map.entry("offsets.topic.replication.factor", "1"),
                    Map.entry("offsets.topic.num.partitions", "5"),
                    Map.entry("transaction.state.log.replication.factor", "1"),
                    Map.entry("transaction.state.log.min.isr", "1"),
                    Map.entry("share.coordinator.state.topic.replication.factor", "1"),
                    Map.entry("share.coordinator.state.topic.min.isr", "1"),
                    Map.entry("group.initial.rebalance.delay.ms", "0"),
                    Map.entry("log.retention.hours", "168")));
            try (var w = Files.newBufferedWriter(props)) {
                p.store(w, "written by weft kafka; single-node KRaft for development and tests");
            }
        }
        if (args.length > 2) { // KEY=VALUE settings a test asked for (KafkaBroker.start's settings)
            for (int i = 2; i < args.length; i++) {
                int eq = args[i].indexOf('=');
                p.setProperty(args[i].substring(0, eq), args[i].substring(eq + 1));
            }
            try (var w = Files.newBufferedWriter(props)) {
                p.store(w, "written by weft kafka; single-node KRaft for development and tests");
            }
        }
        if (!Files.exists(dir.resolve("data").resolve("meta.properties"))) {
            java.io.ByteArrayOutputStream said = new java.io.ByteArrayOutputStream();
            int rc = kafka.tools.StorageTool.execute(new String[]{"format", "-t", Uuid.randomUuid().toString(), "-c",
                    props.toString(), "--standalone"}, new PrintStream(said, true, StandardCharsets.UTF_8));
            if (rc != 0) {
                System.err.print(said.toString(StandardCharsets.UTF_8));
                System.err.println("weft kafka: formatting " + dir.resolve("data") + " failed (exit " + rc + ")");
                System.exit(1);
            }
        }
        Thread.ofPlatform().daemon().name("weft-kafka-stdin").start(() -> {
            try {
                while (System.in.read() >= 0) {
                    // the parent holds our standard input open while it wants us to run
                }
            } catch (IOException e) {
                // parent gone
            }
            System.exit(0); // Kafka's shutdown hook stops the broker cleanly
        });
        String bootstrap = host + ":" + port;
        Thread.ofPlatform().daemon().name("weft-kafka-ready").start(() -> {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (System.nanoTime() < deadline) {
                try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                        AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 2000,
                        AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 3000))) {
                    admin.describeCluster().nodes().get(3, TimeUnit.SECONDS);
                    System.out.println("READY " + bootstrap);
                    System.out.flush();
                    return;
                } catch (Exception e) {
                    try {
                        Thread.sleep(200);
                    } catch (InterruptedException ie) {
                        return;
                    }
                }
            }
            System.err.println("weft kafka: the broker did not answer on " + bootstrap + " within 120 s");
            System.exit(1);
        });
        kafka.Kafka.main(new String[]{props.toString()});
    }
}
