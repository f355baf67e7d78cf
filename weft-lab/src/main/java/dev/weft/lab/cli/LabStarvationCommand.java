package dev.weft.lab.cli;

import dev.weft.cli.UserException;
import dev.weft.core.Durations;
import dev.weft.lab.Machine;
import dev.weft.lab.StarvationLab;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

@Command(name = "starvation",
        mixinStandardHelpOptions = true,
        description = {
                "What runaway virtual threads do to a process's other requests: the gateway's /fast route (one call to",
                "weft-upstream, 10 ms) under a closed loop, while 0, 1, 2 ... requests to a lab-only /burn in the same",
                "process spin on their virtual threads without parking (JDK 25 does not preempt them, so each holds",
                "a carrier). weft doctor is attached to the service during each run and the table says what it named.",
                ""})
public final class LabStarvationCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Option(names = "--runaways", split = ",", paramLabel = "N[,N...]",
            description = "Burners at once, one scenario each. Default: 0,1,2.")
    List<Integer> runaways = new ArrayList<>(List.of(0, 1, 2));

    @Option(names = "--burn", paramLabel = "D", defaultValue = "1s",
            description = "How long each /burn spins. Default: ${DEFAULT-VALUE}.")
    Duration burn;

    @Option(names = "--concurrency", paramLabel = "N", defaultValue = "50",
            description = "/fast requests in flight. Default: ${DEFAULT-VALUE}.")
    int concurrency;

    @Option(names = "--duration", paramLabel = "D", defaultValue = "10s",
            description = "Measured time per scenario. Default: ${DEFAULT-VALUE}.")
    Duration duration;

    @Option(names = "--warmup", paramLabel = "D", defaultValue = "2s",
            description = "Unmeasured time before each scenario. Default: ${DEFAULT-VALUE}.")
    Duration warmup;

    @Override
    public void run() {
        PrintWriter out = spec.commandLine().getOut();
        for (int n : runaways) {
            if (n < 0 || n > 16) {
                throw new UserException("--runaways values must be 0..16", null, 2);
            }
        }
        if (concurrency < 1 || concurrency > 5000) {
            throw new UserException("--concurrency must be 1..5000", null, 2);
        }
        if (burn.toMillis() < 10 || burn.toMillis() > 60_000 || duration.toMillis() < 2000) {
            throw new UserException("--burn must be 10ms..60s and --duration at least 2s", null, 2);
        }
        out.println("command: weft lab starvation --runaways " + String.join(",", runaways.stream().map(String::valueOf)
                .toList()) + " --burn " + Durations.format(burn) + " --concurrency " + concurrency + " --duration "
                + Durations.format(duration) + " --warmup " + Durations.format(warmup));
        out.println("machine: " + Machine.describe());
        out.println("started: " + Instant.now());
        out.flush();
        try {
            StarvationLab.run(new StarvationLab.Options(runaways, burn, concurrency, warmup, duration), out,
                    spec.commandLine().getErr());
        } catch (Exception e) {
            throw new UserException("lab starvation failed: " + e.getMessage(), e);
        }
    }
}
