package dev.weft.sim;

import dev.weft.core.HostPort;
import dev.weft.server.ConnectionListener;

import java.io.IOException;
import java.net.InetSocketAddress;
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
    private final SimStats stats = new SimStats();
    private final ConcurrentHashMap<String, AtomicLong> turns = new ConcurrentHashMap<>();
    private final AtomicLong overflowTurns = new AtomicLong();
    private ConnectionListener listener;

    private SimServer(SimConfig config) {
        this.config = config;
    }

    /**
     * Binds every address of the config and starts accepting.
     *
     * @throws java.net.BindException naming the address when one cannot be bound (nothing stays open then)
     */
    public static SimServer start(SimConfig config) throws IOException {
        SimServer s = new SimServer(config);
        s.listener = ConnectionListener.start(config.listen(), config.maxConnections(), config.idleTimeout(),
                "weft-sim", (socket, activity) -> new SimConnection(s, socket, activity).run(),
                new ConnectionListener.Events() {
                    @Override
                    public void opened() {
                        s.stats.connectionOpened();
                    }

                    @Override
                    public void closed() {
                        s.stats.connectionClosed();
                    }

                    @Override
                    public void refused() {
                        s.stats.connectionRefused();
                    }
                });
        return s;
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
        return listener.addresses();
    }

    /** {@code http://host:port} of the first address. */
    public String url() {
        return "http://" + HostPort.format(listener.addresses().getFirst());
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
        if (listener != null) {
            listener.close();
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
