package dev.weft.cli;

import dev.weft.core.Durations;
import dev.weft.lab.Machine;
import dev.weft.lab.ServersLab;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

@Command(name = "servers",
        mixinStandardHelpOptions = true,
        description = {
                "Inbound HTTP/1.1 servers on virtual threads side by side on one trivial route (GET /lab, a small JSON",
                "body): weft (weft-core's HttpServer, what the gateway uses), jetty (Jetty 12, handler on virtual",
                "threads), helidon (Helidon 4 SE WebServer). Each in a JVM of its own, warmed, then loaded by the",
                "same closed-loop client at each connection count.", ""})
public final class LabServersCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Option(names = "--servers", split = ",", paramLabel = "NAME[,NAME...]", description = "Default: weft,jetty,helidon.")
    List<String> servers = new ArrayList<>(ServersLab.SERVERS);

    @Option(names = "--concurrency", split = ",", paramLabel = "N[,N...]", description = "Connections. Default: 200,2000.")
    List<Integer> concurrency = new ArrayList<>(List.of(200, 2000));

    @Option(names = "--duration", paramLabel = "D", description = "Measured time per run. Default: ${DEFAULT-VALUE}.")
    String duration = "8s";

    @Option(names = "--warmup", paramLabel = "D", description = "Unmeasured time before each run. Default: ${DEFAULT-VALUE}.")
    String warmup = "3s";

    @Override
    public void run() {
        PrintWriter out = spec.commandLine().getOut();
        Duration d;
        Duration w;
        try {
            d = Durations.parse(duration);
            w = Durations.parse(warmup);
        } catch (IllegalArgumentException e) {
            throw new UserException(e.getMessage(), e, 2);
        }
        for (String s : servers) {
            if (!ServersLab.SERVERS.contains(s)) {
                throw new UserException("--servers: unknown server '" + s + "'; known: " + String.join(", ", ServersLab.SERVERS), null, 2);
            }
        }
        for (int c : concurrency) {
            if (c < 1 || c > 15_000) {
                throw new UserException("--concurrency values must be 1..15000", null, 2);
            }
        }
        out.println("command: weft lab servers --servers " + String.join(",", servers) + " --concurrency "
                + String.join(",", concurrency.stream().map(String::valueOf).toList()) + " --duration " + duration
                + " --warmup " + warmup);
        out.println("machine: " + Machine.describe());
        out.println("started: " + Instant.now());
        out.println();
        out.flush();
        try {
            ServersLab.run(new ServersLab.Options(servers, concurrency, w, d), out, spec.commandLine().getErr());
        } catch (Exception e) {
            throw new UserException("lab servers failed: " + e.getMessage(), e);
        }
    }
}
