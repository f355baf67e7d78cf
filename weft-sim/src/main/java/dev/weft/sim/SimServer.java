package dev.weft.sim;

import dev.weft.core.HostPort;

import java.io.IOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The {@code weft upstream} server: a simulated slow backend. One virtual thread per connection,
 * HTTP/1.1 with keep-alive; see {@link Behavior} for what a request can ask for and {@link SimStats}
 * for what it counts. Usable in-process:
 *
 * <pre>{@code
 * try (SimServer sim = SimServer.start(SimConfig.local())) {
 *     String url = sim.url("/b?latency=300ms");
 * }
 * }</pre>
 */
public final class SimServer implements AutoCloseable {
    /** Distinct path+query keys that keep their own turn counter (for seq: values). */
    static final int MAX_TURN_KEYS = 10_000;

    private final SimConfig config;
    private final List<ServerSocket> listeners = new ArrayList<>();
    private final List<InetSocketAddress> addresses = new ArrayList<>();
    private final SimStats stats = new SimStats();
    private final ConcurrentHashMap<Socket, SimConnection> open = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, AtomicLong> turns = new ConcurrentHashMap<>();
    private final AtomicLong overflowTurns = new AtomicLong();
    private volatile boolean closed;

    private SimServer(SimConfig config) {
        this.config = config;
    }

    /**
     * Binds every address of the config and starts accepting.
     *
     * @throws BindException naming the address when one cannot be bound (nothing stays open then)
     */
    public static SimServer start(SimConfig config) throws IOException {
        SimServer s = new SimServer(config);
        try {
            for (InetSocketAddress a : config.listen()) {
                ServerSocket ss = new ServerSocket();
                ss.setReuseAddress(true);
                try {
                    ss.bind(a, 4096);
                } catch (IOException e) {
                    ss.close();
                    BindException be = new BindException("cannot listen on " + HostPort.format(a) + ": "
                            + (e.getMessage() == null ? e.toString() : e.getMessage().toLowerCase(java.util.Locale.ROOT)));
                    be.initCause(e);
                    throw be;
                }
                s.listeners.add(ss);
                s.addresses.add(new InetSocketAddress(a.getAddress(), ss.getLocalPort()));
            }
        } catch (IOException e) {
            s.close();
            throw e;
        }
        for (ServerSocket ss : s.listeners) {
            Thread.ofVirtual().name("weft-sim-accept-" + ss.getLocalPort()).start(() -> s.acceptLoop(ss));
        }
        Thread.ofVirtual().name("weft-sim-idle-sweep").start(s::idleSweep);
        return s;
    }

    private void acceptLoop(ServerSocket ss) {
        while (!closed) {
            Socket socket;
            try {
                socket = ss.accept();
            } catch (IOException e) {
                if (closed || ss.isClosed()) {
                    return;
                }
                // Out of file descriptors, most likely: back off instead of spinning.
                pause(10);
                continue;
            }
            if (stats.connectionsOpen() >= config.maxConnections()) {
                stats.connectionRefused();
                closeQuietly(socket);
                continue;
            }
            stats.connectionOpened();
            SimConnection c = new SimConnection(this, socket);
            open.put(socket, c);
            Thread.ofVirtual().start(() -> {
                try {
                    c.run();
                } finally {
                    open.remove(socket);
                    closeQuietly(socket);
                    stats.connectionClosed();
                }
            });
        }
    }

    /** Closes keep-alive connections that waited longer than the idle timeout for their next request. */
    private void idleSweep() {
        long idleNanos = config.idleTimeout().toNanos();
        long tick = Math.max(10, Math.min(1000, config.idleTimeout().toMillis() / 4));
        while (!closed) {
            pause(tick);
            long now = System.nanoTime();
            open.forEach((socket, c) -> {
                if (c.idle && now - c.lastActive > idleNanos) {
                    closeQuietly(socket);
                }
            });
        }
    }

    SimConfig config() {
        return config;
    }

    /** The turn of this request among those with the same key (path and query). */
    long turn(String key) {
        AtomicLong c = turns.get(key);
        if (c == null) {
            c = turns.size() < MAX_TURN_KEYS ? turns.computeIfAbsent(key, k -> new AtomicLong()) : overflowTurns;
        }
        return c.getAndIncrement();
    }

    void resetTurns() {
        turns.clear();
    }

    /** Bound addresses, in the order of the config (ports resolved when 0 was asked). */
    public List<InetSocketAddress> addresses() {
        return List.copyOf(addresses);
    }

    /** {@code http://host:port} of the first address. */
    public String url() {
        return "http://" + HostPort.format(addresses.getFirst());
    }

    /** {@code http://host:port} + path (with its query). */
    public String url(String pathAndQuery) {
        return url() + pathAndQuery;
    }

    public SimStats stats() {
        return stats;
    }

    /** Stops accepting and closes every connection. */
    @Override
    public void close() {
        closed = true;
        for (ServerSocket ss : listeners) {
            try {
                ss.close();
            } catch (IOException ignored) {
                // closing anyway
            }
        }
        for (Socket s : open.keySet()) {
            closeQuietly(s);
        }
    }

    static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // nothing left to do
        }
    }

    static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
