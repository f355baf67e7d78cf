package dev.weft.upstream;

import dev.weft.core.HostPort;
import dev.weft.server.ConnectionListener;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The {@code weft upstream} server: a simulated slow backend. One virtual thread per connection,
 * HTTP/1.1 with keep-alive; see {@link Behavior} for what a request can ask for and {@link UpstreamStats}
 * for what it counts. Usable in-process:
 *
 * <pre>{@code
 * try (UpstreamServer sim = UpstreamServer.start(UpstreamConfig.local())) {
 *     String url = sim.url("/b?latency=300ms");
 * }
 * }</pre>
 */
public final class UpstreamServer implements AutoCloseable {
    /** Distinct path+query keys that keep their own turn counter (for seq: values). */
    static final int MAX_TURN_KEYS = 10_000;

    private final UpstreamConfig config;
    private final UpstreamStats stats = new UpstreamStats();
    private final ConcurrentHashMap<String, AtomicLong> turns = new ConcurrentHashMap<>();
    private final AtomicLong overflowTurns = new AtomicLong();
    private ConnectionListener listener;
    /** HTTPS (null: plain HTTP). */
    private final UpstreamTls tls;
    /** The TCP sockets of the connections open now ({@code POST /-/drop} closes them all). */
    private final java.util.Set<java.net.Socket> sockets = ConcurrentHashMap.newKeySet();

    private UpstreamServer(UpstreamConfig config, UpstreamTls tls) {
        this.config = config;
        this.tls = tls;
    }

    /**
     * Binds every address of the config and starts accepting.
     *
     * @throws java.net.BindException naming the address when one cannot be bound (nothing stays open then)
     */
    public static UpstreamServer start(UpstreamConfig config) throws IOException {
        return start(config, null);
    }

    /**
     * As {@link #start(UpstreamConfig)}, serving HTTPS when {@code tls} is not null (every address of the
     * config; the handshake runs on the connection's own virtual thread).
     */
    public static UpstreamServer start(UpstreamConfig config, UpstreamTls tls) throws IOException {
        UpstreamServer s = new UpstreamServer(config, tls);
        s.listener = ConnectionListener.builder("weft-upstream", (socket, activity) -> s.serve(socket, activity))
                .listen(config.listen()).maxConnections(config.maxConnections()).idleTimeout(config.idleTimeout())
                .events(new ConnectionListener.Events() {
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
                }).start();
        return s;
    }

    private void serve(java.net.Socket raw, ConnectionListener.Activity activity) throws IOException {
        sockets.add(raw);
        try {
            java.net.Socket socket = tls == null ? raw : tls.accept(raw);
            new UpstreamConnection(this, socket, activity).run();
        } finally {
            sockets.remove(raw);
        }
    }

    /**
     * Closes every open connection at once (keeps listening), as a backend restart would: what a client
     * has pooled is gone. The number closed.
     */
    public int dropConnections() {
        int n = 0;
        for (java.net.Socket s : sockets) {
            try {
                s.setSoLinger(true, 0); // a reset, as when the process behind it dies
                s.close();
                n++;
            } catch (IOException ignored) {
                // already gone
            }
        }
        return n;
    }

    /** HTTPS handshake counts; null when serving plain HTTP. */
    public UpstreamTls tls() {
        return tls;
    }

    UpstreamConfig config() {
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

    /** {@code http://host:port} (https when serving TLS) of the first address. */
    public String url() {
        return (tls == null ? "http://" : "https://") + HostPort.format(listener.addresses().getFirst());
    }

    /** {@code http://host:port} + path (with its query). */
    public String url(String pathAndQuery) {
        return url() + pathAndQuery;
    }

    public UpstreamStats stats() {
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
