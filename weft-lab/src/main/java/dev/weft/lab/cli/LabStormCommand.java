package dev.weft.lab.cli;

import dev.weft.cli.UserException;
import dev.weft.core.Durations;
import dev.weft.lab.Machine;
import dev.weft.lab.StormLab;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;

@Command(name = "storm",
        mixinStandardHelpOptions = true,
        description = {
                "The HTTPS connection storm of issue 13: a gateway route calls three HTTPS backends (weft-upstream, or",
                "Go's net/http with --backends go; a self-signed RSA-2048 certificate, --latency each), another",
                "route three of the same kind over plain HTTP. The Go backends offer h2 and http/1.1 by ALPN, as a Go",
                "server started with ListenAndServeTLS does (WEFT_UPSTREAM_H2=0 in the environment: http/1.1 only), so",
                "a build that speaks HTTP/2 uses it; weft-upstream speaks HTTP/1.1 only.",
                "N clients (closed loop, one connection each) start cold on the plain route, then cold on the HTTPS",
                "route; halfway through the HTTPS phase the backends reset every connection they hold (a restart).",
                "Prints good answers and errors per second, the steady rate, the seconds to reach 90%% of it, the",
                "error share, the gateway's backend calls by outcome, and HTTPS / plain. Then the issue's own",
                "measure: for the HTTPS cold start and for the time after the drop, the seconds until every later",
                "second had < 1%% errors (at least 3 such seconds), and the good answers per second from then on",
                "against the plain steady rate. --before-jar runs an older build's gateway (its weft-lab.jar) the",
                "same way first, in the same run; --go runs the Go aggregation peer after it.",
                ""})
public final class LabStormCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Option(names = "--connections", paramLabel = "N", defaultValue = "2000",
            description = "Clients, each one connection to the gateway. Default: ${DEFAULT-VALUE}.")
    int connections;

    @Option(names = "--latency", paramLabel = "D", defaultValue = "100ms",
            description = "The backends' latency. Default: ${DEFAULT-VALUE}.")
    Duration latency;

    @Option(names = "--plain", paramLabel = "D", defaultValue = "12s",
            description = "Length of the plain-HTTP phase. Default: ${DEFAULT-VALUE}.")
    Duration plain;

    @Option(names = "--https", paramLabel = "D", defaultValue = "24s",
            description = "Length of the HTTPS phase (the drop at its middle). Default: ${DEFAULT-VALUE}.")
    Duration https;

    @Option(names = "--before-jar", paramLabel = "JAR",
            description = "weft-lab.jar of an older build: its gateway runs first, the same way.")
    Path beforeJar;

    @Option(names = "--max-connecting", paramLabel = "N", defaultValue = "0",
            description = "This build's max_connecting for every destination (0: its default). Not given to --before-jar.")
    int maxConnecting;

    @Option(names = "--max-streams", paramLabel = "N", defaultValue = "0",
            description = "This build's max_streams (calls at once on one HTTP/2 connection) for every destination (0: its"
                    + " default, 100). Not given to --before-jar.")
    int maxStreams;

    @Option(names = "--breaker-off",
            description = "Both builds run with the circuit breaker off: the connection storm apart from the breaker.")
    boolean breakerOff;

    @Option(names = "--backends", paramLabel = "sim|go", defaultValue = "sim",
            description = {"What serves the backends: sim (weft-upstream, the JDK's TLS; the default) or go",
                    "(lab/peers/go-upstream, Go's net/http and crypto/tls, built with the machine's Go), as the Go",
                    "HTTPS server issue 13 was first measured against; its TLS costs the shared cores less."})
    String backends;

    @Option(names = "--go",
            description = {"Also run the Go aggregation peer (lab/peers/go, built with the machine's Go; skipped with a",
                    "note where there is none) through both phases, a fresh process per phase: net/http over",
                    "HTTP/1.1, a goroutine per call, a new connection dialled for each call that finds none idle",
                    "(no bound on handshakes at once), TLS sessions resumed, each call's budget 1s, its dial and",
                    "handshake included (the gateway's call_timeout; a gateway call may also wait for a pooled",
                    "connection until the route's 2s deadline, which does not count against its call_timeout)."})
    boolean go;

    @Override
    public void run() {
        PrintWriter out = spec.commandLine().getOut();
        if (connections < 1 || connections > 4000) {
            throw new UserException("--connections must be 1..4000 (the gateway holds one inbound and up to six "
                    + "outbound sockets per client, within 20,000 descriptors)", null, 2);
        }
        if (plain.toSeconds() < 2 || https.toSeconds() < 4 || plain.plus(https).toSeconds() > 120) {
            throw new UserException("--plain must be at least 2s, --https at least 4s, together at most 120s", null, 2);
        }
        if (maxConnecting < 0 || maxConnecting > 10_000) {
            throw new UserException("--max-connecting must be 0..10000", null, 2);
        }
        if (maxStreams < 0 || maxStreams > 10_000) {
            throw new UserException("--max-streams must be 0..10000", null, 2);
        }
        if (!StormLab.BACKENDS.contains(backends)) {
            throw new UserException("--backends must be one of " + String.join(", ", StormLab.BACKENDS) + ", not '"
                    + backends + "'", null, 2);
        }
        if (beforeJar != null && !Files.isRegularFile(beforeJar)) {
            throw new UserException("--before-jar: no such file " + beforeJar, null, 2);
        }
        out.println("command: weft lab storm --connections " + connections + " --latency " + Durations.format(latency)
                + " --plain " + Durations.format(plain) + " --https " + Durations.format(https)
                + (beforeJar != null ? " --before-jar " + beforeJar : "")
                + (maxConnecting > 0 ? " --max-connecting " + maxConnecting : "")
                + (maxStreams > 0 ? " --max-streams " + maxStreams : "") + (breakerOff ? " --breaker-off" : "")
                + (go ? " --go" : "") + (backends.equals("sim") ? "" : " --backends " + backends));
        out.println("machine: " + Machine.describe());
        out.println("started: " + Instant.now());
        out.flush();
        try {
            StormLab.run(new StormLab.Options(connections, latency, plain, https, beforeJar, maxConnecting, maxStreams,
                    breakerOff, go, backends),
                    out,
                    spec.commandLine().getErr());
        } catch (Exception e) {
            throw new UserException("lab storm failed: " + e.getMessage(), e);
        }
    }
}
