package dev.weft.cli;

import dev.weft.config.ConfigException;
import dev.weft.core.Durations;
import dev.weft.dispatch.DispatchService;
import dev.weft.dispatch.config.DispatchConfig;
import dev.weft.dispatch.config.DispatchConfigLoader;
import dev.weft.dispatch.engine.Replay;
import dev.weft.core.HostPort;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Instant;
import java.time.format.DateTimeParseException;

@Command(name = "replay",
        mixinStandardHelpOptions = true,
        description = {
                "Put one endpoint's dead letters (--from-dlq), or the source records it",
                "matches in a time range (--since/--until, by record timestamp), back on its",
                "wait topic GROUP.wait.ID, due now, with the webhook-ids they had. A running",
                "`weft dispatch` with this config delivers them to that endpoint only (enable",
                "it first if a 410 disabled it). Prints progress every 5 s, then the counts.",
                "",
                "Idempotent: its position is committed under a consumer group named from the",
                "arguments (GROUP.replay.ID.HASH); run again with the same arguments, it",
                "replays only records it had not (with --from-dlq: dead letters written",
                "since). Copies carry the header weft-replay.",
                "",
                "TIME: an ISO-8601 instant (2026-11-22T10:00:00Z), or a duration ago (90m, 2h;",
                "resolved at each run, so not repeatable).",
                ""})
public final class DispatchReplayCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Option(names = "--config", required = true, paramLabel = "FILE", description = "The dispatch config.")
    Path config;

    @Option(names = "--endpoint", required = true, paramLabel = "ID", description = "The endpoint to replay for.")
    String endpoint;

    @Option(names = "--from-dlq", description = "Replay its dead letters from GROUP.dlq (else: source records).")
    boolean fromDlq;

    @Option(names = "--since", paramLabel = "TIME", description = "Records from TIME on (required without --from-dlq).")
    String since;

    @Option(names = "--until", paramLabel = "TIME", description = "Records before TIME (default: up to the end now).")
    String until;

    @Option(names = "--dry-run", description = "Count what would be replayed; write and commit nothing.")
    boolean dryRun;

    @Override
    public void run() {
        PrintWriter out = spec.commandLine().getOut();
        DispatchConfig cfg;
        Instant from;
        Instant to;
        try {
            cfg = DispatchConfigLoader.load(config);
            from = time("--since", since);
            to = time("--until", until);
        } catch (ConfigException e) {
            throw new UserException(e.getMessage(), e, 2);
        }
        String bootstrap = cfg.bootstrap() != null ? cfg.bootstrap() : HostPort.format(DispatchService.DEV_BROKER_LISTEN);
        try {
            Replay.Result r = Replay.run(cfg, bootstrap, endpoint, fromDlq, from, to, dryRun, line -> {
                out.println("weft dispatch replay: " + line);
                out.flush();
            });
            out.println("weft dispatch replay: " + (fromDlq ? cfg.deadLetterTopic() : String.join(", ", cfg.topics()))
                    + (from != null ? " from " + from : "") + (to != null ? " until " + to : "") + ": read " + r.read()
                    + ", for " + endpoint + " " + r.matched() + ", " + (r.dryRun() ? "dry run: nothing written"
                    : "replayed " + r.replayed() + " onto " + cfg.waitTopic(endpoint)) + " (position kept by group "
                    + r.group() + ")");
            out.flush();
        } catch (IOException e) {
            throw new UserException(e.getMessage(), e);
        }
    }

    private static Instant time(String option, String text) {
        if (text == null) {
            return null;
        }
        try {
            return Instant.parse(text);
        } catch (DateTimeParseException notInstant) {
            try {
                return Instant.now().minus(Durations.parse(text));
            } catch (RuntimeException e) {
                throw new UserException(option + " " + text + ": give an ISO-8601 instant such as 2026-11-22T10:00:00Z "
                        + "or a duration ago such as 2h", e, 2);
            }
        }
    }
}
