package dev.weft.client;

import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLSocketFactory;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.UnknownHostException;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * The keep-alive connections of one destination. At most {@code max_connections} are leased at once
 * (a lease waits, within the call's budget, for one to come back); idle ones are reused newest first,
 * and one idle for longer than {@code idle_timeout} is closed instead of reused. A connection is only
 * created when no idle one is left, so the pool holds about {@code max_connections} at most.
 */
final class ConnectionPool implements AutoCloseable {
    /** A lease could not get a connection within its budget. */
    static final class LeaseTimeoutException extends IOException {
        LeaseTimeoutException() {
            super("no pooled connection became free in time (max_connections)");
        }
    }

    private final Destination destination;
    private final DestinationLimits limits;
    private final Semaphore leases;
    private final ConcurrentLinkedDeque<Connection> idle = new ConcurrentLinkedDeque<>();
    private final Set<Connection> open = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    ConnectionPool(Destination destination, DestinationLimits limits) {
        this.destination = destination;
        this.limits = limits;
        this.leases = new Semaphore(limits.maxConnections());
    }

    /**
     * A connection for one exchange: an idle one, or a new one (connected within {@code connectNanos}).
     * {@code exchange} learns the connection's socket before it connects, so that its deadline can abort
     * the connect too.
     *
     * @param fresh do not reuse an idle connection
     */
    Connection lease(Exchange exchange, long budgetNanos, long connectNanos, boolean fresh) throws IOException {
        if (!leases.tryAcquire()) {
            boolean got;
            try {
                got = leases.tryAcquire(Math.max(0, budgetNanos), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new java.io.InterruptedIOException("interrupted while waiting for a connection");
            }
            if (!got) {
                throw new LeaseTimeoutException();
            }
        }
        try {
            if (closed) {
                throw new IOException("the transport is closed");
            }
            if (!fresh) {
                long now = System.nanoTime();
                Connection c;
                while ((c = idle.pollFirst()) != null) {
                    if (!c.isClosed() && now - c.idleSince < limits.idleTimeout().toNanos()) {
                        c.reused = true;
                        return c;
                    }
                    discard(c);
                }
            }
            return connect(exchange, connectNanos);
        } catch (IOException | RuntimeException e) {
            leases.release();
            throw e;
        }
    }

    /** Gives a leased connection back: kept for reuse when {@code reusable}, closed otherwise. */
    void release(Connection c, boolean reusable) {
        try {
            if (reusable && !closed && !c.isClosed()) {
                c.idleSince = System.nanoTime();
                idle.offerFirst(c);
                if (closed && idle.remove(c)) { // closed meanwhile: close() may have missed it
                    discard(c);
                }
            } else {
                discard(c);
            }
        } finally {
            leases.release();
        }
    }

    private Connection connect(Exchange exchange, long connectNanos) throws IOException {
        InetSocketAddress address = new InetSocketAddress(destination.host(), destination.port());
        if (address.isUnresolved()) {
            throw new UnknownHostException(destination.host() + ": no such host");
        }
        Socket raw = new Socket();
        exchange.connecting(raw);
        try {
            raw.setTcpNoDelay(true);
            raw.connect(address, (int) Math.max(1, TimeUnit.NANOSECONDS.toMillis(connectNanos)));
            Socket socket = raw;
            if (destination.scheme().equals("https")) {
                SSLSocket ssl = (SSLSocket) ((SSLSocketFactory) SSLSocketFactory.getDefault())
                        .createSocket(raw, destination.host(), destination.port(), true);
                SSLParameters p = ssl.getSSLParameters();
                p.setEndpointIdentificationAlgorithm("HTTPS");
                ssl.setSSLParameters(p);
                ssl.startHandshake();
                socket = ssl;
            }
            Connection c = new Connection(socket, raw);
            open.add(c);
            if (closed) {
                discard(c);
                throw new IOException("the transport is closed");
            }
            return c;
        } catch (IOException | RuntimeException e) {
            try {
                raw.close();
            } catch (IOException ignored) {
                // the connect failed anyway
            }
            throw e;
        }
    }

    private void discard(Connection c) {
        open.remove(c);
        c.close();
    }

    /** Closes every connection, leased ones too (their exchanges fail at once). */
    @Override
    public void close() {
        closed = true;
        for (Connection c : open) {
            c.abort();
        }
        open.clear();
        idle.clear();
    }
}
