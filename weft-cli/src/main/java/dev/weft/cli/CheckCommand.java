package dev.weft.cli;

import dev.weft.core.Durations;
import dev.weft.config.ConfigException;
import dev.weft.config.ConfigNode;
import dev.weft.dispatch.config.DispatchConfig;
import dev.weft.dispatch.config.DispatchConfigLoader;
import dev.weft.dispatch.config.EndpointConfig;
import dev.weft.gateway.config.GatewayConfig;
import dev.weft.gateway.config.GatewayConfigLoader;
import dev.weft.gateway.plan.RoutePlan;
import dev.weft.sim.SimConfig;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Map;

@Command(name = "check",
        mixinStandardHelpOptions = true,
        description = {"Check a config file without starting anything: a gateway config (it has 'routes'), a",
                "dispatch config (it has 'source' and 'endpoints') or a weft upstream config (it has 'paths' or",
                "'defaults'). Prints every problem as file:line:column",
                "and exits 2, or prints what the file declares and exits 0.", ""})
public final class CheckCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Parameters(paramLabel = "FILE", description = "The config to check.")
    Path file;

    @Override
    public void run() {
        PrintWriter out = spec.commandLine().getOut();
        try {
            Map<String, ConfigNode> top = ConfigNode.load(file).entries();
            if (top.containsKey("routes")) {
                GatewayConfig g = GatewayConfigLoader.load(file);
                out.println(file + ": OK, gateway config with " + g.routes().size() + " routes");
                dev.weft.gateway.config.DestinationWarnings.of(g).forEach(w -> out.println("warning: " + w));
                for (RoutePlan r : g.routes()) {
                    out.println("  " + r.id() + "  timeout " + Durations.format(r.timeout()) + ", calls in order: "
                            + String.join(", ", r.calls().stream().map(c -> c.needs().isEmpty() ? c.name()
                            : c.name() + " (after " + String.join(", ", c.needs()) + ")").toList()));
                }
                String budget = dev.weft.gateway.config.DescriptorBudget.check(g, dev.weft.core.Descriptors.limit());
                if (budget != null) {
                    out.println("  warning: " + budget);
                }
            } else if (top.containsKey("source") || top.containsKey("endpoints")) {
                DispatchConfig d = DispatchConfigLoader.load(file);
                out.println(file + ": OK, dispatch config: group " + d.group() + ", topics " + String.join(", ", d.topics())
                        + (d.bootstrap() != null ? " on " + d.bootstrap() : " on the development broker") + ", "
                        + d.endpoints().size() + " endpoints"
                        + (d.adminTokenEnv() != null ? "; admin POSTs need the bearer token in $" + d.adminTokenEnv() : ""));
                for (EndpointConfig e : d.endpoints()) {
                    out.println("  " + e.id() + "  " + e.url() + "  " + e.match() + (e.secret() != null ? ", signed" : "")
                            + (e.rateLimit() != null ? ", rate_limit " + e.rateLimit() : "")
                            + (e.allowPrivate() ? ", private target allowed" : ""));
                }
            } else if (top.containsKey("paths") || top.containsKey("defaults")) {
                SimConfig s = SimConfig.load(file);
                out.println(file + ": OK, weft upstream config with " + s.paths().size() + " paths");
            } else {
                throw new UserException(file + ": cannot tell what this config is for: a gateway config has 'routes', "
                        + "a dispatch config 'source' and 'endpoints', a weft upstream config 'paths'", null, 2);
            }
        } catch (ConfigException e) {
            throw new UserException(e.getMessage(), e, 2);
        }
    }
}
