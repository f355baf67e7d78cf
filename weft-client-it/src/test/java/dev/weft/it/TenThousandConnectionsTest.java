package dev.weft.it;

import dev.weft.devtools.UpstreamProcess;
import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The simulator holds 10,000 concurrent connections. It runs in a JVM of its own (a process may hold
 * 20,000 file descriptors; both ends in one JVM would need all of them). Every connection sends one
 * request with latency=3s, so all 10,000 are open at once before the first answer comes back.
 */
class TenThousandConnectionsTest {
    @Test
    void holdsTenThousandConcurrentConnections() throws Exception {
        int n = 10_000;
        try (UpstreamProcess sim = UpstreamProcess.start(List.of(new InetSocketAddress("127.0.0.1", 0)));
             ExecutorService vt = Executors.newVirtualThreadPerTaskExecutor()) {
            URI base = URI.create(sim.url());
            byte[] request = ("GET /many?latency=3s&items=1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII);
            List<Future<String>> calls = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                calls.add(vt.submit(() -> {
                    try (Socket s = new Socket()) {
                        s.connect(new InetSocketAddress(base.getHost(), base.getPort()), 30_000);
                        s.setSoTimeout(60_000);
                        OutputStream out = s.getOutputStream();
                        out.write(request);
                        out.flush();
                        InputStream in = s.getInputStream();
                        return new String(in.readAllBytes(), StandardCharsets.US_ASCII);
                    }
                }));
            }
            int ok = 0;
            List<String> bad = new ArrayList<>();
            for (Future<String> f : calls) {
                String answer;
                try {
                    answer = f.get();
                } catch (java.util.concurrent.ExecutionException e) {
                    answer = e.getCause().toString();
                }
                if (answer.startsWith("HTTP/1.1 200 ") && answer.endsWith("\"items\":[{\"id\":1,\"name\":\"item-1\"}]}")) {
                    ok++;
                } else if (bad.size() < 5) {
                    bad.add(answer);
                }
            }
            assertThat(bad).isEmpty();
            assertThat(ok).isEqualTo(n);
        }
    }
}
