package dev.weft.lab.cli;

import dev.weft.cli.UserException;
import dev.weft.core.Durations;
import dev.weft.lab.AgentLab;
import dev.weft.lab.Machine;
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

@Command(name = "agent",
        mixinStandardHelpOptions = true,
        description = {
                "An unmodified thread-pool service, with and without weft-agent: seed 000's System A as a team wrote it",
                "before virtual threads (weft-legacy: JDK HttpServer, a fixed pool of 200 handlers, a fixed pool of 200",
                "making the three backend calls in parallel with HttpURLConnection; no Weft in it). Backends B, C and D:",
                "weft-upstream on 127.0.0.2-4 at latency L. Models, each row a fresh process, in turn at each latency:",
                "  pool         the service as it is",
                "  agent        the same JVM with -javaagent:weft-agent.jar (each pool keeps its bound)",
                "  agent-N      the same with -javaagent:weft-agent.jar=concurrency=N (agent-10000 by default)",
                "  agent-pinned the same with -javaagent:weft-agent.jar=pinned (pinned workers counted by JFR)",
                "  weft         weft gateway --executor virtual on the same route",
                "--json adds GET /json (a TechEmpower-style endpoint, no backend) for the JVM models but weft.",
                "Load: weft bench, closed loop, in this process. Prints the command, the machine, and per row: req/s,",
                "p50/p99, errors, the service's CPU seconds, peak RSS and OS threads; then each model against pool.",
                "Needs weft-agent.jar: ./weft agent builds it.",
                ""})
public final class LabAgentCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Option(names = "--models", split = ",", paramLabel = "NAME[,NAME...]",
            description = "Models, in the order each latency runs them. Default: pool,agent,agent-10000,weft.")
    List<String> models = new ArrayList<>(AgentLab.DEFAULT_MODELS);

    @Option(names = "--latency", split = ",", paramLabel = "D[,D...]", defaultValue = "0ms,100ms,1s",
            description = "Backend latencies. Default: ${DEFAULT-VALUE}.")
    List<Duration> latencies;

    @Option(names = "--concurrency", paramLabel = "N", defaultValue = "2000",
            description = "Requests in flight from the load generator. Default: ${DEFAULT-VALUE} (the service then holds "
                    + "N inbound and up to 3N outbound connections: keep 4N under 20,000 descriptors).")
    int concurrency;

    @Option(names = "--rounds", paramLabel = "N", defaultValue = "1",
            description = "Times each latency's models run in turn (alternating). Default: ${DEFAULT-VALUE}.")
    int rounds;

    @Option(names = "--json", description = "Also measure GET /json (no backend) for pool and the agent models.")
    boolean json;

    @Option(names = "--duration", paramLabel = "D", defaultValue = "8s",
            description = "Measured time per row. Default: ${DEFAULT-VALUE}.")
    Duration duration;

    @Option(names = "--warmup", paramLabel = "D", defaultValue = "4s",
            description = "Unmeasured load at --concurrency before each row. Default: ${DEFAULT-VALUE}.")
    Duration warmup;

    @Option(names = "--jit-warmup", paramLabel = "D", defaultValue = "4s",
            description = "Load at concurrency 200 with 0 ms backends on each fresh process first. Default: ${DEFAULT-VALUE}.")
    Duration jitWarmup;

    @Option(names = "--agent-jar", paramLabel = "PATH",
            description = "weft-agent.jar. Default: $WEFT_HOME/weft-agent/target/weft-agent.jar (./weft sets WEFT_HOME).")
    Path agentJar;

    @Override
    public void run() {
        PrintWriter out = spec.commandLine().getOut();
        for (String m : models) {
            try {
                AgentLab.describe(m);
            } catch (IllegalArgumentException e) {
                throw new UserException("--models: " + e.getMessage(), null, 2);
            }
        }
        if (concurrency < 1 || concurrency > 4800) {
            throw new UserException("--concurrency must be 1..4800: the service holds N inbound and 3N outbound "
                    + "connections and a process may hold 20,000 file descriptors", null, 2);
        }
        if (rounds < 1 || rounds > 10) {
            throw new UserException("--rounds must be 1..10", null, 2);
        }
        Path jar = agentJar != null ? agentJar : Path.of(System.getenv().getOrDefault("WEFT_HOME", "."),
                "weft-agent", "target", "weft-agent.jar");
        out.println("command: weft lab agent --models " + String.join(",", models) + " --latency "
                + LabArgs.durations(latencies) + " --concurrency " + concurrency + " --rounds " + rounds
                + (json ? " --json" : "") + " --duration " + Durations.format(duration) + " --warmup "
                + Durations.format(warmup) + " --jit-warmup " + Durations.format(jitWarmup));
        out.println("machine: " + Machine.describe());
        out.println("started: " + Instant.now());
        out.flush();
        try {
            AgentLab.Options o = new AgentLab.Options(models, latencies, concurrency, warmup, duration, jitWarmup,
                    jar.toAbsolutePath(), rounds, json);
            out.println(AgentLab.table(AgentLab.run(o, out, spec.commandLine().getErr(), System.console() != null)));
        } catch (Exception e) {
            throw new UserException("lab agent failed: " + e.getMessage(), e);
        }
    }
}
