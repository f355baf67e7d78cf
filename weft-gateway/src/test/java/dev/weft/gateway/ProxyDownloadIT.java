package dev.weft.gateway;

import com.sun.net.httpserver.HttpServer;
import dev.weft.gateway.config.GatewayConfigLoader;
import dev.weft.gateway.server.Gateway;
import dev.weft.upstream.UpstreamConfig;
import dev.weft.upstream.UpstreamServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Downloads through a {@code proxy:} route with {@code stream_answers: true} (docs/gateway.md, Proxy routes): a large
 * answer streams as it comes, over HTTP/1.1 and HTTP/2, past the destination's held-body bound but within the route's
 * {@code max_body}; a small one is held. Against weft-upstream (and through a second gateway, an HTTP/2 backend), and a
 * JDK HttpServer that sends half an answer, then waits, over loopback.
 */
class ProxyDownloadIT {
    private UpstreamServer sim;
    private HttpServer halves;
    /** Released by the test once it has the first half of the answer through the gateway. */
    private final CountDownLatch secondHalf = new CountDownLatch(1);
    private Gateway gw;
    /** A second gateway, the front one's HTTP/2 (h2c) backend, relaying to weft-upstream. */
    private Gateway h2Backend;

    @TempDir
    Path dir;

    @BeforeEach
    void start() throws Exception {
        sim = UpstreamServer.start(UpstreamConfig.local());
        halves = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        halves.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        halves.createContext("/", ex -> {
            ex.getResponseHeaders().add("Content-Type", "application/octet-stream");
            ex.sendResponseHeaders(200, 0); // chunked: no declared length
            OutputStream out = ex.getResponseBody();
            byte[] half = new byte[512 * 1024];
            out.write(half);
            out.flush();
            try {
                if (!secondHalf.await(20, TimeUnit.SECONDS)) {
                    ex.close();
                    return;
                }
            } catch (InterruptedException e) {
                return;
            }
            out.write(half);
            ex.close();
        });
        halves.start();
        Path b = dir.resolve("backend.yaml");
        Files.writeString(b, """
                routes:
                  - prefix: /
                    proxy: "SIM/"
                    max_body: 8MiB
                """.replace("SIM/", sim.url() + "/"));
        h2Backend = Gateway.start(GatewayConfigLoader.load(b), new InetSocketAddress("127.0.0.1", 0), null, line -> { });
        Path f = dir.resolve("gw.yaml");
        Files.writeString(f, """
                http2: { upgrade: true }
                destinations:
                  "H2":
                    http2: h2c
                    max_body: 64KiB
                routes:
                  - prefix: /h2/
                    proxy: "H2/"
                    stream_answers: true
                    max_body: 32MiB
                    timeout: 20s
                  - prefix: /dl/
                    proxy: "SIM/"
                    stream_answers: true
                    max_body: 32MiB
                    timeout: 20s
                  - prefix: /halves/
                    proxy: "HALVES/"
                    stream_answers: true
                    max_body: 32MiB
                    timeout: 20s
                  - prefix: /small/
                    proxy: "HALVES/"
                    stream_answers: true
                    max_body: 600KiB
                    timeout: 20s
                  - prefix: /held/
                    proxy: "SIM/"
                    max_body: 32MiB
                    timeout: 20s
                """.replace("SIM/", sim.url() + "/")
                .replace("HALVES/", "http://127.0.0.1:" + halves.getAddress().getPort() + "/")
                .replace("H2", "http://127.0.0.1:" + h2Backend.address().getPort()));
        gw = Gateway.start(GatewayConfigLoader.load(f), new InetSocketAddress("127.0.0.1", 0), null, line -> { });
    }

    @AfterEach
    void stop() {
        secondHalf.countDown();
        if (gw != null) {
            gw.close();
        }
        if (h2Backend != null) {
            h2Backend.close();
        }
        sim.close();
        halves.stop(0);
    }

    private HttpClient client(HttpClient.Version version) throws Exception {
        HttpClient c = HttpClient.newBuilder().version(version).build();
        if (version == HttpClient.Version.HTTP_2) {
            HttpResponse<String> first = c.send(HttpRequest.newBuilder(URI.create(gw.url() + "/dl/warm")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(first.version()).as("upgraded to h2c").isEqualTo(HttpClient.Version.HTTP_2);
        }
        return c;
    }

    private HttpRequest get(String path) {
        return HttpRequest.newBuilder(URI.create(gw.url() + path)).timeout(Duration.ofSeconds(20)).build();
    }

    @ParameterizedTest
    @EnumSource(HttpClient.Version.class)
    void aDownloadLargerThanTheDestinationHoldsStreamsWhole(HttpClient.Version version) throws Exception {
        // 20 MB: over weft-client's held-body bound of 10 MiB, within the route's max_body of 32 MiB
        try (HttpClient c = client(version)) {
            HttpResponse<byte[]> r = c.send(get("/dl/file?bytes=20000000"), HttpResponse.BodyHandlers.ofByteArray());
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.version()).isEqualTo(version);
            assertThat(r.body()).hasSize(20_000_000);
        }
    }

    @ParameterizedTest
    @EnumSource(HttpClient.Version.class)
    void aDownloadFromAnHttp2BackendIsWholePastTheDestinationsHeldBound(HttpClient.Version version) throws Exception {
        // the destination holds at most 64 KiB; DATA that comes before the relay decides to stream must not be
        // dropped against that bound (the answer would end cleanly, short)
        try (HttpClient c = client(version)) {
            for (int i = 0; i < 3; i++) {
                HttpResponse<byte[]> r = c.send(get("/h2/file?bytes=3000000"), HttpResponse.BodyHandlers.ofByteArray());
                assertThat(r.statusCode()).as("run %d", i).isEqualTo(200);
                assertThat(r.body()).as("run %d", i).hasSize(3_000_000);
            }
        }
    }

    @Test
    void theSameDownloadIsA502OnARouteThatHoldsAnswers() throws Exception {
        try (HttpClient c = client(HttpClient.Version.HTTP_1_1)) {
            HttpResponse<String> r = c.send(get("/held/file?bytes=20000000"), HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).isEqualTo(502);
            assertThat(r.body()).contains("too-large");
        }
    }

    @ParameterizedTest
    @EnumSource(HttpClient.Version.class)
    void theFirstHalfReachesTheClientBeforeTheBackendSendsTheSecond(HttpClient.Version version) throws Exception {
        try (HttpClient c = client(version)) {
            HttpResponse<InputStream> r = c.send(get("/halves/x"), HttpResponse.BodyHandlers.ofInputStream());
            assertThat(r.statusCode()).isEqualTo(200);
            try (InputStream in = r.body()) {
                // held, nothing would come before the backend's end, which waits for this read
                assertThat(in.readNBytes(512 * 1024)).hasSize(512 * 1024);
                secondHalf.countDown();
                assertThat(in.readAllBytes()).hasSize(512 * 1024);
            }
        }
    }

    @Test
    void aDownloadThatGrowsPastMaxBodyIsCutNeverWhole() throws Exception {
        secondHalf.countDown(); // 1 MiB of no declared length, through a route of max_body 600 KiB
        try (HttpClient c = client(HttpClient.Version.HTTP_1_1)) {
            HttpResponse<InputStream> r = c.send(get("/small/x"), HttpResponse.BodyHandlers.ofInputStream());
            assertThat(r.statusCode()).isEqualTo(200);
            assertThatThrownBy(() -> {
                try (InputStream in = r.body()) {
                    in.readAllBytes();
                }
            }).as("the chunked answer ends without its last chunk").isInstanceOf(IOException.class);
        }
    }

    @Test
    void aSmallAnswerIsHeldAndKeepsItsConnection() throws Exception {
        try (HttpClient c = client(HttpClient.Version.HTTP_1_1)) {
            HttpResponse<String> r = c.send(get("/dl/small"), HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.headers().firstValue("content-length")).isPresent();
            assertThat(r.headers().firstValue("transfer-encoding")).isEmpty();
            assertThat(r.headers().firstValue("connection")).isEmpty();
        }
    }
}
