package dev.weft.cli;

import dev.weft.core.Durations;
import dev.weft.lab.ClientsLab;
import dev.weft.lab.Machine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

@Command(name = "clients",
        mixinStandardHelpOptions = true,
        description = {
                "Outbound HTTP clients side by side: each runs a closed loop of N virtual threads doing GETs against",
                "a weft-sim backend (started in its own JVM) at each backend latency. Prints the command, the",
                "machine and a Markdown table of raw numbers.",
                "",
                "Clients: weft (the Weft transport: Apache HttpClient 5 classic under deadlines, bulkhead, breaker),",
                "         jdk (java.net.http.HttpClient, HTTP/1.1, blocking send on virtual threads).",
                ""})
public final class LabClientsCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Option(names = "--clients", split = ",", paramLabel = "NAME[,NAME...]",
            description = "Clients to measure, in order. Default: weft,jdk.")
    List<String> clients = new ArrayList<>(ClientsLab.CLIENTS);

    @Option(names = "--latency", split = ",", paramLabel = "D[,D...]", defaultValue = "0ms,100ms",
            description = "Backend latencies. Default: ${DEFAULT-VALUE}.")
    List<Duration> latencies;

    @Option(names = "--concurrency", paramLabel = "N", description = "Virtual threads per client. Default: ${DEFAULT-VALUE}.")
    int concurrency = 2000;

    @Option(names = "--duration", paramLabel = "D", defaultValue = "8s",
            description = "Measured time per run. Default: ${DEFAULT-VALUE}.")
    Duration duration;

    @Option(names = "--warmup", paramLabel = "D", defaultValue = "3s",
            description = "Unmeasured time before each run. Default: ${DEFAULT-VALUE}.")
    Duration warmup;

    @Option(names = "--target", paramLabel = "URL",
            description = "Use this backend (a running weft upstream) instead of starting one.")
    String target;

    @Override
    public void run() {
        PrintWriter out = spec.commandLine().getOut();
        LabArgs.requireKnown("--clients", clients, ClientsLab.CLIENTS);
        if (concurrency < 1 || concurrency > 15_000) {
            throw new UserException("--concurrency must be 1..15000 (each thread holds a socket; a process may "
                    + "hold 20,000 file descriptors)", null, 2);
        }
        out.println("command: weft lab clients --clients " + String.join(",", clients) + " --latency "
                + LabArgs.durations(latencies) + " --concurrency " + concurrency + " --duration "
                + Durations.format(duration) + " --warmup " + Durations.format(warmup) + (target != null ? " --target " + target : ""));
        out.println("machine: " + Machine.describe());
        out.println("started: " + Instant.now());
        out.flush();
        try {
            ClientsLab.run(new ClientsLab.Options(clients, latencies, concurrency, warmup, duration, target), out,
                    spec.commandLine().getErr());
        } catch (Exception e) {
            throw new UserException("lab clients failed: " + e.getMessage(), e);
        }
    }
}
