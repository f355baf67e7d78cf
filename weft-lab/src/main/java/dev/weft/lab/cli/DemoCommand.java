package dev.weft.lab.cli;

import dev.weft.cli.UserException;
import dev.weft.lab.Demo;
import dev.weft.lab.SystemALab;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

@Command(name = "demo",
        mixinStandardHelpOptions = true,
        description = {
                "The seeds' tables on this machine, in one run: System A (each request calls B, C and D in",
                "parallel) with backends at 0, 100, 500 and 1000 ms, served by each model in a process of its own:",
                "  weft       the Weft gateway on virtual threads",
                "  pool-200   the same gateway on a pool of 200 platform threads (the seeds' design)",
                "  pool-2000  the same on 2,000",
                "  async      futures and callbacks on Vert.x 5 (Netty)",
                "  go         goroutines and net/http (built with the machine's Go; skipped where there is none)",
                "Prints the table as it is measured, then writes results/<time>/report.md, results.json (one record",
                "per model and latency) and throughput.png (throughput against latency, one line per model, and",
                "Little's bound C/L dashed: the most any design can serve with that many requests in flight).",
                "",
                "Every run (model and latency) gets a fresh service process, warmed up at 200 requests in flight.",
                "Quick (default): 2,000 concurrent requests, 3s warm-up + 2s + 4s measured per run, about four",
                "minutes. --full: 4,800 concurrent requests (the most the 20,000 file descriptors of the service",
                "allow: one inbound and three outbound sockets each), 8s + 10s + 10s per run, about ten minutes.",
                ""})
public final class DemoCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Option(names = "--full", description = "The long run (about ten minutes) instead of the quick one.")
    boolean full;

    @Option(names = "--models", split = ",", paramLabel = "NAME[,NAME...]",
            description = "Models to run. Default: weft,pool-200,pool-2000,async,go.")
    List<String> models = new ArrayList<>(SystemALab.DEFAULT_MODELS);

    @Option(names = "--out", paramLabel = "DIR", defaultValue = "results",
            description = "Where results/<time>/ goes. Default: ${DEFAULT-VALUE}.")
    Path out;

    @Override
    public void run() {
        LabArgs.requireKnown("--models", models, SystemALab.MODELS.keySet());
        String command = "weft " + String.join(" ", spec.commandLine().getParseResult().originalArgs());
        try {
            Demo.run(full ? Demo.Plan.FULL : Demo.Plan.QUICK, models, out, command, spec.commandLine().getOut(),
                    spec.commandLine().getErr(), System.console() != null);
        } catch (Exception e) {
            throw new UserException("demo failed: " + e.getMessage(), e);
        }
    }
}
