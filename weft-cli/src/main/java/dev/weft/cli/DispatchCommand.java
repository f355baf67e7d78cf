package dev.weft.cli;

import dev.weft.core.Durations;
import dev.weft.core.HostPort;
import dev.weft.config.ConfigException;
import dev.weft.dispatch.DispatchService;
import dev.weft.dispatch.config.DispatchConfig;
import dev.weft.dispatch.config.DispatchConfigLoader;
import dev.weft.dispatch.config.EndpointConfig;
import dev.weft.dispatch.engine.DispatchException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.LocalTime;
import java.time.temporal.ChronoUnit;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

@Command(name = "dispatch",
        mixinStandardHelpOptions = true,
        subcommands = {DispatchReplayCommand.class},
        description = {
                "Deliver Kafka records to HTTP endpoints, at least once: every record goes to every endpoint it",
                "matches as a signed POST (Standard Webhooks); each endpoint has its own lane, so a slow or dead one",
                "holds up only itself. Offsets are committed only for records that are done (delivered, parked on",
                "a retry topic, or dead-lettered). Scale out by running more instances with the same group.",
                "",
                "With no 'bootstrap' in the config: uses the broker on 127.0.0.1:9092, or starts `weft kafka`'s.",
                "Status: GET /-/health (liveness: 503 only when the consumer stopped), /-/ready (readiness: 503",
                "once Kafka has not answered for broker_unready_after, or while a delivery is stuck), /-/metrics",
                "(Prometheus text), /-/endpoints. Progress every 10 s.",
                "Admin: POST /-/endpoints/ID/pause|resume|enable. With admin_token_env set, every path but /-/health",
                "and /-/ready needs its bearer token. The",
                "state (paused, disabled after 410, throttled) is kept on the compacted topic GROUP.state.",
                "SIGTERM / Ctrl-C: take no more records, let deliveries in flight finish (drain_timeout), commit.",
                "Reload: on SIGHUP or when the file changes; a file with errors is refused (file:line:column) and",
                "the running config goes on; endpoints may be added, removed (their parked work is dead-lettered)",
                "or changed; the engine drains and restarts in the process (listen needs a restart).",
                "",
                "Logs: stderr (--log-level, --log-format). 'access_log' writes one JSON line per delivery attempt;",
                "every attempt sends a W3C traceparent (the record's trace, a new span per attempt).",
                "",
                "Config format: docs/dispatch.md; example: examples/dispatch.yaml.",
                "`weft dispatch replay --help`: put dead letters or a time range back for one endpoint.",
                ""})
public final class DispatchCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Mixin
    Logging.Options logging;

    // required, but checked in run(): picocli would otherwise ask for it before `weft dispatch replay` too
    @Option(names = "--config", paramLabel = "FILE", description = "The dispatch config (YAML or JSON); required.")
    Path config;

    @Option(names = "--listen", paramLabel = "HOST:PORT",
            description = "The status server; overrides the config's listen (default 127.0.0.1:8090).")
    String listen;

    @Option(names = "--kafka-dir", paramLabel = "DIR",
            description = "Data of the development broker, when one is started (default: ${DEFAULT-VALUE}).")
    Path kafkaDir = DispatchService.DEV_BROKER_DIR;

    @Option(names = "--no-watch", description = "Do not reload when the file changes (SIGHUP still reloads).")
    boolean noWatch;

    @Override
    public void run() {
        logging.apply();
        PrintWriter out = spec.commandLine().getOut();
        DispatchConfig cfg;
        InetSocketAddress at = null;
        if (config == null) {
            throw new UserException("Missing required option: '--config=FILE' (weft dispatch --help)", null, 2);
        }
        try {
            cfg = DispatchConfigLoader.load(config);
            if (listen != null) {
                at = HostPort.parse(listen);
            }
        } catch (ConfigException e) {
            throw new UserException(e.getMessage(), e, 2);
        } catch (IllegalArgumentException e) {
            throw new UserException(e.getMessage(), e, 2);
        }
        DispatchService svc;
        try {
            System.Logger log = System.getLogger("weft.dispatch");
            svc = DispatchService.start(cfg, at, kafkaDir, line -> log.log(line.startsWith("ERROR: ")
                    ? System.Logger.Level.ERROR : System.Logger.Level.INFO, line.replaceFirst("^ERROR: ", "")));
        } catch (DispatchException | IOException e) {
            throw new UserException(e.getMessage(), e);
        }
        Signals.onHangup(svc::reload);
        if (!noWatch) {
            svc.watchFile(java.time.Duration.ofSeconds(1));
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            out.println("weft dispatch: draining (up to " + Durations.format(cfg.drainTimeout()) + ") and committing ...");
            out.flush();
            svc.close();
            out.println("weft dispatch: stopped; " + svc.dispatcher().summary());
            out.flush();
            stopped.countDown();
        }, "weft-dispatch-shutdown"));
        out.println("weft dispatch: group " + cfg.group() + ", topics " + String.join(", ", cfg.topics()) + " on "
                + svc.dispatcher().bootstrap());
        for (EndpointConfig e : cfg.endpoints()) {
            out.println("  " + e.id() + "  " + e.url() + "  (" + e.match() + "; " + e.maxInFlight() + " in flight, timeout "
                    + Durations.format(e.timeout()) + ", " + e.maxAttempts() + " attempts" + (e.secret() != null
                    ? ", signed" : "") + (e.rateLimit() != null ? ", rate_limit " + e.rateLimit() : "")
                    + (e.allowPrivate() ? ", private target allowed" : "") + ")");
        }
        out.println("weft dispatch: retry topics " + cfg.retryDelays().stream().map(cfg::retryTopic).toList()
                + ", dead letters " + cfg.deadLetterTopic());
        out.println("weft dispatch: status " + svc.statusUrl() + "/-/endpoints  " + svc.statusUrl()
                + "/-/metrics; Ctrl-C stops");
        out.flush();
        String last = "";
        try {
            while (!stopped.await(10, TimeUnit.SECONDS)) {
                String failure = svc.dispatcher().failure();
                if (failure != null) {
                    out.println("weft dispatch: the consumer failed: " + failure);
                    out.flush();
                    svc.close();
                    throw new UserException("the consumer failed: " + failure, null);
                }
                String now = svc.dispatcher().summary();
                if (!now.equals(last)) {
                    out.println(LocalTime.now().truncatedTo(ChronoUnit.SECONDS) + " " + now);
                    out.flush();
                    last = now;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
