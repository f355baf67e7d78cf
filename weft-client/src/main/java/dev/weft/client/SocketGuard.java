package dev.weft.client;

import java.io.IOException;
import java.net.Socket;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * Closes a socket at a deadline unless {@link #done} came first: a virtual thread per guard, parked until then. It
 * bounds as a whole what a socket timeout bounds only per read: a TLS handshake (at most {@code max_connecting} at
 * once), and the probe of a TLS connection that never served an exchange, which reads a whole TLS record before it
 * returns, however slowly the server sends it.
 *
 * <p>Not on the path of an ordinary exchange: the watchdog ({@link Watchdog}) enforces an exchange's deadline once it
 * holds a connection, with no thread per call.
 */
final class SocketGuard {
    private final Socket socket;
    private final long until;
    /** 0 while the guarded work runs, 1 once done, 2 once the guard closed the socket. */
    private final AtomicInteger state = new AtomicInteger();
    private final Thread thread;

    /**
     * @param socket the socket to close (the TCP socket: closing it fails a read or write blocked on it at once)
     * @param until  when, a {@link System#nanoTime()} value
     * @param name   the guard thread's name
     */
    SocketGuard(Socket socket, long until, String name) {
        this.socket = socket;
        this.until = until;
        this.thread = Thread.ofVirtual().name(name).start(this::watch);
    }

    private void watch() {
        long left;
        while (state.get() == 0 && (left = until - System.nanoTime()) > 0) {
            LockSupport.parkNanos(this, left);
        }
        if (state.compareAndSet(0, 2)) {
            try {
                socket.close();
            } catch (IOException ignored) {
                // closing is all we wanted
            }
        }
    }

    /**
     * The guarded work is over: whether it was in time (false: the guard closed the socket, or is closing it). Call
     * it on every way out; later calls answer the same.
     */
    boolean done() {
        if (state.compareAndSet(0, 1)) {
            LockSupport.unpark(thread);
            return true;
        }
        return state.get() == 1;
    }
}
