package dev.weft.lab.cli;

import dev.weft.cli.UserException;
import dev.weft.lab.Machine;
import dev.weft.lab.chaos.ChaosLab;
import dev.weft.lab.chaos.GatewayChaos;
import dev.weft.lab.chaos.Toxiproxy;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

@Command(name = "chaos",
        mixinStandardHelpOptions = true,
        description = {
                "The forwarder (weft dispatch) and the gateway under injected faults, through",
                "Toxiproxy (github.com/Shopify/toxiproxy/v2, installed once by",
                "lab/chaos/install-toxiproxy.sh with 'go install' from the Go module proxy into",
                "~/.cache/weft/toxiproxy).",
                "",
                "The forwarder (--target dispatch or both): one Kafka broker and weft-upstream",
                "for all runs; per run a topic of its own, a dispatcher in a group of",
                "--instances child JVMs that reach the broker and their two endpoints only",
                "through Toxiproxy, records written at a steady pace while the run's faults come",
                "and go, drawn from its seed: latency, reset_peer, timeout, bandwidth or slicer",
                "on the broker's or an endpoint's proxy, kill -9 of the dispatcher (every",
                "instance) and a restart, kill -9 of one instance (the survivor takes its",
                "partitions over, then a new instance starts), or kill -9 of the broker and a",
                "restart on its data directory and port. Then: every (record, matching endpoint)",
                "reached weft-upstream or the DLQ with a reason, else it is lost; no source",
                "offset was committed before its deliveries settled; duplicates counted per",
                "fault. Prints per run the seed, the faults, records",
                "sent/delivered/dead-lettered/lost and duplicates per fault; then the totals.",
                "",
                "The gateway (--target gateway or both): weft gateway in a child JVM, one route",
                "(deadline 1 s) calling two weft-upstream backends, each behind a Toxiproxy",
                "proxy; 50 clients in a closed loop, 2 s alone, then while each toxic kind comes",
                "and goes once per run (order, backend, stream and attributes drawn from the",
                "seed). Then: no answer (200 or not) arrived later than the deadline + 100 ms",
                "after its request was sent, every 502/504 names a backend that had a toxic",
                "while it was in flight, every request was answered.",
                "",
                "Exit code 1 if any record was lost or committed early, or any gateway",
                "invariant failed. See docs/dispatch.md and docs/gateway.md.",
                ""})
public final class LabChaosCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Option(names = "--runs", paramLabel = "N", defaultValue = "20",
            description = "Seeded fault sequences. Default: ${DEFAULT-VALUE}.")
    int runs;

    @Option(names = "--seed", paramLabel = "S",
            description = "Seed of the first run (run i uses S+i; --seed S --runs 1 repeats one run). Default: the time.")
    Long seed;

    @Option(names = "--records", paramLabel = "N", defaultValue = "300",
            description = "Records per run (half match both endpoints, half one). Default: ${DEFAULT-VALUE}.")
    int records;

    @Option(names = "--faults", paramLabel = "N", defaultValue = "4", description = "Faults per run. Default: ${DEFAULT-VALUE}.")
    int faults;

    @Option(names = "--instances", paramLabel = "N", defaultValue = "2",
            description = "Dispatcher instances in each run's group (1..4); with 2 or more a fault may kill one of them. "
                    + "Default: ${DEFAULT-VALUE}.")
    int instances;

    /** Which side the lab injects faults into. */
    public enum Target { dispatch, gateway, both }

    @Option(names = "--target", paramLabel = "T", defaultValue = "both",
            description = "dispatch, gateway or both (the dispatch runs, then as many gateway runs with the same seeds). "
                    + "Default: ${DEFAULT-VALUE}.")
    Target target;

    @Override
    public void run() {
        PrintWriter out = spec.commandLine().getOut();
        if (runs < 1 || runs > 1000 || records < 1 || records > 100_000 || faults < 1 || faults > 50 || instances < 1
                || instances > 4) {
            throw new UserException("--runs must be 1..1000, --records 1..100000, --faults 1..50, --instances 1..4", null, 2);
        }
        long s = seed != null ? seed : System.currentTimeMillis();
        ChaosLab.Options d = ChaosLab.Options.defaults(runs, s);
        ChaosLab.Options o = new ChaosLab.Options(runs, s, records, faults, instances, d.faultFor(), d.gap(), d.settle());
        out.println("command: weft lab chaos --target " + target + " --runs " + runs + " --seed " + s + " --records " + records
                + " --faults " + faults + " --instances " + instances);
        out.println("machine: " + Machine.describe());
        out.println("started: " + Instant.now());
        out.flush();
        ChaosLab.Summary summary = null;
        GatewayChaos.Summary gateway = null;
        try {
            if (target != Target.gateway) {
                summary = ChaosLab.run(o, out);
            }
            if (target != Target.dispatch) {
                gateway = GatewayChaos.run(GatewayChaos.Options.defaults(runs, s), out);
            }
        } catch (Toxiproxy.Unavailable e) {
            throw new UserException("lab chaos: " + e.getMessage(), null, 2);
        } catch (Exception e) {
            throw new UserException("lab chaos failed: " + e.getMessage(), e);
        }
        List<String> failed = new ArrayList<>();
        if (summary != null && (summary.lost() > 0 || summary.earlyCommits() > 0)) {
            failed.add(summary.lost() + " deliveries lost, " + summary.earlyCommits()
                    + " offsets committed before their deliveries settled");
        }
        if (gateway != null && (gateway.late() > 0 || gateway.misnamed() > 0 || gateway.unanswered() > 0)) {
            failed.add(gateway.late() + " gateway answers past their deadline + " + GatewayChaos.SLACK.toMillis() + " ms, "
                    + gateway.misnamed() + " failures not naming a faulted backend, " + gateway.unanswered() + " unanswered");
        }
        if (!failed.isEmpty()) {
            throw new UserException("lab chaos: " + String.join("; ", failed), null, 1);
        }
    }
}
