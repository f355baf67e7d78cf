package dev.weft.dispatch;

import dev.weft.core.Closing;
import dev.weft.core.HostPort;
import dev.weft.config.ConfigException;
import dev.weft.config.FileWatch;
import dev.weft.dispatch.config.DispatchConfig;
import dev.weft.dispatch.config.DispatchConfigLoader;
import dev.weft.dispatch.engine.DispatchException;
import dev.weft.dispatch.engine.Dispatcher;
import dev.weft.dispatch.status.StatusServer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.lang.reflect.InvocationTargetException;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Path;
import java.util.List;
import dev.weft.dispatch.config.EndpointConfig;
import java.util.function.Consumer;

/**
 * A running {@code weft dispatch}: the broker (given, reused, or started), the engine and its status
 * server. Used by the CLI, and as a child process by tests ({@link #main}).
 */
public final class DispatchService implements AutoCloseable {
    /** Where {@code weft kafka} and {@code weft dispatch} keep the development broker by default. */
    public static final Path DEV_BROKER_DIR = Path.of(".weft", "kafka");
    /** Where they run it, and where {@code weft dispatch} looks for a broker when its config names none. */
    public static final InetSocketAddress DEV_BROKER_LISTEN = new InetSocketAddress("127.0.0.1", 9092);
    /** The development broker: weft-devtools, in weft-lab.jar and on the tests' class path, not in weft.jar. */
    private static final String DEV_BROKER_CLASS = "dev.weft.devtools.KafkaBroker";

    private final AutoCloseable ownBroker;
    private final String bootstrap;
    private final Consumer<String> log;
    private final java.util.concurrent.locks.ReentrantLock reloadLock = new java.util.concurrent.locks.ReentrantLock();
    /**
     * The running engine and what it was started from; a reload replaces it whole. {@code retired}: parking topics
     * of earlier configs that this one does not use and still reads (a removed endpoint's wait topic, a retry delay
     * nobody has any more), carried from engine to engine so that no later reload strands them.
     */
    private record Engine(DispatchConfig cfg, Dispatcher dispatcher, PrometheusMeterRegistry registry, String text,
                          java.util.Set<String> retired) {
    }
    private volatile Engine engine;
    private volatile StatusServer status;
    private volatile boolean closed;
    private volatile String lastReloadError;

    private DispatchService(AutoCloseable ownBroker, String bootstrap, Consumer<String> log, Engine engine) {
        this.ownBroker = ownBroker;
        this.bootstrap = bootstrap;
        this.log = log;
        this.engine = engine;
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
        AutoCloseable own = null;
        String bootstrap = cfg.bootstrap();
        if (bootstrap == null) {
            bootstrap = HostPort.format(DEV_BROKER_LISTEN);
            if (listening(DEV_BROKER_LISTEN)) {
                log.accept("no bootstrap in " + cfg.source() + ": using the broker already on " + bootstrap);
            } else {
                own = startDevBroker(cfg, kafkaDir, log);
            }
        }
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        Dispatcher d = null;
        try {
            String token = adminToken(cfg);
            d = Dispatcher.start(cfg, bootstrap, registry, log);
            DispatchService s = new DispatchService(own, bootstrap, log, new Engine(cfg, d, registry, text(cfg),
                    java.util.Set.of()));
            s.status = StatusServer.start(statusAt, () -> s.engine.dispatcher(), () -> s.engine.registry(), token);
            return s;
        } catch (DispatchException | IOException | RuntimeException e) {
            if (d != null) {
                d.close();
            }
            Closing.quietly(own);
            throw e;
        }
    }

    /** The admin token from the environment variable named by {@code admin_token_env}; null when none is named. */
    private static String adminToken(DispatchConfig cfg) throws DispatchException {
        if (cfg.adminTokenEnv() == null) {
            return null;
        }
        String t = System.getenv(cfg.adminTokenEnv());
        if (t == null || t.isBlank()) {
            throw new DispatchException("admin_token_env in " + cfg.source() + " names " + cfg.adminTokenEnv()
                    + ", which is not set (or empty) in the environment; set it, or remove admin_token_env", null);
        }
        return t.strip();
    }

    public Dispatcher dispatcher() {
        return engine.dispatcher();
    }

    // ---- reload -------------------------------------------------------------------------------------

    /**
     * Reads the config file again. A file with errors is refused whole (logged with file:line:column) and the
     * running engine goes on; an unchanged file does nothing; otherwise the engine is replaced: the old one
     * drains (drain_timeout) and commits, the new one starts with the new endpoints, reading the parking topics
     * the new config no longer uses so that a removed endpoint's parked work is dead-lettered ("not in the
     * config any more"). The status listener, admin token and broker stay; 'listen' changes need a restart.
     *
     * @return true when a new config was taken
     */
    public boolean reload() {
        reloadLock.lock();
        try {
            if (closed) {
                return false;
            }
            Engine old = engine;
            Path file = Path.of(old.cfg().source());
            DispatchConfig next;
            String text;
            try {
                text = java.nio.file.Files.readString(file);
                next = DispatchConfigLoader.load(file);
            } catch (ConfigException | IOException e) {
                lastReloadError = e.getMessage();
                log.accept("reload refused, the config loaded before goes on:\n" + e.getMessage());
                return false;
            }
            lastReloadError = null;
            if (text.equals(old.text())) {
                return false;
            }
            if (!next.listen().equals(old.cfg().listen())) {
                log.accept("reload: a 'listen' change takes effect at the next start");
            }
            // what the old engine parked on and what it still read for the configs before it
            java.util.Set<String> retired = new java.util.LinkedHashSet<>(old.cfg().parkingTopics());
            retired.addAll(old.retired());
            retired.removeAll(next.parkingTopics());
            old.dispatcher().close(); // drains and commits: the new engine takes up where it stopped
            PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
            try {
                engine = new Engine(next, Dispatcher.start(next, bootstrap, registry, log, retired), registry, text,
                        java.util.Set.copyOf(retired));
            } catch (DispatchException | RuntimeException e) {
                lastReloadError = e.getMessage();
                log.accept("reload: the new config did not start (" + e.getMessage() + "); starting the old one again");
                try {
                    PrometheusMeterRegistry r2 = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
                    engine = new Engine(old.cfg(), Dispatcher.start(old.cfg(), bootstrap, r2, log, old.retired()), r2,
                            old.text(), old.retired());
                } catch (DispatchException | RuntimeException again) {
                    log.accept("ERROR: the old config did not start again either: " + again.getMessage());
                }
                return false;
            }
            List<String> was = old.cfg().endpoints().stream().map(EndpointConfig::id).toList();
            List<String> now = next.endpoints().stream().map(EndpointConfig::id).toList();
            log.accept("reloaded " + file + ": " + now.size() + " endpoints; added " + now.stream()
                    .filter(i -> !was.contains(i)).toList() + ", removed " + was.stream().filter(i -> !now.contains(i))
                    .toList() + (retired.isEmpty() ? "" : "; reading " + retired + " once more to dead-letter or "
                    + "deliver what is parked there"));
            return true;
        } finally {
            reloadLock.unlock();
        }
    }

    /** Null, or why the last reload was refused or failed. */
    public String lastReloadError() {
        return lastReloadError;
    }

    /** Reloads whenever the config file's modification time or size changes (checked every {@code every}). */
    public void watchFile(java.time.Duration every) {
        FileWatch.start("weft-dispatch-config-watch", () -> Path.of(engine.cfg().source()), every, () -> closed,
                this::reload);
    }

    private static String text(DispatchConfig cfg) {
        try {
            return java.nio.file.Files.readString(Path.of(cfg.source()));
        } catch (IOException | RuntimeException e) {
            return null; // parsed from text (tests): a reload compares against nothing
        }
    }

    /** {@code http://host:port} of the status server. */
    public String statusUrl() {
        return status.url();
    }

    /** Drains and commits, stops the status server, then the broker if this service started it. */
    @Override
    public void close() {
        reloadLock.lock();
        try {
            closed = true;
        } finally {
            reloadLock.unlock();
        }
        engine.dispatcher().close();
        status.close();
        Closing.quietly(ownBroker);
    }

    /**
     * Starts the development broker when weft-devtools is on the class path (weft-lab.jar, tests); the
     * product jar does not carry it (Kafka's broker and Scala are most of a jar's size) and says what to do.
     */
    private static AutoCloseable startDevBroker(DispatchConfig cfg, Path kafkaDir, Consumer<String> log)
            throws DispatchException, IOException {
        String at = HostPort.format(DEV_BROKER_LISTEN);
        Class<?> broker;
        try {
            broker = Class.forName(DEV_BROKER_CLASS);
        } catch (ClassNotFoundException absent) {
            throw new DispatchException("no bootstrap in " + cfg.source() + " and no broker on " + at
                    + ": set 'bootstrap:' to your Kafka, or start the development broker with `weft kafka` "
                    + "(in weft-lab.jar; ./weft runs it)", absent);
        }
        log.accept("no bootstrap in " + cfg.source() + ": starting the development broker on " + at
                + " (data in " + kafkaDir + ") ...");
        try {
            return (AutoCloseable) broker.getMethod("start", Path.class, InetSocketAddress.class)
                    .invoke(null, kafkaDir, DEV_BROKER_LISTEN);
        } catch (InvocationTargetException e) {
            if (e.getCause() instanceof IOException io) {
                throw io;
            }
            throw new IllegalStateException("the development broker failed to start", e.getCause());
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("the development broker cannot be started", e);
        }
    }

    /** Whether something accepts TCP connections at {@code hostPort} (a broker already running there). */
    public static boolean listening(InetSocketAddress hostPort) {
        try (Socket s = new Socket()) {
            s.connect(hostPort, 500);
            return true;
        } catch (IOException e) {
            return false;
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
        try (DispatchService s = start(cfg, HostPort.parse(args[1]), DEV_BROKER_DIR,
                line -> System.err.println("dispatch: " + line))) {
            System.out.println("READY " + s.statusUrl());
            System.out.flush();
            while (System.in.read() >= 0) {
                // run until the parent closes our standard input
            }
        }
    }
}
