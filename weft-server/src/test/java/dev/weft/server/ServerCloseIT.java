package dev.weft.server;

import dev.weft.server.admission.FixedAdmission;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** What close() leaves behind, over real sockets. */
class ServerCloseIT {
    /**
     * With a pool of platform threads ({@code executor: platform:N}) a request past the N running ones waits in the
     * pool's queue while its connection's thread waits for its result. close() stops the pool; before, the queued
     * task was dropped without being cancelled, so that thread waited for ever, holding its admission place and its
     * connection.
     */
    @Test
    void aRequestQueuedInThePlatformPoolEndsWhenTheServerCloses() throws Exception {
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch never = new CountDownLatch(1);
        AtomicInteger calls = new AtomicInteger();
        FixedAdmission admission = new FixedAdmission(100, Duration.ofMillis(100));
        HttpServer server = HttpServer.builder(r -> {
                    calls.incrementAndGet();
                    running.countDown();
                    never.await(); // until the pool's thread is interrupted by close()
                    return ServerResponse.json(200, "{}");
                }).executor(new ExecutorModel.Platform(1)).admission(admission).start();
        try (Socket first = new Socket(InetAddress.getLoopbackAddress(), server.addresses().getFirst().getPort());
             Socket second = new Socket(InetAddress.getLoopbackAddress(), server.addresses().getFirst().getPort())) {
            first.getOutputStream().write("GET /a HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            assertThat(running.await(10, TimeUnit.SECONDS)).as("the first request runs on the pool's one thread").isTrue();
            second.getOutputStream().write("GET /b HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            await("the second request waits in the pool's queue").atMost(Duration.ofSeconds(10))
                    .pollInterval(Duration.ofMillis(5)).until(() -> server.inFlight() >= 2);
            assertThat(server.inFlight()).isEqualTo(2);

            server.close();
            await("requests and admission places let go after close").atMost(Duration.ofSeconds(10))
                    .pollInterval(Duration.ofMillis(5)).until(() -> server.inFlight() == 0 && admission.inFlight() == 0);
            assertThat(server.inFlight()).as("requests in flight after close").isZero();
            assertThat(admission.inFlight()).as("admission places held after close").isZero();
            assertThat(calls.get()).as("the queued request never ran").isEqualTo(1);
        } finally {
            server.close();
        }
    }
}
