package dev.weft.lab.cli;

import dev.weft.cli.UserException;
import dev.weft.core.Durations;
import dev.weft.lab.DispatchLab;
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

@Command(name = "dispatch",
        mixinStandardHelpOptions = true,
        description = {
                "Seed 003's Kafka -> HTTP forwarding, side by side: records preloaded on a topic of a real broker",
                "(child JVM), N endpoints (weft-upstream, child JVM, one 127.0.0.x address each), every record to every",
                "endpoint, at --rate records/s (or a preloaded backlog with --rate 0). Designs: weft (weft dispatch's engine, default limits) and seed-003 (batch poll of "
                        + "500,",
                "thread pool 50..200 on a SynchronousQueue, CountDownLatch per batch, commit after the batch).",
                "Scenarios: all endpoints at --latency, then the last one at --slow-latency. Deliveries are the",
                "requests weft-upstream received in the measured window; 'fast vs all fast' is the fast endpoints' rate",
                "against the same design's all-fast run. A first, unmeasured pass of each design (--warmup long)",
                "warms up the JVMs.",
                "--backlog N runs issue 16's backlog case instead: N records for one endpoint with --max-in-flight",
                "requests at once answering in --latency, drained by weft dispatch; its rate against the lane's",
                "capacity (max_in_flight / latency).", ""})
public final class LabDispatchCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Option(names = "--designs", split = ",", paramLabel = "NAME[,NAME...]", description = "Default: weft,seed-003.")
    List<String> designs = new ArrayList<>(DispatchLab.DESIGNS);

    @Option(names = "--endpoints", paramLabel = "N", defaultValue = "10", description = "Default: ${DEFAULT-VALUE}.")
    int endpoints;

    @Option(names = "--latency", paramLabel = "D", defaultValue = "100ms", description = "Default: ${DEFAULT-VALUE}.")
    Duration latency;

    @Option(names = "--slow-latency", paramLabel = "D", defaultValue = "5s", description = "Default: ${DEFAULT-VALUE}.")
    Duration slowLatency;

    @Option(names = "--rate", paramLabel = "R", defaultValue = "200",
            description = "Records/s written during each run to a topic of its own (x endpoints = deliveries/s offered); "
                    + "0: backlog mode, --records preloaded and read as fast as each design can. Default: ${DEFAULT-VALUE}.")
    int rate;

    @Option(names = "--records", paramLabel = "N", defaultValue = "60000",
            description = "Backlog mode: records preloaded (each design reads them from the start). Default: ${DEFAULT-VALUE}.")
    int records;

    @Option(names = "--partitions", paramLabel = "N", defaultValue = "6", description = "Default: ${DEFAULT-VALUE}.")
    int partitions;

    @Option(names = "--warmup", paramLabel = "D", defaultValue = "10s",
            description = "Unmeasured time before each run, and the length of the warm-up pass. Default: ${DEFAULT-VALUE}.")
    Duration warmup;

    @Option(names = "--duration", paramLabel = "D", defaultValue = "20s",
            description = "Measured time per run. Default: ${DEFAULT-VALUE}.")
    Duration duration;

    @Option(names = "--backlog", paramLabel = "N", defaultValue = "0",
            description = "Run the backlog case with N records instead of the designs side by side. Default: off.")
    int backlog;

    @Option(names = "--max-in-flight", paramLabel = "N", defaultValue = "20",
            description = "Backlog case: the endpoint's max_in_flight. Default: ${DEFAULT-VALUE}.")
    int maxInFlight;

    @Override
    public void run() {
        PrintWriter out = spec.commandLine().getOut();
        LabArgs.requireKnown("--designs", designs, DispatchLab.DESIGNS);
        if (endpoints < 2 || endpoints > 50) {
            throw new UserException("--endpoints must be 2..50", null, 2);
        }
        if (records < 1 || records > 5_000_000 || partitions < 1 || partitions > 100 || rate < 0 || rate > 100_000) {
            throw new UserException("--records must be 1..5000000, --partitions 1..100, --rate 0..100000", null, 2);
        }
        if (backlog > 0) {
            if (backlog > 1_000_000 || maxInFlight < 1 || maxInFlight > 10_000) {
                throw new UserException("--backlog must be 1..1000000, --max-in-flight 1..10000", null, 2);
            }
            out.println("command: weft lab dispatch --backlog " + backlog + " --max-in-flight " + maxInFlight
                    + " --latency " + Durations.format(latency) + " --partitions " + partitions);
            out.println("machine: " + Machine.describe());
            out.println("started: " + Instant.now());
            out.flush();
            try {
                dev.weft.lab.BacklogLab.run(backlog, maxInFlight, latency, partitions, Duration.ofSeconds(80), out);
            } catch (Exception e) {
                throw new UserException("lab dispatch --backlog failed: " + e.getMessage(), e);
            }
            return;
        }
        out.println("command: weft lab dispatch --designs " + String.join(",", designs) + " --endpoints " + endpoints
                + " --latency " + Durations.format(latency) + " --slow-latency " + Durations.format(slowLatency)
                + " --rate " + rate + " --records " + records + " --partitions " + partitions + " --warmup " + Durations.format(warmup)
                + " --duration " + Durations.format(duration));
        out.println("machine: " + Machine.describe());
        out.println("started: " + Instant.now());
        out.flush();
        try {
            DispatchLab.run(new DispatchLab.Options(designs, endpoints, latency, slowLatency, records, partitions, warmup,
                    duration, rate), out);
        } catch (Exception e) {
            throw new UserException("lab dispatch failed: " + e.getMessage(), e);
        }
    }
}
