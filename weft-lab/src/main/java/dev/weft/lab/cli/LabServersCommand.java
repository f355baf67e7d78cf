package dev.weft.lab.cli;

import dev.weft.cli.UserException;
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
                "body): weft (weft-server's HttpServer, what the gateway uses), jetty (Jetty 12, handler on virtual",
                "threads), helidon (Helidon 4 SE WebServer). Each in a JVM of its own, warmed, then loaded by the",
                "same closed-loop client at each connection count. Add weft-tls (weft's server with inbound TLS 1.3,",
                "a self-signed certificate) to measure what TLS costs: --servers weft,weft-tls.", ""})
public final class LabServersCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Option(names = "--servers", split = ",", paramLabel = "NAME[,NAME...]", description = "Default: weft,jetty,helidon; also weft-tls.")
    List<String> servers = new ArrayList<>(ServersLab.SERVERS);

    @Option(names = "--concurrency", split = ",", paramLabel = "N[,N...]", description = "Connections. Default: 200,2000.")
    List<Integer> concurrency = new ArrayList<>(List.of(200, 2000));

    @Option(names = "--duration", paramLabel = "D", defaultValue = "8s",
            description = "Measured time per run. Default: ${DEFAULT-VALUE}.")
    Duration duration;

    @Option(names = "--warmup", paramLabel = "D", defaultValue = "3s",
            description = "Unmeasured time before each run. Default: ${DEFAULT-VALUE}.")
    Duration warmup;

    @Override
    public void run() {
        PrintWriter out = spec.commandLine().getOut();
        List<String> known = new ArrayList<>(ServersLab.SERVERS);
        known.add(ServersLab.WEFT_TLS);
        LabArgs.requireKnown("--servers", servers, known);
        for (int c : concurrency) {
            if (c < 1 || c > 15_000) {
                throw new UserException("--concurrency values must be 1..15000", null, 2);
            }
        }
        out.println("command: weft lab servers --servers " + String.join(",", servers) + " --concurrency "
                + String.join(",", concurrency.stream().map(String::valueOf).toList()) + " --duration "
                + Durations.format(duration) + " --warmup " + Durations.format(warmup));
        out.println("machine: " + Machine.describe());
        out.println("started: " + Instant.now());
        out.println();
        out.flush();
        try {
            ServersLab.run(new ServersLab.Options(servers, concurrency, warmup, duration), out, spec.commandLine().getErr());
        } catch (Exception e) {
            throw new UserException("lab servers failed: " + e.getMessage(), e);
        }
    }
}
