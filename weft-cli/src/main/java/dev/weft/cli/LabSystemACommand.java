package dev.weft.cli;

import dev.weft.core.Durations;
import dev.weft.lab.Machine;
import dev.weft.lab.SystemALab;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

@Command(name = "system-a",
        mixinStandardHelpOptions = true,
        description = {
                "Seed 000's System A: each request needs B, C and D (simulated, at latency L), called in parallel",
                "and combined. The same gateway route runs once per model, each in a JVM of its own:",
                "  weft       --executor virtual",
                "  pool-200   --executor platform:200   (the seed's thread pool)",
                "  pool-2000  --executor platform:2000",
                "Before measuring, every model must return the same combined body. Prints the command, the machine,",
                "and per model and latency: req/s, p50/p99, errors, the service's CPU seconds, peak RSS and OS threads.",
                ""})
public final class LabSystemACommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Option(names = "--models", split = ",", paramLabel = "NAME[,NAME...]",
            description = "Models to measure, in order. Default: weft,pool-200,pool-2000.")
    List<String> models = new ArrayList<>(List.of("weft", "pool-200", "pool-2000"));

    @Option(names = "--latency", split = ",", paramLabel = "D[,D...]",
            description = "Backend latencies. Default: 0ms,100ms,500ms,1s.")
    List<String> latencies = new ArrayList<>(List.of("0ms", "100ms", "500ms", "1s"));

    @Option(names = "--concurrency", paramLabel = "N",
            description = "Requests in flight from the load generator. Default: ${DEFAULT-VALUE} (the service then holds "
                    + "N inbound and 3N outbound connections: keep 4N under 20,000 descriptors).")
    int concurrency = 4000;

    @Option(names = "--duration", paramLabel = "D", description = "Measured time per run. Default: ${DEFAULT-VALUE}.")
    String duration = "8s";

    @Option(names = "--warmup", paramLabel = "D", description = "Unmeasured time before each run. Default: ${DEFAULT-VALUE}.")
    String warmup = "4s";

    @Override
    public void run() {
        PrintWriter out = spec.commandLine().getOut();
        List<Duration> lat = new ArrayList<>();
        Duration d;
        Duration w;
        try {
            for (String l : latencies) {
                lat.add(Durations.parse(l));
            }
            d = Durations.parse(duration);
            w = Durations.parse(warmup);
        } catch (IllegalArgumentException e) {
            throw new UserException(e.getMessage(), e, 2);
        }
        for (String m : models) {
            if (!SystemALab.MODELS.containsKey(m)) {
                throw new UserException("--models: unknown model '" + m + "'; known: weft, pool-200, pool-2000", null, 2);
            }
        }
        if (concurrency < 1 || concurrency > 4500) {
            throw new UserException("--concurrency must be 1..4500: the service holds N inbound and 3N outbound "
                    + "connections and a process may hold 20,000 file descriptors", null, 2);
        }
        out.println("command: weft lab system-a --models " + String.join(",", models) + " --latency "
                + String.join(",", latencies) + " --concurrency " + concurrency + " --duration " + duration
                + " --warmup " + warmup);
        out.println("machine: " + Machine.describe());
        out.println("started: " + Instant.now());
        out.flush();
        try {
            SystemALab.run(new SystemALab.Options(models, lat, concurrency, w, d), out, spec.commandLine().getErr());
        } catch (Exception e) {
            throw new UserException("lab system-a failed: " + e.getMessage(), e);
        }
    }
}
