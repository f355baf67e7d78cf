package dev.weft.server;

import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The server and its limits are built by name: what is not set keeps its documented default. */
class ServerBuildersTest {
    @Test
    void limitsNotSetKeepTheirDefaults() {
        ServerLimits l = ServerLimits.builder().maxConnections(300).headerTimeout(Duration.ofMillis(500)).build();
        assertThat(l.maxConnections()).isEqualTo(300);
        assertThat(l.headerTimeout()).isEqualTo(Duration.ofMillis(500));
        assertThat(l).isEqualTo(ServerLimits.DEFAULT.withMaxConnections(300).withHeaderTimeout(Duration.ofMillis(500)));
        assertThat(l.toBuilder().build()).isEqualTo(l);
    }

    @Test
    void theDefaultsAreTheDocumentedOnes() {
        ServerLimits d = ServerLimits.builder().build();
        assertThat(d).isEqualTo(ServerLimits.DEFAULT);
        assertThat(d.maxConcurrent()).isEqualTo(10_000);
        assertThat(d.maxWait()).isEqualTo(Duration.ofMillis(100));
        assertThat(d.maxHeadBytes()).isEqualTo(16 * 1024);
        assertThat(d.maxBodyBytes()).isEqualTo(1024 * 1024);
        assertThat(d.idleTimeout()).isEqualTo(Duration.ofSeconds(60));
        assertThat(d.maxConnections()).isEqualTo(16_000);
        assertThat(d.drainTimeout()).isEqualTo(Duration.ofSeconds(10));
        assertThat(d.headerTimeout()).isEqualTo(Duration.ofSeconds(10));
        assertThat(d.bodyTimeout()).isEqualTo(Duration.ofSeconds(30));
    }

    @Test
    void aLimitLeftOutIsNamed() {
        assertThatThrownBy(() -> ServerLimits.builder().idleTimeout(null).build())
                .isInstanceOf(NullPointerException.class).hasMessage("idleTimeout");
    }

    @Test
    void limitsOutOfRangeAreRefusedAtBuild() {
        assertThatThrownBy(() -> ServerLimits.builder().maxHeadBytes(10).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("max_head_bytes at least 256");
        assertThatThrownBy(() -> ServerLimits.builder().bodyTimeout(Duration.ZERO).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("body_timeout");
    }

    @Test
    void aServerBuiltWithItsDefaultsServesOnLoopback() throws Exception {
        try (HttpServer s = HttpServer.builder(r -> ServerResponse.json(200, "{\"path\":\"" + r.path() + "\"}"))
                .limits(ServerLimits.builder().maxBodyBytes(16).build()).start()) {
            assertThat(s.addresses().getFirst().getAddress().isLoopbackAddress()).isTrue();
            assertThat(s.executorModel()).isInstanceOf(ExecutorModel.Virtual.class);
            try (Socket c = new Socket(s.addresses().getFirst().getAddress(), s.addresses().getFirst().getPort())) {
                c.setSoTimeout(10_000);
                c.getOutputStream().write(("POST /big HTTP/1.1\r\nHost: x\r\nContent-Length: 17\r\n\r\n"
                        + "x".repeat(17)).getBytes(StandardCharsets.US_ASCII));
                InputStream in = c.getInputStream();
                String status = new String(in.readNBytes(12), StandardCharsets.US_ASCII);
                assertThat(status).as("its limits: max_body_bytes 16").isEqualTo("HTTP/1.1 413");
            }
        }
        assertThatThrownBy(() -> HttpServer.builder(r -> null).listen(java.util.List.of()))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aListenerBuiltWithItsDefaultsAcceptsOnLoopback() throws Exception {
        java.util.concurrent.CountDownLatch served = new java.util.concurrent.CountDownLatch(1);
        try (ConnectionListener l = ConnectionListener.builder("builder-test", (socket, activity) -> {
            socket.getOutputStream().write('!');
            served.countDown();
        }).start()) {
            assertThat(l.addresses().getFirst().getAddress().isLoopbackAddress()).isTrue();
            try (Socket c = new Socket(l.addresses().getFirst().getAddress(), l.addresses().getFirst().getPort())) {
                c.setSoTimeout(10_000);
                assertThat(c.getInputStream().read()).isEqualTo('!');
            }
            assertThat(served.await(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        }
        assertThatThrownBy(() -> ConnectionListener.builder("x", (socket, activity) -> { }).maxConnections(0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("max_connections");
    }
}
