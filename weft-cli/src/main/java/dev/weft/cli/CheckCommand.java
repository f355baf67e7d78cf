package dev.weft.cli;

import dev.weft.os.CpuCgroup;
import dev.weft.core.Durations;
import dev.weft.config.ConfigException;
import dev.weft.config.ConfigNode;
import dev.weft.dispatch.config.DispatchConfig;
import dev.weft.dispatch.config.DispatchConfigLoader;
import dev.weft.dispatch.config.EndpointConfig;
import dev.weft.gateway.config.GatewayConfig;
import dev.weft.gateway.config.GatewayConfigLoader;
import dev.weft.gateway.plan.RoutePlan;
import dev.weft.server.admission.AdmissionPolicy;
import dev.weft.upstream.UpstreamConfig;
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
                "and exits 2, or prints what the file declares and exits 0. For a gateway it also says whether",
                "the config fits this process's open-file limit, and what the front door's thread priority",
                "would be run as this user (admission.door_nice, door_fallback).", ""})
public final class CheckCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Parameters(paramLabel = "FILE", description = "The config to check.")
    Path file;

    /**
     * What the front door's priority would be if the gateway ran as this process does ({@code nice}: its nice value,
     * null where it cannot be read; {@code mayRaise}: whether it may raise a thread to {@code admission.door_nice};
     * {@code cgroup}: its CPU cgroup, null where it cannot be read), or null when there is no door to set (the
     * admission off, {@code door_nice: 0}, a TLS listener or a platform executor, which serve without it) or nothing
     * can be read.
     */
    static String frontDoor(GatewayConfig g, Integer nice, boolean mayRaise, CpuCgroup.Sharing cgroup) {
        AdmissionPolicy a = g.admission();
        int want = a.doorNice();
        if (!a.enabled() || want == 0 || g.tls() != null || !(g.executor() instanceof dev.weft.server.ExecutorModel.Virtual)
                || nice == null) {
            return null;
        }
        if (want >= nice) {
            return "front door: left at nice " + nice + ", this process's, at or above admission.door_nice " + want;
        }
        if (mayRaise) {
            return "front door: its thread at nice " + want + " (admission.door_nice; run as now, the gateway may raise it)";
        }
        AdmissionPolicy.DoorFallback f = a.doorFallback();
        boolean alone = cgroup != null && cgroup.alone();
        if (f.lowers(cgroup)) {
            return "front door: run as now, the gateway may not raise its thread to nice " + want + " (no CAP_SYS_NICE), "
                    + "so it lowers its other threads to nice " + AdmissionPolicy.othersNice(nice, want)
                    + " instead (admission.door_fallback: " + (alone ? f.name().toLowerCase(java.util.Locale.ROOT)
                    + "; its CPU cgroup " + cgroup.cgroup() + ": " + cgroup.detail() + ")" : "lower_others), where they yield to other processes of its "
                    + "CPU cgroup" + (cgroup != null ? " " + cgroup.cgroup() + ", " + cgroup.detail() : ""));
        }
        return "warning: run as now, the gateway may not raise its front door's thread to nice " + want + " (no "
                + "CAP_SYS_NICE), and admission.door_fallback: " + f.name().toLowerCase(java.util.Locale.ROOT)
                + (f == AdmissionPolicy.DoorFallback.AUTO ? " does not lower its other threads "
                + "(its CPU cgroup " + (cgroup == null ? "could not be read" : cgroup.cgroup() + " is shared, "
                + cgroup.detail()) + ")" : "") + ", so the door has no lead: grant the capability (docs/gateway.md, "
                + "Overload), or set door_fallback: lower_others";
    }

    @Override
    public void run() {
        PrintWriter out = spec.commandLine().getOut();
        try {
            Map<String, ConfigNode> top = ConfigNode.load(file).entries();
            if (top.containsKey("routes")) {
                GatewayConfig g = GatewayConfigLoader.load(file);
                out.println(file + ": OK, gateway config with " + (g.routes().size() + g.proxies().size()) + " routes");
                dev.weft.gateway.config.DestinationWarnings.of(g).forEach(w -> out.println("warning: " + w));
                for (RoutePlan r : g.routes()) {
                    // the calls a call waits for, sorted: their set's own order changes from one JVM to the next
                    out.println("  " + r.id() + "  timeout " + Durations.format(r.timeout()) + ", calls in order: "
                            + String.join(", ", r.calls().stream().map(c -> c.needs().isEmpty() ? c.name()
                            : c.name() + " (after " + String.join(", ", new java.util.TreeSet<>(c.needs())) + ")").toList()));
                }
                for (var p : g.proxies()) {
                    out.println("  " + p.id() + "  timeout " + Durations.format(p.timeout()) + ", proxy to " + p.target());
                }
                String budget = dev.weft.gateway.config.DescriptorBudget.check(g, dev.weft.os.Descriptors.limit());
                if (budget != null) {
                    out.println("  warning: " + budget);
                }
                String door = frontDoor(g, dev.weft.os.ThreadNice.current(),
                        dev.weft.os.ThreadNice.mayRaiseTo(g.admission().doorNice()),
                        CpuCgroup.ofThisProcess());
                if (door != null) {
                    out.println("  " + door);
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
                UpstreamConfig s = UpstreamConfig.load(file);
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
