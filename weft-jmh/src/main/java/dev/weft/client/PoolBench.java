package dev.weft.client;

import dev.weft.core.Deadline;
import dev.weft.jmh.Defaults;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * The client's pool and a whole call, against a keep-alive server on loopback that answers every request at once:
 * one lease and release of an idle HTTP/1.1 connection; the check of an idle connection for bytes sent unasked
 * (a {@code FIONREAD}); one call end to end (pool, request written, answer read, over the socket).
 */
public class PoolBench extends Defaults {
    private ServerSocket server;
    private Transport transport;
    private ConnectionPool pool;
    private CallRequest request;
    private Connection idle;

    @Setup(Level.Trial)
    public void start() throws IOException {
        server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread.ofVirtual().start(this::serve);
        transport = Transport.builder().build();
        request = CallRequest.get("http://127.0.0.1:" + server.getLocalPort() + "/b/42");
        CallResult first = call();
        if (!first.ok()) {
            throw new IllegalStateException("the loopback server did not answer: " + first);
        }
        pool = transport.runtimeOf(request.destination()).pool();
        idle = pool.idleConnections().getFirst(); // asking it for unasked bytes reads nothing
    }

    @TearDown(Level.Trial)
    public void stop() throws IOException {
        transport.close();
        server.close();
    }

    /** One lease of an idle connection and its release, as each call makes them. */
    @Benchmark
    public Lease leaseRelease() throws IOException {
        Lease l = pool.lease(new Exchange(request), false);
        pool.release(l, true);
        return l;
    }

    /** The check of an idle connection for bytes its server sent unasked (one FIONREAD on a plain socket). */
    @Benchmark
    public boolean unaskedBytesCheck() {
        return idle.hasUnaskedBytes(null);
    }

    /** One call end to end over loopback: the server's share (a virtual thread's read and write) counts too. */
    @Benchmark
    public CallResult call() {
        return transport.call(request, Deadline.in(Duration.ofSeconds(5)));
    }

    private void serve() {
        try {
            while (true) {
                Socket s = server.accept();
                Thread.ofVirtual().start(() -> answer(s));
            }
        } catch (IOException e) {
            // closed: the trial is over
        }
    }

    private static void answer(Socket s) {
        byte[] answer = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 9\r\n\r\n{\"id\":42}"
                .getBytes(StandardCharsets.US_ASCII);
        try (s) {
            s.setTcpNoDelay(true);
            InputStream in = s.getInputStream();
            OutputStream out = s.getOutputStream();
            byte[] buf = new byte[4096];
            int matched = 0;
            int n;
            while ((n = in.read(buf)) > 0) { // GETs only: each CRLFCRLF ends a request
                for (int i = 0; i < n; i++) {
                    matched = buf[i] == "\r\n\r\n".charAt(matched) ? matched + 1 : buf[i] == '\r' ? 1 : 0;
                    if (matched == 4) {
                        matched = 0;
                        out.write(answer);
                    }
                }
                out.flush();
            }
        } catch (IOException e) {
            // the client went away
        }
    }
}
