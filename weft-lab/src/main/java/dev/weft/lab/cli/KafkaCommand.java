package dev.weft.lab.cli;

import dev.weft.cli.UserException;
import dev.weft.core.HostPort;
import dev.weft.devtools.KafkaBroker;
import dev.weft.dispatch.DispatchService;
import dev.weft.dispatch.engine.KafkaAdmin;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

@Command(name = "kafka",
        mixinStandardHelpOptions = true,
        subcommands = {KafkaSendCommand.class, CommandLine.HelpCommand.class},
        description = {
                "Run a single-node Apache Kafka broker (KRaft; Kafka 4.x from Maven Central, in the weft jar) in a",
                "child JVM for development, tests and demos. Its data stays in --dir, so topics and committed",
                "offsets survive a restart. Prints the bootstrap address; Ctrl-C / SIGTERM stops it cleanly.",
                "The broker does not create topics on first use: create them with --topic.",
                "Broker log: warnings and errors on stderr.",
                ""})
public final class KafkaCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Option(names = "--dir", paramLabel = "DIR", description = "Data directory (default: ${DEFAULT-VALUE}).")
    Path dir = DispatchService.DEV_BROKER_DIR;

    @Option(names = "--listen", paramLabel = "HOST:PORT", description = "Where clients connect (default: 127.0.0.1:9092).")
    String listen = "127.0.0.1:9092";

    @Option(names = "--topic", paramLabel = "NAME[:PARTITIONS]",
            description = "Create this topic when missing (default 3 partitions); repeatable.")
    List<String> topics = List.of();

    @Override
    public void run() {
        PrintWriter out = spec.commandLine().getOut();
        InetSocketAddress at;
        Map<String, Integer> create = new LinkedHashMap<>();
        try {
            at = HostPort.parse(listen);
            for (String t : topics) {
                int colon = t.lastIndexOf(':');
                String name = colon < 0 ? t : t.substring(0, colon);
                int parts = colon < 0 ? 3 : Integer.parseInt(t.substring(colon + 1));
                if (!name.matches("[A-Za-z0-9._-]{1,200}") || parts < 1 || parts > 10_000) {
                    throw new IllegalArgumentException("--topic expects NAME[:PARTITIONS] (name of A-Z a-z 0-9 . _ -, "
                            + "1..10000 partitions), got '" + t + "'");
                }
                create.put(name, parts);
            }
        } catch (IllegalArgumentException e) {
            throw new UserException(e.getMessage(), e, 2);
        }
        if (DispatchService.listening(at)) {
            throw new UserException("something already listens on " + listen + " (a broker from an earlier `weft kafka`?);"
                    + " stop it or give another --listen", null, 1);
        }
        out.println("weft kafka: starting Kafka "
                + org.apache.kafka.common.utils.AppInfoParser.getVersion() + " on " + listen + ", data in " + dir.toAbsolutePath()
                + " (the first start formats it) ...");
        out.flush();
        KafkaBroker broker;
        try {
            broker = KafkaBroker.start(dir, at);
            if (!create.isEmpty()) {
                KafkaAdmin.createTopics(broker.bootstrap(), create);
            }
        } catch (IOException e) {
            throw new UserException("the broker did not start: " + e.getMessage(), e);
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            out.println("weft kafka: stopping ...");
            out.flush();
            broker.close();
            out.println("weft kafka: stopped");
            out.flush();
            stopped.countDown();
        }, "weft-kafka-shutdown"));
        out.println("weft kafka: ready, bootstrap " + broker.bootstrap() + (create.isEmpty() ? ""
                : "; topics " + create) + "; Ctrl-C stops");
        out.flush();
        try {
            stopped.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
