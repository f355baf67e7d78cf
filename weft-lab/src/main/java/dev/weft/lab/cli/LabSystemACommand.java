package dev.weft.lab.cli;

import dev.weft.cli.UserException;
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
                "Seed 000's System A: each request needs B, C and D (weft-upstream",
                "on 127.0.0.2-4, at latency L), called in parallel and combined. Each model is a",
                "service in a process of its own:",
                "  weft       weft gateway --executor virtual",
                "  pool-200   the same gateway and route, --executor platform:200 (the seed's thread pool)",
                "  pool-2000  the same, --executor platform:2000",
                "  async      futures and callbacks on Vert.x 5 (Netty), one event loop per core",
                "  go         goroutines and net/http (lab/peers/go, built with the machine's Go; skipped",
                "             with a note where there is none)",
                "  lura       lura, the engine of KrakenD CE (lab/peers/lura); not run by default. The Go module",
                "             proxy does not serve lura: git clone https://github.com/luraproject/lura DIR, then",
                "             WEFT_LAB_LURA_SRC=DIR (lura's dependencies come from the proxy); skipped with a",
                "             note otherwise",
                "The gateway models run with retries, breakers and the admission limit off and every bound sized",
                "to --concurrency: the lab measures what each design carries (a closed loop past the CPU gets",
                "503s from the default admission, each sent again at once; weft lab overload measures that).",
                "Load: weft bench, closed loop, in this process. Before measuring, every model must return the same",
                "combined body. Prints the command, the machine, and per model and latency: req/s, p50/p99, errors,",
                "the service's CPU seconds, peak RSS and OS threads. JVM services run with -Xmx6g -XX:+UseG1GC",
                "-XX:+UseTransparentHugePages (WEFT_LAB_SERVICE_OPTS replaces these flags).",
                ""})
public final class LabSystemACommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Option(names = "--models", split = ",", paramLabel = "NAME[,NAME...]",
            description = "Models to measure, in order. Default: weft,pool-200,pool-2000,async,go; also weft-traced "
                    + "(the weft gateway with tracing.otlp and sample 1.0, spans to a receiver in this process) and "
                    + "weft-sampled (the same with sample 0.1), and lura (KrakenD CE's engine, from a checkout named by "
                    + "WEFT_LAB_LURA_SRC).")
    List<String> models = new ArrayList<>(SystemALab.DEFAULT_MODELS);

    @Option(names = "--latency", split = ",", paramLabel = "D[,D...]", defaultValue = "0ms,100ms,500ms,1s",
            description = "Backend latencies. Default: ${DEFAULT-VALUE}.")
    List<Duration> latencies;

    @Option(names = "--concurrency", paramLabel = "N",
            description = "Requests in flight from the load generator. Default: ${DEFAULT-VALUE} (the service then holds "
                    + "N inbound and 3N outbound connections: keep 4N under 20,000 descriptors).")
    int concurrency = 4500;

    @Option(names = "--duration", paramLabel = "D", defaultValue = "8s",
            description = "Measured time per run. Default: ${DEFAULT-VALUE}.")
    Duration duration;

    @Option(names = "--warmup", paramLabel = "D", defaultValue = "4s",
            description = "Unmeasured time before each run; with --cold, the time weft-upstream and the load generator "
                    + "are warmed at the backends before the first row, so that only the service is cold. Default: "
                    + "${DEFAULT-VALUE}.")
    Duration warmup;

    @Option(names = "--cold",
            description = "Instead of the warmed rows: each model and latency in a fresh process straight into "
                    + "--concurrency closed-loop clients for --duration (give 15s or more), nothing left out; prints "
                    + "the steady rate (the run's last third), the answers of the first second and when the rate over "
                    + "the trailing second first reached 90%% of the steady one. Try --latency 100ms,1s --concurrency "
                    + "2000 --duration 20s.")
    boolean cold;

    @Override
    public void run() {
        PrintWriter out = spec.commandLine().getOut();
        LabArgs.requireKnown("--models", models, SystemALab.MODELS.keySet());
        if (concurrency < 1 || concurrency > 4800) {
            throw new UserException("--concurrency must be 1..4800: the service holds N inbound and 3N outbound "
                    + "connections and a process may hold 20,000 file descriptors", null, 2);
        }
        out.println("command: weft lab system-a --models " + String.join(",", models) + " --latency "
                + LabArgs.durations(latencies) + " --concurrency " + concurrency + " --duration "
                + Durations.format(duration) + (cold ? " --cold" : "") + " --warmup " + Durations.format(warmup));
        out.println("machine: " + Machine.describe());
        out.println("started: " + Instant.now());
        out.flush();
        try {
            SystemALab.Options o = new SystemALab.Options(models, latencies, concurrency, warmup, duration,
                    SystemALab.JIT_WARMUP);
            if (cold) {
                dev.weft.lab.ColdStart.run(o, out, spec.commandLine().getErr());
                return;
            }
            SystemALab.Report report = SystemALab.run(o, out, spec.commandLine().getErr(), System.console() != null, null);
            out.println(SystemALab.table(report, o));
        } catch (Exception e) {
            throw new UserException("lab system-a failed: " + e.getMessage(), e);
        }
    }
}
