package dev.weft.lab.cli;

import dev.weft.cli.UserException;
import dev.weft.core.Durations;
import dev.weft.lab.Machine;
import dev.weft.lab.RelayLab;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

@Command(name = "relay",
        mixinStandardHelpOptions = true,
        description = {
                "Seed 000's relay: System A as its team had it (weft-legacy: JDK HttpServer, a pool of 200 request",
                "threads, JDK 17 code, no Weft in it) calling B, C and D three ways; backends: weft-upstream on 127.0.0.2-4",
                "at latency L. Models, each row a fresh service (and relay) process, in turn at each latency:",
                "  direct       blocking HttpURLConnection calls straight to the backends (the request thread waits)",
                "  relay-weft   HttpClient.sendAsync over one HTTP/2 connection (Upgrade: h2c) to weft gateway with",
                "               proxy: routes on loopback; the request thread does not wait, the answer is written",
                "               when the three calls complete",
                "  relay-go     the same through lab/peers/go-relay (Go's x/net/http2/h2c + httputil.ReverseProxy;",
                "               needs Go, and golang.org/x/net from the Go module proxy on its first build)",
                "Closed loop at --concurrency, then an open-loop row per model at 0 ms and half the knee (half the",
                "lowest closed-loop req/s at 0 ms, or --open-rate): the p50/p99 a relay adds against direct. Then",
                "a hop row per model: three times that rate of single calls from the lab's client over HTTP/1.1,",
                "straight to B, C, D or through the relay alone (no service): what one hop adds to a call.",
                "Prints the command, the machine, and per row: req/s, p50/p99, errors, the service's and the relay's",
                "CPU seconds and the relay's CPU ms per 1,000 backend calls. A model that cannot run is reported",
                "FAILED with the reason (the other rows still run) and the command then exits 1.",
                "JVM flags: the service's are lab system-a's (WEFT_LAB_SERVICE_OPTS replaces them); the Weft relay's",
                "are the same unless WEFT_LAB_RELAY_OPTS replaces them.",
                ""})
public final class LabRelayCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Option(names = "--models", split = ",", paramLabel = "NAME[,NAME...]",
            description = "Models, in the order each latency runs them. Default: direct,relay-weft,relay-go.")
    List<String> models = new ArrayList<>(RelayLab.MODELS);

    @Option(names = "--latency", split = ",", paramLabel = "D[,D...]", defaultValue = "0ms,100ms,500ms,1s",
            description = "Backend latencies. Default: ${DEFAULT-VALUE}.")
    List<Duration> latencies;

    @Option(names = "--concurrency", paramLabel = "N", defaultValue = "2000",
            description = "Requests in flight from the load generator (closed loop; the cap in the open loop). "
                    + "Default: ${DEFAULT-VALUE}. Each is three streams on the relay's one connection "
                    + "(max_concurrent_streams is set to 3N+100) and up to three backend connections.")
    int concurrency;

    @Option(names = "--duration", paramLabel = "D", defaultValue = "6s",
            description = "Measured time per closed-loop row. Default: ${DEFAULT-VALUE}.")
    Duration duration;

    @Option(names = "--warmup", paramLabel = "D", defaultValue = "3s",
            description = "Unmeasured load as the row's before each row. Default: ${DEFAULT-VALUE}.")
    Duration warmup;

    @Option(names = "--jit-warmup", paramLabel = "D", defaultValue = "3s",
            description = "Load at concurrency 200 with 0 ms backends on each fresh process first. Default: ${DEFAULT-VALUE}.")
    Duration jitWarmup;

    @Option(names = "--open-rate", paramLabel = "R", defaultValue = "0",
            description = "Requests a second of the open-loop rows; 0: half the knee; negative: none. Default: ${DEFAULT-VALUE}.")
    double openRate;

    @Option(names = "--open-duration", paramLabel = "D", defaultValue = "8s",
            description = "Measured time per open-loop row. Default: ${DEFAULT-VALUE}.")
    Duration openDuration;

    @Override
    public void run() {
        PrintWriter out = spec.commandLine().getOut();
        for (String m : models) {
            try {
                RelayLab.describe(m);
            } catch (IllegalArgumentException e) {
                throw new UserException("--models: " + e.getMessage(), null, 2);
            }
        }
        // the lab holds N connections, the sims up to 3N, a process at most 20,000 descriptors
        if (concurrency < 1 || concurrency > 6000) {
            throw new UserException("--concurrency must be 1..6000: the backends' process holds up to 3N connections "
                    + "and a process may hold 20,000 file descriptors", null, 2);
        }
        if (latencies.stream().anyMatch(Duration::isNegative)) {
            throw new UserException("--latency: a latency cannot be negative", null, 2);
        }
        out.println("command: weft lab relay --models " + String.join(",", models) + " --latency "
                + LabArgs.durations(latencies) + " --concurrency " + concurrency + " --duration "
                + Durations.format(duration) + " --warmup " + Durations.format(warmup) + " --jit-warmup "
                + Durations.format(jitWarmup) + " --open-rate " + String.format(Locale.ROOT, "%.0f", openRate)
                + " --open-duration " + Durations.format(openDuration));
        out.println("machine: " + Machine.describe());
        out.println("started: " + Instant.now());
        out.flush();
        RelayLab.Report report;
        RelayLab.Options o = new RelayLab.Options(models, latencies, concurrency, warmup, duration, jitWarmup, openRate,
                openDuration);
        try {
            report = RelayLab.run(o, out, spec.commandLine().getErr(), System.console() != null);
        } catch (Exception e) {
            throw new UserException("lab relay failed: " + e.getMessage(), e);
        }
        out.println(RelayLab.table(report, o));
        out.flush();
        if (!report.failed().isEmpty()) {
            throw new UserException("lab relay: " + String.join(", ", report.failed().keySet())
                    + " could not run (see FAILED above)", null, 1);
        }
    }
}
