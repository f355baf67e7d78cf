package dev.weft.server;

import dev.weft.core.Closing;
import dev.weft.os.Descriptors;
import dev.weft.core.HostPort;

import java.io.IOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Binds addresses and serves every accepted connection on a virtual thread of its own; holds at most
 * {@code maxConnections} (more are closed at accept) and closes connections idle longer than
 * {@code idleTimeout}. Connections read with untimed reads: the idle sweep, not a timer per read,
 * ends idle ones. Used by weft-server's {@link HttpServer} and by weft-upstream. Connections are accepted on a virtual
 * thread, or with an {@link Adopter} (the front door) on a platform thread.
 */
public final class ConnectionListener implements AutoCloseable {
    /** Serves one connection until it ends; the socket is closed afterwards. */
    @FunctionalInterface
    public interface Handler {
        void serve(Socket socket, Activity activity) throws IOException;
    }

    /**
     * Told of each accepted connection on the accept thread, before the connection's virtual thread starts: a
     * reader on a selector (the {@link Door}) can take the connection at once instead of after that thread gets
     * a carrier.
     */
    @FunctionalInterface
    public interface Adopter {
        void accepted(java.nio.channels.SocketChannel channel, Activity activity) throws IOException;
    }

    /** Optional callbacks for counting. */
    public interface Events {
        default void opened() {
        }

        default void closed() {
        }

        default void refused() {
        }

        /** A connection was closed because its request head did not arrive within the header timeout. */
        default void headerTimeout() {
        }

        /** A connection was closed because its request body did not arrive in time ({@link Activity#body}). */
        default void bodyTimeout() {
        }

        /** A connection was closed because its peer did not take an answer in time ({@link Activity#writing}). */
        default void writeTimeout() {
        }

        /** A connection was accepted on the reserve descriptor and closed at once: the process is out of descriptors. */
        default void shedNoDescriptors() {
        }

        /**
         * At most once a second while accept fails for lack of descriptors: {@code shed} connections closed at
         * accept since the last call, {@code open} connections held.
         */
        default void outOfDescriptors(long shed, int open, String error) {
        }
    }

    /**
     * What a connection tells the idle sweep: call {@link #idle()} before waiting for a request, {@link #busy()} after;
     * while busy, {@link #body} before reading a request's body and {@link #writing} while an answer waits for the peer
     * to take it, so that a peer that stops sending a body or stops reading an answer does not hold the connection
     * (and the thread blocked on it) for ever.
     */
    public static final class Activity {
        private static final int BODY = 1;
        private static final int WRITE = 2;
        private volatile long lastActive = System.nanoTime();
        private volatile boolean idle = true;
        /** When the first byte of the request head now being read arrived ({@link System#nanoTime()}), or 0. */
        private volatile long headStarted;
        /** While busy: when the body being read or the answer being written must be done ({@code nanoTime}), or 0. */
        private volatile long busyUntil;
        private volatile int busyFor;
        /**
         * The sweep has closed this connection (and counted why): its entry stays until the connection's thread
         * notices, which through the front door takes up to a door sweep and longer on a loaded machine; later
         * sweeps must not count the same timeout again.
         */
        private volatile boolean swept;

        public void idle() {
            lastActive = System.nanoTime();
            headStarted = 0;
            busyUntil = 0;
            idle = true;
        }

        public void busy() {
            idle = false;
            headStarted = 0;
            busyUntil = 0;
        }

        /** A request body is read from now on: the sweep closes the connection if it is not all in within {@code timeout}. */
        public void body(Duration timeout) {
            until(timeout, BODY);
        }

        /**
         * An answer is written from now on (or has taken more of it): the sweep closes the connection if the peer
         * takes no more of it within {@code timeout}. Each call starts the time again.
         */
        public void writing(Duration timeout) {
            until(timeout, WRITE);
        }

        private void until(Duration timeout, int why) {
            long t = System.nanoTime() + timeout.toNanos();
            busyFor = why;
            busyUntil = t == 0 ? 1 : t;
        }

        /** Bytes arrived: while waiting for a request, the head has begun and its deadline runs. */
        public void bytesIn() {
            if (idle && headStarted == 0) {
                long now = System.nanoTime();
                headStarted = now == 0 ? 1 : now;
            }
        }
    }

    private final List<ServerSocket> sockets = new ArrayList<>();
    private final List<InetSocketAddress> addresses = new ArrayList<>();
    private final ConcurrentHashMap<Socket, Activity> open = new ConcurrentHashMap<>();
    private final int maxConnections;
    private final Duration idleTimeout;
    /** A head begun longer ago than this closes its connection; null: no such limit. */
    private final Duration headerTimeout;
    private final Handler handler;
    private final Events events;
    /** Null: no adopter (and plain sockets). */
    private final Adopter adopter;
    private volatile boolean accepting = true;
    private volatile boolean closeIdleAtOnce;
    private volatile boolean closed;
    /**
     * A descriptor kept open to be given up when accept fails for lack of descriptors: with it the waiting
     * connection is accepted and closed at once (shed) instead of hanging in the backlog. Null where
     * /dev/null cannot be opened.
     */
    private java.nio.channels.FileChannel reserve = openReserve();
    private final java.util.concurrent.locks.ReentrantLock shedLock = new java.util.concurrent.locks.ReentrantLock();
    private long shedSinceReport;
    private final dev.weft.core.OncePer report = new dev.weft.core.OncePer(Duration.ofSeconds(1));

    private ConnectionListener(int maxConnections, Duration idleTimeout, Duration headerTimeout, Handler handler,
                               Events events, Adopter adopter) {
        this.maxConnections = maxConnections;
        this.idleTimeout = idleTimeout;
        this.headerTimeout = headerTimeout;
        this.handler = handler;
        this.events = events;
        this.adopter = adopter;
    }

    /**
     * A listener that gives each accepted connection to {@code handler} on a virtual thread of its own, to be
     * configured by name and started: by default on an ephemeral port of the loopback address, at most 16,000
     * connections ({@link ServerLimits#DEFAULT}'s {@code maxConnections}), an idle connection closed after 60 s (its
     * {@code idleTimeout}), no header timeout, nobody told of its events and no adopter.
     *
     * @param name the prefix of its threads' names
     */
    public static Builder builder(String name, Handler handler) {
        return new Builder(name, handler);
    }

    /** What a listener binds, how many connections it holds, when it closes them and whom it tells. */
    public static final class Builder {
        private final String name;
        private final Handler handler;
        private List<InetSocketAddress> listen =
                List.of(new InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), 0));
        private int maxConnections = ServerLimits.DEFAULT.maxConnections();
        private Duration idleTimeout = ServerLimits.DEFAULT.idleTimeout();
        private Duration headerTimeout;
        private Events events;
        private Adopter adopter;

        private Builder(String name, Handler handler) {
            this.name = java.util.Objects.requireNonNull(name, "name");
            this.handler = java.util.Objects.requireNonNull(handler, "handler");
        }

        /** The addresses to bind, each a socket of its own (at least one). */
        public Builder listen(List<InetSocketAddress> addresses) {
            if (addresses.isEmpty()) {
                throw new IllegalArgumentException("a listener listens on at least one address");
            }
            this.listen = List.copyOf(addresses);
            return this;
        }

        /** Connections held at once; more are closed at accept (and {@link Events#refused()} told). */
        public Builder maxConnections(int n) {
            if (n < 1) {
                throw new IllegalArgumentException("max_connections must be at least 1");
            }
            this.maxConnections = n;
            return this;
        }

        /** A connection idle for this long is closed. */
        public Builder idleTimeout(Duration d) {
            this.idleTimeout = java.util.Objects.requireNonNull(d, "idleTimeout");
            return this;
        }

        /**
         * A connection whose request head began longer ago than this (see {@link Activity#bytesIn()}) is closed;
         * null (the default) for no such limit.
         */
        public Builder headerTimeout(Duration d) {
            this.headerTimeout = d;
            return this;
        }

        /** Who is told of connections opened, closed, refused and timed out. Null (the default): nobody. */
        public Builder events(Events events) {
            this.events = events;
            return this;
        }

        /**
         * Non-null: every accepted {@link Socket} has a {@link java.nio.channels.SocketChannel}
         * ({@link Socket#getChannel()}), connections are accepted on a platform thread (not behind the work on the
         * carriers), and {@code adopter} is told of each there, with TCP_NODELAY already set, before the handler runs
         * on the connection's virtual thread. Null (the default): plain sockets, accepted on a virtual thread.
         */
        public Builder adopter(Adopter adopter) {
            this.adopter = adopter;
            return this;
        }

        /**
         * Binds every address and starts accepting.
         *
         * @throws BindException naming the address when one cannot be bound (nothing stays open then)
         */
        public ConnectionListener start() throws IOException {
            return ConnectionListener.start(listen, maxConnections, idleTimeout, headerTimeout, name, handler, events,
                    adopter);
        }
    }

    private static ConnectionListener start(List<InetSocketAddress> listen, int maxConnections, Duration idleTimeout,
                                            Duration headerTimeout, String name, Handler handler, Events events,
                                            Adopter adopter) throws IOException {
        boolean channels = adopter != null;
        ConnectionListener l = new ConnectionListener(maxConnections, idleTimeout, headerTimeout, handler,
                events == null ? new Events() { } : events, adopter);
        try {
            for (InetSocketAddress a : listen) {
                ServerSocket ss = channels ? java.nio.channels.ServerSocketChannel.open().socket() : new ServerSocket();
                ss.setReuseAddress(true);
                try {
                    ss.bind(a, 4096);
                } catch (IOException e) {
                    ss.close();
                    BindException be = new BindException("cannot listen on " + HostPort.format(a) + ": "
                            + (e.getMessage() == null ? e.toString() : e.getMessage().toLowerCase(Locale.ROOT)));
                    be.initCause(e);
                    throw be;
                }
                l.sockets.add(ss);
                l.addresses.add(new InetSocketAddress(a.getAddress(), ss.getLocalPort()));
            }
        } catch (IOException e) {
            l.close();
            throw e;
        }
        for (ServerSocket ss : l.sockets) {
            (channels ? Thread.ofPlatform().daemon() : Thread.ofVirtual())
                    .name(name + "-accept-" + ss.getLocalPort()).start(() -> l.acceptLoop(ss));
        }
        Thread.ofVirtual().name(name + "-idle-sweep").start(l::idleSweep);
        return l;
    }

    private void acceptLoop(ServerSocket ss) {
        while (accepting) {
            Socket socket;
            try {
                socket = ss.accept();
            } catch (IOException e) {
                if (!accepting || ss.isClosed()) {
                    return;
                }
                if (Descriptors.exhausted(e)) {
                    shed(ss, e);
                } else {
                    pause(10); // back off instead of spinning
                }
                continue;
            }
            if (open.size() >= maxConnections || !accepting) {
                events.refused();
                Closing.quietly(socket);
                continue;
            }
            Activity activity = new Activity();
            open.put(socket, activity);
            events.opened();
            try {
                serveOnItsThread(socket, activity);
            } catch (RuntimeException | Error e) {
                // no thread serves it (out of memory, say): let it go, and keep accepting
                open.remove(socket);
                Closing.quietly(socket);
                events.closed();
                pause(10);
            }
        }
    }

    /** Hands an accepted connection to the adopter, if any, and to a virtual thread of its own. */
    private void serveOnItsThread(Socket socket, Activity activity) {
        boolean adopted = false;
        if (adopter != null) {
            try {
                socket.setTcpNoDelay(true);
                adopter.accepted(socket.getChannel(), activity);
                adopted = true;
            } catch (IOException e) {
                // closed already: the connection's thread below finds out and ends it
            }
        }
        boolean noDelaySet = adopted;
        Thread.ofVirtual().start(() -> {
            try {
                if (!noDelaySet) {
                    socket.setTcpNoDelay(true);
                }
                handler.serve(socket, activity);
            } catch (IOException e) {
                // the peer went away or reset the connection
            } finally {
                open.remove(socket);
                Closing.quietly(socket);
                events.closed();
            }
        });
    }

    /** Out of descriptors: gives up the reserve, accepts the waiting connection, closes it, takes the reserve back. */
    private void shed(ServerSocket ss, IOException error) {
        shedLock.lock(); // one reserve for every accept loop of this listener
        try {
            shedLocked(ss, error);
        } finally {
            shedLock.unlock();
        }
    }

    private void shedLocked(ServerSocket ss, IOException error) {
        java.nio.channels.FileChannel r = reserve != null ? reserve : openReserve();
        reserve = null;
        if (r != null) {
            Closing.quietly(r);
            try {
                Socket s = ss.accept();
                s.setSoLinger(true, 0); // a reset: the client fails at once instead of waiting
                Closing.quietly(s);
                shedSinceReport++;
                events.shedNoDescriptors();
            } catch (IOException ignored) {
                // gone, or still no descriptor for it
            }
        }
        if (report.due()) {
            try { // with the reserve given up, the report itself has a descriptor to count with
                events.outOfDescriptors(shedSinceReport, open.size(), error.getMessage());
            } catch (RuntimeException | Error e) {
                // a report must not end the accept loop
            }
            shedSinceReport = 0;
        }
        reserve = openReserve();
        if (reserve == null) {
            pause(10); // nothing to shed with: back off instead of spinning
        }
    }

    private static java.nio.channels.FileChannel openReserve() {
        try {
            return java.nio.channels.FileChannel.open(java.nio.file.Path.of("/dev/null"));
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    private void idleSweep() {
        long idleNanos = idleTimeout.toNanos();
        long headNanos = headerTimeout == null ? Long.MAX_VALUE : headerTimeout.toNanos();
        long shortest = headerTimeout == null ? idleTimeout.toMillis()
                : Math.min(idleTimeout.toMillis(), headerTimeout.toMillis());
        long tick = Math.max(10, Math.min(1000, shortest / 4));
        while (!closed) {
            pause(closeIdleAtOnce ? 10 : tick);
            long now = System.nanoTime();
            open.forEach((socket, a) -> {
                if (a.swept) {
                    return;
                }
                if (!a.idle) {
                    long until = a.busyUntil;
                    if (until != 0 && now - until > 0) {
                        if (a.busyFor == Activity.BODY) {
                            events.bodyTimeout();
                        } else {
                            events.writeTimeout();
                        }
                        a.swept = true;
                        Closing.quietly(socket);
                    }
                    return;
                }
                long head = a.headStarted;
                if (head != 0 && now - head > headNanos) {
                    events.headerTimeout();
                    a.swept = true;
                    Closing.quietly(socket);
                } else if (head == 0 && (closeIdleAtOnce || now - a.lastActive > idleNanos)) {
                    Closing.quietly(socket);
                }
            });
        }
    }

    public List<InetSocketAddress> addresses() {
        return List.copyOf(addresses);
    }

    /** Stops accepting and from now on closes every connection as soon as it is idle. */
    public void stopAccepting() {
        accepting = false;
        closeIdleAtOnce = true;
        for (ServerSocket ss : sockets) {
            Closing.quietly(ss);
        }
    }

    /** Stops accepting and closes every connection. */
    @Override
    public void close() {
        closed = true;
        stopAccepting();
        for (Socket s : open.keySet()) {
            Closing.quietly(s);
        }
        java.nio.channels.FileChannel r = reserve;
        if (r != null) {
            Closing.quietly(r);
        }
    }

    /**
     * Connections with a request read and its answer not yet written in full (busy): a drain waits for these, since
     * a handler that has returned may still have its answer on the way (the front door writes it on its own thread,
     * as the socket takes it).
     */
    public int busy() {
        int n = 0;
        for (Activity a : open.values()) {
            if (!a.idle) {
                n++;
            }
        }
        return n;
    }

    static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
