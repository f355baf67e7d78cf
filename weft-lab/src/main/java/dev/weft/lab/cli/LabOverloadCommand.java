package dev.weft.lab.cli;

import dev.weft.cli.UserException;
import dev.weft.core.Durations;
import dev.weft.lab.Machine;
import dev.weft.lab.OverloadLab;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

@Command(name = "overload",
        mixinStandardHelpOptions = true,
        description = {
                "Offered load past capacity. System A's route (B, C and D called in parallel,",
                "weft-upstream at --latency on 127.0.0.2-4); the gateway with its default config",
                "but for the route's timeouts.",
                "The capacity (1x) is measured first on the first model unless --capacity is",
                "given: the highest rate it serves cleanly (open-loop probes of 4 s from half",
                "the closed-loop rate at --max-in-flight up to twice it, 10%% apart, until two in",
                "a row are not clean; clean: no error, every request sent on time, p99 <= 1.5 x",
                "latency + 100 ms). Then each model, in a fresh process, settles for 10 s at",
                "1x and, if the highest factor is above 1, 5 s at it (not measured: a",
                "process's first overload runs its refusal path cold, see --cold), then gets",
                "an open-loop load (fixed schedule) at each --factors multiple of the",
                "capacity, lowest first. Models:",
                "  weft-static  the gateway, admission.enabled: false (only",
                "               limits.max_concurrent: the gateway's old default)",
                "  weft         the gateway, default config (the adaptive admission limit)",
                "  go           goroutines and net/http (lab/peers/go; skipped with a note",
                "               where there is no Go)",
                "Per step (the --warmup that starts each step is sent but not counted,",
                "except in breaker openings): goodput (answers below 400 per second),",
                "503 share, p50/p99 of the answered requests (from their scheduled",
                "start), p99 of the 503s (from their send), other failures, breaker",
                "openings in the gateway, the generator's p99 send delay (large: the",
                "step was not offered on schedule but in bursts; the",
                "load generator shares the machine), and from the gateway's own",
                "histograms (weft models, measured window only, as a bucket bound) its",
                "p99 from a request read to its 503 and its p99 and worst scheduler lag",
                "(how late a ready virtual thread got a carrier; one long stall is one",
                "late wake-up, so it shows in the worst, not the p99), and its",
                "collector's stop-the-world pauses: their sum in the step (exact) and",
                "the longest (a bucket bound; a pause stops the front door too). Writes",
                "<out>/overload-<time>/",
                "report.md, results.json and goodput.png (goodput against offered load).",
                "The default run takes about eight minutes.",
                ""})
public final class LabOverloadCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Option(names = "--models", split = ",", paramLabel = "NAME[,NAME...]",
            description = "Models, in order. Default: weft-static,weft,go (the capacity is measured on the first).")
    List<String> models = new ArrayList<>(OverloadLab.MODELS.keySet());

    @Option(names = "--latency", paramLabel = "D", defaultValue = "1s", description = "Backend latency. Default: ${DEFAULT-VALUE}.")
    Duration latency;

    @Option(names = "--factors", split = ",", paramLabel = "X[,X...]", defaultValue = "0.5,1,1.5,2,3",
            description = "Offered load as multiples of the capacity. Default: ${DEFAULT-VALUE}.")
    List<Double> factors;

    @Option(names = "--capacity", paramLabel = "REQ/S", defaultValue = "0",
            description = "The capacity (1x) in req/s; 0 measures it. Default: ${DEFAULT-VALUE}.")
    double capacity;

    @Option(names = "--max-in-flight", paramLabel = "N", defaultValue = "4500",
            description = "Requests in flight from the load generator at most (1..4800: descriptors). Default: ${DEFAULT-VALUE}.")
    int maxInFlight;

    @Option(names = "--duration", paramLabel = "D", defaultValue = "6s", description = "Measured time per step. Default: ${DEFAULT-VALUE}.")
    Duration duration;

    @Option(names = "--warmup", paramLabel = "D", defaultValue = "3s", description = "Unmeasured time before each step. Default: ${DEFAULT-VALUE}.")
    Duration warmup;

    @Option(names = "--service-cpus", paramLabel = "LIST",
            description = "Run each model on these CPUs (taskset list, such as 1 or 2-3) and the load generator and "
                    + "the backends on the others, so that they take no CPU from it. Default: none (all share the machine).")
    String serviceCpus;

    @Option(names = "--admission", paramLabel = "KEYS", defaultValue = "",
            description = "More keys of the weft model's admission block, YAML flow style, such as 'queue: 0, "
                    + "lag_target: 10ms' (docs/gateway.md, Overload). Default: none (the default config).")
    String admission;

    @Option(names = "--cold", description = "Settle at 1x only: the first step past 1x is then the process's first "
            + "overload (cold JIT of the refusal path, the heap not yet grown to the load).")
    boolean cold;

    @Option(names = "--out", paramLabel = "DIR", defaultValue = "results", description = "Where overload-<time>/ goes. Default: ${DEFAULT-VALUE}.")
    Path out;

    @Override
    public void run() {
        PrintWriter w = spec.commandLine().getOut();
        LabArgs.requireKnown("--models", models, OverloadLab.MODELS.keySet());
        if (maxInFlight < 1 || maxInFlight > 4800) {
            throw new UserException("--max-in-flight must be 1..4800", null, 2);
        }
        if (factors.isEmpty() || factors.stream().anyMatch(f -> !(f > 0 && f <= 20))) {
            throw new UserException("--factors must be multiples in (0, 20], such as 0.5,1,2", null, 2);
        }
        dev.weft.lab.CpuPin pin;
        try {
            pin = serviceCpus == null ? null : dev.weft.lab.CpuPin.of(serviceCpus, dev.weft.lab.CpuPin.online());
        } catch (IllegalArgumentException e) {
            throw new UserException(e.getMessage(), null, 2);
        }
        String command = "weft lab overload --models " + String.join(",", models) + " --latency "
                + Durations.format(latency) + " --factors " + factors.stream().map(String::valueOf)
                .reduce((a, b) -> a + "," + b).orElse("") + " --capacity " + capacity + " --max-in-flight " + maxInFlight
                + " --duration " + Durations.format(duration) + " --warmup " + Durations.format(warmup)
                + (serviceCpus == null ? "" : " --service-cpus " + serviceCpus)
                + (admission.isBlank() ? "" : " --admission '" + admission.strip() + "'") + (cold ? " --cold" : "");
        w.println("command: " + command);
        w.println("machine: " + Machine.describe());
        w.println("started: " + Instant.now());
        w.flush();
        try {
            OverloadLab.Report r = OverloadLab.run(new OverloadLab.Options(models, latency, factors, capacity, warmup,
                    duration, maxInFlight, pin, admission, cold), out, command, w, spec.commandLine().getErr());
            r.skipped().forEach((m, why) -> w.println("skipped " + m + ": " + why));
            w.println("wrote " + r.dir().resolve("report.md") + ", results.json, goodput.png");
        } catch (Exception e) {
            throw new UserException("lab overload failed: " + e.getMessage(), e);
        }
    }
}
