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

/** header_timeout over real sockets: a head trickled past it is closed; a whole request is answered. */
class HeaderTimeoutIT {
    @Test
    void aHeadTrickledPastTheHeaderTimeoutIsClosedWhileOthersAreServed() throws Exception {
        ServerLimits limits = ServerLimits.DEFAULT.withHeaderTimeout(Duration.ofSeconds(1));
        try (HttpServer server = HttpServer.start(List.of(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0)),
                limits, new ExecutorModel.Virtual(), r -> ServerResponse.json(200, "{}"))) {
            trickledHeadIsClosedWhileOthersAreServed(server);
        }
    }

    /** The same through the front door of the adaptive admission ({@link Door}), which reads the head instead. */
    @Test
    void aHeadTrickledPastTheHeaderTimeoutIsClosedByTheFrontDoorToo() throws Exception {
        ServerLimits limits = ServerLimits.DEFAULT.withHeaderTimeout(Duration.ofSeconds(1));
        try (HttpServer server = HttpServer.start(List.of(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0)),
                limits, new ExecutorModel.Virtual(), r -> ServerResponse.json(200, "{}"),
                DoorIT.admission(java.util.Map.of(), 0, Duration.ZERO))) {
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
                    Thread.sleep(200);
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
}
