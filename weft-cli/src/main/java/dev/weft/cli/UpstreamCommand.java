package dev.weft.cli;

import dev.weft.core.HostPort;
import dev.weft.config.ConfigException;
import dev.weft.upstream.UpstreamConfig;
import dev.weft.upstream.UpstreamServer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.LocalTime;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Collectors;

@Command(name = "upstream",
        mixinStandardHelpOptions = true,
        description = {
                "Run simulated slow backends: every path answers a small JSON body after the latency you ask for.",
                "",
                "Query parameters shape each answer (a --config file sets defaults per path):",
                "  latency=200ms | uniform:10ms..1s | lognormal:p50=100ms,p99=1s | seq:2s,0ms (in turn)",
                "  status=503 | seq:503,200     bytes=N (pad body to N bytes)     items=N (default 3)",
                "  fail=0.1 (share of 503s)     retry_after=S (Retry-After header, seconds)",
                "  fault=hang | reset | close | drip     drip=1s (byte interval)     hang=10m (hold time)",
                "",
                "Admin: GET /-/health, GET /-/stats (totals by path and answer, distinct webhook-id values;",
                "?ids=true lists them; with --tls the handshakes: full, resumed, peak in progress), POST /-/reset,",
                "POST /-/drop (resets every open connection, as a backend restart would).",
                "",
                "HTTPS: --tls-cert cert.pem --tls-key key.pem (PEM chain, unencrypted PKCS#8 key; a test pair:",
                "openssl req -x509 -newkey rsa:2048 -nodes -keyout key.pem -out cert.pem -subj /CN=localhost).",
                "",
                "Example:",
                "  weft upstream --listen 127.0.0.1:9001",
                "  curl '127.0.0.1:9001/b?latency=300ms'",
                ""})
public final class UpstreamCommand implements Runnable {
    @Option(names = "--listen", paramLabel = "HOST:PORT[,HOST:PORT...]",
            description = "Addresses to listen on (port 0 picks a free one). Default: the config's listen, "
                    + "else 127.0.0.1:9001.")
    String listen;

    @Option(names = "--config", paramLabel = "FILE",
            description = "YAML file with defaults per path (see examples/system-a-backends.yaml).")
    Path config;

    @Option(names = "--max-connections", paramLabel = "N",
            description = "Connections held at once; more are closed at accept. Default: ${DEFAULT-VALUE}.")
    int maxConnections = UpstreamConfig.DEFAULT_MAX_CONNECTIONS;

    @Option(names = "--tls-cert", paramLabel = "PEM",
            description = "Serve HTTPS with this certificate chain (needs --tls-key).")
    Path tlsCert;

    @Option(names = "--tls-key", paramLabel = "PEM", description = "The private key of --tls-cert (PKCS#8 PEM).")
    Path tlsKey;

    @Option(names = "--quiet", description = "Do not print a line of counts every 10 seconds.")
    boolean quiet;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @picocli.CommandLine.Mixin
    Logging.Options logging;

    @Override
    public void run() {
        logging.apply();
        PrintWriter out = spec.commandLine().getOut();
        UpstreamConfig cfg;
        try {
            cfg = config != null ? UpstreamConfig.load(config) : UpstreamConfig.local()
                    .withListen(List.of(new InetSocketAddress("127.0.0.1", 9001)));
        } catch (ConfigException e) {
            throw new UserException(e.getMessage(), e, 2);
        }
        if (listen != null) {
            try {
                cfg = cfg.withListen(HostPort.parseList(listen));
            } catch (IllegalArgumentException e) {
                throw new UserException("--listen: " + e.getMessage(), e, 2);
            }
        }
        if (maxConnections < 1) {
            throw new UserException("--max-connections must be at least 1", null, 2);
        }
        cfg = new UpstreamConfig(cfg.listen(), cfg.defaults(), cfg.paths(), maxConnections, cfg.idleTimeout());
        if ((tlsCert == null) != (tlsKey == null)) {
            throw new UserException("--tls-cert and --tls-key go together", null, 2);
        }
        dev.weft.upstream.UpstreamTls tls = null;
        if (tlsCert != null) {
            try {
                tls = dev.weft.upstream.UpstreamTls.fromPem(tlsCert, tlsKey);
            } catch (IOException e) {
                throw new UserException(e.getMessage(), e, 2);
            }
        }
        UpstreamServer server;
        try {
            server = UpstreamServer.start(cfg, tls);
        } catch (IOException e) {
            throw new UserException(e.getMessage(), e);
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.close();
            stopped.countDown();
        }, "weft-upstream-shutdown"));
        String urls = server.addresses().stream().map(a -> (tlsCert != null ? "https://" : "http://") + HostPort.format(a))
                .collect(Collectors.joining(", "));
        out.println("weft upstream: listening on " + urls + (config != null ? " (config " + config + ")" : ""));
        out.println("weft upstream: try  curl '" + server.url("/b?latency=300ms") + "'   stats: " + server.url("/-/stats"));
        out.println("weft upstream: Ctrl-C stops");
        out.flush();
        long last = -1;
        try {
            while (!stopped.await(10, java.util.concurrent.TimeUnit.SECONDS)) {
                long now = server.stats().requests();
                if (!quiet && now != last) {
                    out.printf("%s requests=%d aborted=%d open_connections=%s%n",
                            LocalTime.now().truncatedTo(ChronoUnit.SECONDS), now, server.stats().aborted(),
                            server.stats().snapshot(false).get("connections"));
                    out.flush();
                    last = now;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
