package dev.weft.os;

import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;
import static org.awaitility.Awaitility.await;

class TcpTableTest {
    @Test
    void aRowIsReadAsTheKernelWritesIt() {
        TcpTable.Entry e = TcpTable.parse(
                "   3: 0100007F:1F90 0200007F:A2C4 01 0000000A:00000002 00:00000000 00000000  1000        0 12345 1");
        assertThat(e.local()).isEqualTo(new InetSocketAddress(InetAddress.getLoopbackAddress(), 8080));
        assertThat(e.remote().getAddress().getHostAddress()).isEqualTo("127.0.0.2");
        assertThat(e.remote().getPort()).isEqualTo(0xA2C4);
        assertThat(e.established()).isTrue();
        assertThat(e.txQueue()).isEqualTo(10);
        assertThat(e.rxQueue()).isEqualTo(2);
        TcpTable.Entry mapped = TcpTable.parse("   0: 0000000000000000FFFF00000100007F:1F90 "
                + "0000000000000000FFFF00000100007F:A2C4 06 00000000:00000000 00:00000000 00000000  1000 0 0 1");
        assertThat(mapped.local().getAddress().getHostAddress()).as("IPv4-mapped, as Java reports it")
                .isEqualTo("127.0.0.1");
        assertThat(mapped.established()).isFalse();
    }

    @Test
    void aConnectedSocketIsListedWithWhatItsPeerHasNotRead() throws Exception {
        assumeTrue(TcpTable.available(), "/proc/net/tcp is Linux's");
        try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
             Socket client = new Socket(InetAddress.getLoopbackAddress(), server.getLocalPort());
             Socket accepted = server.accept()) {
            assertThat(TcpTable.of(client)).get().satisfies(e -> assertThat(e.established()).isTrue());
            client.getOutputStream().write("twelve bytes".getBytes(StandardCharsets.US_ASCII));
            await("the peer's kernel holds the 12 bytes unread").atMost(Duration.ofSeconds(10))
                    .pollInterval(Duration.ofMillis(5))
                    .until(() -> TcpTable.of(accepted).map(TcpTable.Entry::rxQueue), Optional.of(12L)::equals);
            assertThat(TcpTable.of(client)).get().satisfies(e -> assertThat(e.txQueue()).isZero());
        }
    }
}
