package dev.weft.dispatch;

import dev.weft.core.HostPort;
import dev.weft.config.ConfigException;
import dev.weft.dispatch.broker.KafkaBroker;
import dev.weft.dispatch.config.DispatchConfig;
import dev.weft.dispatch.config.DispatchConfigLoader;
import dev.weft.dispatch.engine.DispatchException;
import dev.weft.dispatch.engine.Dispatcher;
import dev.weft.dispatch.status.StatusServer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.function.Consumer;

/**
 * A running {@code weft dispatch}: the broker (given, reused, or started), the engine and its status
 * server. Used by the CLI, and as a child process by tests ({@link #main}).
 */
public final class DispatchService implements AutoCloseable {
    private final KafkaBroker ownBroker;
    private final Dispatcher dispatcher;
    private final StatusServer status;

    private DispatchService(KafkaBroker ownBroker, Dispatcher dispatcher, StatusServer status) {
        this.ownBroker = ownBroker;
        this.dispatcher = dispatcher;
        this.status = status;
    }

    /**
     * Starts everything; with no {@code bootstrap} in the config, reuses a broker on 127.0.0.1:9092 or starts
     * the development broker with its data in {@code kafkaDir}. Nothing is left running when it fails.
     *
     * @param listen the status server's address; null: the config's
     */
    public static DispatchService start(DispatchConfig cfg, InetSocketAddress listen, Path kafkaDir,
                                        Consumer<String> log) throws DispatchException, IOException {
        InetSocketAddress statusAt = listen != null ? listen : cfg.listen();
        try (ServerSocket probe = new ServerSocket()) {
            probe.setReuseAddress(true);
            probe.bind(statusAt);
        } catch (IOException e) {
            throw new IOException("cannot listen on " + HostPort.format(statusAt) + " for /-/health, /-/metrics, "
                    + "/-/endpoints (" + e.getMessage() + "); give another address with --listen or 'listen:'", e);
        }
        KafkaBroker own = null;
        String bootstrap = cfg.bootstrap();
        if (bootstrap == null) {
            bootstrap = HostPort.format(KafkaBroker.DEFAULT_LISTEN);
            if (KafkaBroker.listening(KafkaBroker.DEFAULT_LISTEN)) {
                log.accept("no bootstrap in " + cfg.source() + ": using the broker already on " + bootstrap);
            } else {
                log.accept("no bootstrap in " + cfg.source() + ": starting the development broker on " + bootstrap
                        + " (data in " + kafkaDir + ") ...");
                own = KafkaBroker.start(kafkaDir, KafkaBroker.DEFAULT_LISTEN);
            }
        }
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        Dispatcher d = null;
        try {
            d = Dispatcher.start(cfg, bootstrap, registry, log);
            return new DispatchService(own, d, StatusServer.start(statusAt, d, registry));
        } catch (DispatchException | IOException | RuntimeException e) {
            if (d != null) {
                d.close();
            }
            if (own != null) {
                own.close();
            }
            throw e;
        }
    }

    public Dispatcher dispatcher() {
        return dispatcher;
    }

    /** {@code http://host:port} of the status server. */
    public String statusUrl() {
        return status.url();
    }

    /** Drains and commits, stops the status server, then the broker if this service started it. */
    @Override
    public void close() {
        dispatcher.close();
        status.close();
        if (ownBroker != null) {
            ownBroker.close();
        }
    }

    /**
     * A dispatcher in a process of its own (tests kill it with kill -9): {@code DispatchService CONFIG HOST:PORT}.
     * Prints {@code READY <status url>}; stops (draining) when its standard input closes.
     */
    public static void main(String[] args) throws Exception {
        DispatchConfig cfg;
        try {
            cfg = DispatchConfigLoader.load(Path.of(args[0]));
        } catch (ConfigException e) {
            System.err.println(e.getMessage());
            System.exit(2);
            return;
        }
        try (DispatchService s = start(cfg, HostPort.parse(args[1]), KafkaBroker.DEFAULT_DIR,
                line -> System.err.println("dispatch: " + line))) {
            System.out.println("READY " + s.statusUrl());
            System.out.flush();
            while (System.in.read() >= 0) {
                // run until the parent closes our standard input
            }
        }
    }
}
