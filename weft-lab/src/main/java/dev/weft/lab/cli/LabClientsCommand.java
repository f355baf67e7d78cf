package dev.weft.lab.cli;

import dev.weft.cli.UserException;
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
                "Outbound HTTP clients side by side, closed loop, GETs against a weft-upstream backend (started in its",
                "own JVM) at each backend latency. Prints the command, the machine and a Markdown table of raw",
                "numbers, with the CPU seconds of client and backend.",
                "",
                "The shoot-out, each on N virtual threads with as many connections:",
                "  weft      Weft's Transport (its own HTTP/1.1 client, with bulkhead, deadline, metrics)",
                "  jdk       java.net.http.HttpClient, HTTP/1.1",
                "  apache    Apache HttpClient 5 classic, pooled, nothing else",
                "  jetty     Jetty 12 HttpClient, blocking send()",
                "  helidon   Helidon 4 WebClient",
                "  raw       a minimal HTTP/1.1 client on plain sockets: the reference floor",
                "Seed 002's client-side models:",
                "  pool-80   80 platform threads, blocking Apache client",
                "  async-128 Vert.x HttpClient with 128 connections, N requests in flight",
                "  virtual   N virtual threads, blocking Weft Transport",
                "  go-256    Go, 256 goroutines (lab/peers/go-client, built with the machine's Go; skipped",
                "            with a note where there is none)",
                ""})
public final class LabClientsCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Option(names = "--clients", split = ",", paramLabel = "NAME[,NAME...]",
            description = "Clients to measure, in order. Default: all of them, in the order above.")
    List<String> clients = new ArrayList<>(ClientsLab.CLIENTS.keySet());

    @Option(names = "--latency", split = ",", paramLabel = "D[,D...]", defaultValue = "0ms,100ms",
            description = "Backend latencies. Default: ${DEFAULT-VALUE}.")
    List<Duration> latencies;

    @Option(names = "--concurrency", paramLabel = "N",
            description = "N: virtual threads per client (requests in flight for async-128). Default: ${DEFAULT-VALUE}.")
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
        LabArgs.requireKnown("--clients", clients, ClientsLab.CLIENTS.keySet());
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
