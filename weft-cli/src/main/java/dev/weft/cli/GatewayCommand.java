package dev.weft.cli;

import dev.weft.core.HostPort;
import dev.weft.config.ConfigException;
import dev.weft.server.ExecutorModel;
import dev.weft.gateway.config.GatewayConfig;
import dev.weft.gateway.config.GatewayConfigLoader;
import dev.weft.gateway.server.Gateway;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;

@Command(name = "gateway",
        mixinStandardHelpOptions = true,
        description = {
                "Serve the routes of a config file: each request runs its route's calls (in parallel, or after the",
                "calls they need), on virtual threads, and answers one composed JSON body.",
                "",
                "Admin: GET /-/health, /-/ready, /-/metrics (Prometheus text), /-/routes (the loaded plans).",
                "Reload: on SIGHUP or when the file changes; a file with errors is refused and the old config",
                "keeps serving. SIGTERM / Ctrl-C: stop taking requests, let those in flight finish (drain_timeout).",
                "",
                "Logs: stderr (--log-level, --log-format). Per request: 'access_log' (one JSON line each) and",
                "W3C traceparent to every backend call; 'tracing.otlp' exports spans (docs/gateway.md, Traces).",
                "",
                "Config format: docs/gateway.md; example: examples/system-a.yaml.",
                ""})
public final class GatewayCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Mixin
    Logging.Options logging;

    @Option(names = "--config", required = true, paramLabel = "FILE", description = "The gateway config (YAML or JSON).")
    Path config;

    @Option(names = "--listen", paramLabel = "HOST:PORT", description = "Overrides the config's listen (default 127.0.0.1:8080).")
    String listen;

    @Option(names = "--executor", paramLabel = "virtual|platform:N",
            description = "Threads that run requests: virtual (default), or a fixed pool of N platform threads with a "
                    + "bounded queue (the seeds' design, for comparisons: the handler code is the same).")
    String executor;

    @Option(names = "--no-watch", description = "Do not reload when the file changes (SIGHUP still reloads).")
    boolean noWatch;

    @Override
    public void run() {
        logging.apply();
        PrintWriter out = spec.commandLine().getOut();
        GatewayConfig cfg;
        try {
            cfg = GatewayConfigLoader.load(config);
        } catch (ConfigException e) {
            throw new UserException(e.getMessage(), e, 2);
        }
        InetSocketAddress addr = null;
        ExecutorModel model = null;
        try {
            if (listen != null) {
                addr = HostPort.parse(listen);
            }
            if (executor != null) {
                model = ExecutorModel.parse(executor);
            }
        } catch (IllegalArgumentException e) {
            throw new UserException(e.getMessage(), e, 2);
        }
        Gateway gw;
        try {
            System.Logger log = System.getLogger("weft.gateway");
            gw = Gateway.start(cfg, addr, model, line -> log.log(line.startsWith("reload refused")
                    ? System.Logger.Level.WARNING : System.Logger.Level.INFO, line));
        } catch (IOException e) {
            throw new UserException(e.getMessage(), e);
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            out.println("weft gateway: draining (up to " + cfg.limits().drainTimeout().toSeconds() + " s) ...");
            out.flush();
            boolean clean = gw.drain();
            out.println(clean ? "weft gateway: stopped" : "weft gateway: stopped; some requests were cut at the drain timeout");
            out.flush();
            stopped.countDown();
        }, "weft-gateway-shutdown"));
        Signals.onHangup(gw::reload);
        if (!noWatch) {
            gw.watchFile(Duration.ofSeconds(1));
        }
        out.println("weft gateway: listening on " + gw.url() + ", " + (cfg.routes().size() + cfg.proxies().size()) + " routes from " + config
                + ", executor " + gw.executor());
        for (var r : cfg.routes()) {
            out.println("  " + r.id() + "  (" + r.calls().size() + " calls, timeout " + dev.weft.core.Durations.format(r.timeout()) + ")");
        }
        for (var p : cfg.proxies()) {
            out.println("  " + p.id() + "  (proxy to " + p.target() + ", timeout " + dev.weft.core.Durations.format(p.timeout()) + ")");
        }
        String admin = gw.adminUrl() != null ? gw.adminUrl() : gw.url();
        out.println("weft gateway: admin " + admin + "/-/routes  " + admin + "/-/metrics; Ctrl-C stops");
        out.flush();
        try {
            stopped.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
