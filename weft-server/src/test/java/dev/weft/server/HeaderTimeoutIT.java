package dev.weft.server;

import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The deadlines of a request's parts over real sockets: a head trickled past header_timeout, a body stopped past
 * body_timeout and an answer the peer does not take for idle_timeout each close their connection (counted), while
 * other connections are served. Each runs through the blocking path and through the front door ({@link Door}).
 */
class HeaderTimeoutIT {
    @Test
    void aHeadTrickledPastTheHeaderTimeoutIsClosedWhileOthersAreServed() throws Exception {
        ServerLimits limits = ServerLimits.DEFAULT.withHeaderTimeout(Duration.ofSeconds(1));
        try (HttpServer server = HttpServer.builder(r -> ServerResponse.json(200, "{}")).limits(limits).start()) {
            trickledHeadIsClosedWhileOthersAreServed(server);
        }
    }

    /** The same through the front door of the adaptive admission ({@link Door}), which reads the head instead. */
    @Test
    void aHeadTrickledPastTheHeaderTimeoutIsClosedByTheFrontDoorToo() throws Exception {
        ServerLimits limits = ServerLimits.DEFAULT.withHeaderTimeout(Duration.ofSeconds(1));
        try (HttpServer server = HttpServer.builder(r -> ServerResponse.json(200, "{}")).limits(limits)
                .admission(DoorIT.admission(java.util.Map.of(), 0, Duration.ZERO)).start()) {
            trickledHeadIsClosedWhileOthersAreServed(server);
        }
    }

    private static void trickledHeadIsClosedWhileOthersAreServed(HttpServer server) throws Exception {
        try (Socket slow = new Socket(InetAddress.getLoopbackAddress(), server.addresses().getFirst().getPort());
             Socket idle = new Socket(InetAddress.getLoopbackAddress(), server.addresses().getFirst().getPort())) {
            slow.setSoTimeout(10_000);
            OutputStream out = slow.getOutputStream();
            byte[] head = "GET /slow HTTP/1.1\r\nHost: x\r\nX-Pad: aaaaaaaaaaaaaaaaaaaa\r\n\r\n"
                    .getBytes(StandardCharsets.US_ASCII);
            long start = System.nanoTime();
            boolean closed = false;
            try {
                for (byte b : head) { // one byte every 200 ms: the whole head would take about 12 s
                    out.write(b);
                    out.flush();
                    Thread.sleep(200); // the trickle under test
                    if (System.nanoTime() - start > 8_000_000_000L) {
                        break;
                    }
                }
                closed = slow.getInputStream().read() < 0;
            } catch (SocketException reset) {
                closed = true; // writing to the closed connection
            }
            assertThat(closed).as("the trickled head's connection was closed").isTrue();
            assertThat(server.headerTimeouts()).isEqualTo(1);

            // a connection that sent nothing is idle, not late: the idle timeout (60 s) is its limit
            idle.setSoTimeout(10_000);
            idle.getOutputStream().write("GET /ok HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            InputStream in = idle.getInputStream();
            byte[] answer = new byte[12];
            assertThat(in.readNBytes(answer, 0, 12)).isEqualTo(12);
            assertThat(new String(answer, StandardCharsets.US_ASCII)).isEqualTo("HTTP/1.1 200");
        }
    }

    /**
     * A connection the sweep closed stays in the listener's table until its thread notices (through the front door,
     * up to a door sweep later, and longer on a loaded machine): each timeout is counted once, not once per sweep.
     */
    @Test
    void aTimeoutIsCountedOnceWhileItsThreadHasNotYetNoticedTheClose() throws Exception {
        java.util.concurrent.atomic.AtomicInteger headerTimeouts = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.CountDownLatch notice = new java.util.concurrent.CountDownLatch(1);
        try (ConnectionListener l = ConnectionListener.builder("sweep-test", (socket, activity) -> {
                    activity.idle();
                    if (socket.getInputStream().read() >= 0) {
                        activity.bytesIn(); // a head has begun and never ends
                    }
                    try {
                        notice.await(); // a thread slow to notice the close, as a loaded machine makes it
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }).maxConnections(10).headerTimeout(Duration.ofMillis(40)).events(new ConnectionListener.Events() {
                    @Override
                    public void headerTimeout() {
                        headerTimeouts.incrementAndGet();
                    }
                }).start();
             Socket s = new Socket(InetAddress.getLoopbackAddress(), l.addresses().getFirst().getPort())) {
            s.getOutputStream().write('G');
            assertThat(closedByThePeer(s)).as("closed at the header timeout").isTrue();
            // the sweep runs every 10 ms here: let it run about 20 times more while the thread has not noticed
            // (this pause is the condition under test, not a wait for state)
            Thread.sleep(200);
            assertThat(headerTimeouts.get()).as("one head, one timeout").isEqualTo(1);
            notice.countDown();
        }
        assertThat(headerTimeouts.get()).isEqualTo(1);
    }

    private static HttpServer server(ServerLimits limits, boolean door, HttpHandler handler) throws Exception {
        List<InetSocketAddress> at = List.of(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        return door ? HttpServer.builder(handler).listen(at).limits(limits)
                .admission(DoorIT.admission(java.util.Map.of(), 0, Duration.ZERO)).start()
                : HttpServer.builder(handler).listen(at).limits(limits).start();
    }

    /** True when the peer closed (or reset) the connection within 10 s. */
    private static boolean closedByThePeer(Socket s) throws Exception {
        s.setSoTimeout(10_000);
        try {
            InputStream in = s.getInputStream();
            byte[] sink = new byte[65536];
            while (true) {
                if (in.read(sink) < 0) {
                    return true;
                }
            }
        } catch (SocketException reset) {
            return true;
        } catch (java.net.SocketTimeoutException open) {
            return false;
        }
    }

    private static void answersOk(HttpServer server) throws Exception {
        try (Socket ok = new Socket(InetAddress.getLoopbackAddress(), server.addresses().getFirst().getPort())) {
            ok.setSoTimeout(10_000);
            ok.getOutputStream().write("GET /ok HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            byte[] answer = new byte[12];
            assertThat(ok.getInputStream().readNBytes(answer, 0, 12)).isEqualTo(12);
            assertThat(new String(answer, StandardCharsets.US_ASCII)).isEqualTo("HTTP/1.1 200");
        }
    }

    @Test
    void aBodyStoppedHalfWayIsClosedAtTheBodyTimeoutWhileOthersAreServed() throws Exception {
        for (boolean door : new boolean[] {false, true}) {
            ServerLimits limits = ServerLimits.DEFAULT.withBodyTimeout(Duration.ofSeconds(1));
            java.util.concurrent.atomic.AtomicInteger handled = new java.util.concurrent.atomic.AtomicInteger();
            try (HttpServer server = server(limits, door, r -> {
                handled.incrementAndGet();
                return ServerResponse.json(200, "{}");
            }); Socket slow = new Socket(InetAddress.getLoopbackAddress(), server.addresses().getFirst().getPort())) {
                // 10 of the 1,000 bytes declared, then nothing: before body_timeout it held the connection for ever
                slow.getOutputStream().write(("POST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n0123456789")
                        .getBytes(StandardCharsets.US_ASCII));
                answersOk(server);
                assertThat(closedByThePeer(slow)).as("the stopped body's connection was closed (door: %s)", door).isTrue();
                assertThat(server.bodyTimeouts()).isEqualTo(1);
                assertThat(handled.get()).as("the cut request reached no handler").isEqualTo(1);
                answersOk(server);
            }
        }
    }

    @Test
    void anAnswerThePeerDoesNotTakeIsClosedAtTheIdleTimeout() throws Exception {
        byte[] big = new byte[32 * 1024 * 1024]; // far more than the socket buffers hold
        for (boolean door : new boolean[] {false, true}) {
            ServerLimits limits = ServerLimits.builder().idleTimeout(Duration.ofSeconds(1)).build();
            try (HttpServer server = server(limits, door, r -> r.path().equals("/big")
                    ? new ServerResponse(200, dev.weft.http.Headers.of("content-type", "application/octet-stream"), big)
                    : ServerResponse.json(200, "{}"));
                 Socket stalled = new Socket()) {
                stalled.setReceiveBufferSize(4096);
                stalled.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), server.addresses().getFirst().getPort()));
                stalled.getOutputStream().write("GET /big HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                // never read: before, the answer's write waited for ever and the connection stayed busy
                await("the answer not taken is closed (door: " + door + ")").atMost(Duration.ofSeconds(15))
                        .pollInterval(Duration.ofMillis(20)).until(() -> server.writeTimeouts() > 0);
                assertThat(server.writeTimeouts()).as("answers not taken, closed (door: %s)", door).isEqualTo(1);
                assertThat(closedByThePeer(stalled)).isTrue();
                answersOk(server);
            }
        }
    }

    @Test
    void aPipelinedHeadBegunInTheBufferIsClosedAtTheHeaderTimeout() throws Exception {
        for (boolean door : new boolean[] {false, true}) {
            ServerLimits limits = ServerLimits.DEFAULT.withHeaderTimeout(Duration.ofSeconds(1));
            try (HttpServer server = server(limits, door, r -> ServerResponse.json(200, "{}"));
                 Socket s = new Socket(InetAddress.getLoopbackAddress(), server.addresses().getFirst().getPort())) {
                // a whole request and the start of the next in one write, then nothing: the second head is already in
                // the server's buffer, so no later read starts its deadline (before: held until idle_timeout, 60 s)
                s.getOutputStream().write("GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHo"
                        .getBytes(StandardCharsets.US_ASCII));
                s.setSoTimeout(10_000);
                byte[] answer = new byte[12];
                assertThat(s.getInputStream().readNBytes(answer, 0, 12)).isEqualTo(12);
                assertThat(new String(answer, StandardCharsets.US_ASCII)).isEqualTo("HTTP/1.1 200");
                assertThat(closedByThePeer(s)).as("the begun head's connection was closed (door: %s)", door).isTrue();
                assertThat(server.headerTimeouts()).isEqualTo(1);
            }
        }
    }
}
