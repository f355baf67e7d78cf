package dev.weft.it;

import dev.weft.client.CallRequest;
import dev.weft.client.CallResult;
import dev.weft.client.DestinationConfig;
import dev.weft.client.DestinationLimits;
import dev.weft.client.TlsOptions;
import dev.weft.client.Transport;
import dev.weft.client.policy.RetryPolicy;
import dev.weft.core.tls.Pem;
import dev.weft.devtools.TestCerts;
import dev.weft.server.HttpServer;
import dev.weft.server.ServerResponse;
import dev.weft.server.ServerTls;
import dev.weft.server.admission.FixedAdmission;
import dev.weft.server.http2.Http2Limits;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Weft's own server speaking HTTP/2 (h2 by ALPN over TLS) to clients that are not its own codec: the JDK's
 * {@link HttpClient} and weft-client's Transport, many streams at once on one connection, the handler the same
 * {@link dev.weft.server.HttpHandler} as over HTTP/1.1. Nothing here asserts speed.
 */
class Http2InboundIT {
    @TempDir
    static Path dir;
    static TestCerts certs;

    private HttpServer server;
    private final AtomicInteger running = new AtomicInteger();
    private final AtomicInteger peak = new AtomicInteger();

    @BeforeAll
    static void certs() throws Exception {
        certs = TestCerts.selfSigned(dir);
    }

    @AfterEach
    void stop() {
        if (server != null) {
            server.close();
        }
    }

    /** GET /sleep?ms=N answers after N ms; POST answers the body's length. */
    private String start() throws Exception {
        ServerTls tls = ServerTls.start(() -> Pem.serverContext(certs.cert(), certs.key()), List.of(), null, m -> { });
        server = HttpServer.builder(r -> {
                    int now = running.incrementAndGet();
                    peak.accumulateAndGet(now, Math::max);
                    try {
                        if (r.method().equals("POST")) {
                            return ServerResponse.json(200, "{\"received\":" + r.body().length + "}");
                        }
                        long ms = r.query().startsWith("ms=") ? Long.parseLong(r.query().substring(3)) : 0;
                        Thread.sleep(ms);
                        return ServerResponse.json(200, "{\"ok\":true,\"path\":\"" + r.path() + "\"}");
                    } finally {
                        running.decrementAndGet();
                    }
                }).listen(new InetSocketAddress("127.0.0.1", 0)).tls(tls)
                .admission(new FixedAdmission(10_000, Duration.ofMillis(100))).http2(Http2Limits.DEFAULT).start();
        return "https://127.0.0.1:" + server.addresses().getFirst().getPort();
    }

    @Test
    void theJdkClientSendsTwoHundredRequestsAtOnceOverOneConnection() throws Exception {
        String base = start();
        try (HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_2)
                .sslContext(Pem.clientContext(certs.cert())).build()) {
            HttpResponse<String> warm = client.send(HttpRequest.newBuilder(URI.create(base + "/warm")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(warm.version()).as("ALPN chose h2").isEqualTo(HttpClient.Version.HTTP_2);
            List<CompletableFuture<HttpResponse<String>>> all = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                all.add(client.sendAsync(HttpRequest.newBuilder(URI.create(base + "/sleep?ms=300")).build(),
                        HttpResponse.BodyHandlers.ofString()));
            }
            for (CompletableFuture<HttpResponse<String>> f : all) {
                HttpResponse<String> r = f.get(60, TimeUnit.SECONDS);
                assertThat(r.statusCode()).isEqualTo(200);
                assertThat(r.version()).isEqualTo(HttpClient.Version.HTTP_2);
                assertThat(r.body()).contains("\"path\":\"/sleep\"");
            }
            byte[] body = new byte[300_000]; // over the stream's and the connection's first windows
            HttpResponse<String> post = client.send(HttpRequest.newBuilder(URI.create(base + "/post"))
                    .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(post.body()).isEqualTo("{\"received\":300000}");
        }
        assertThat(server.http2Metrics().connections()).as("one HTTP/2 connection").isEqualTo(1);
        assertThat(server.http2Metrics().streams()).isEqualTo(202);
        assertThat(peak.get()).as("requests handled at once on that connection").isGreaterThan(100);
        assertThat(server.http2Metrics().hostile()).isZero();
    }

    @Test
    void weftsOwnClientCallsItOverHttp2ManyStreamsAConnection() throws Exception {
        String base = start();
        try (Transport t = Transport.builder()
                .defaults(DestinationConfig.DEFAULT.withLimits(DestinationLimits.DEFAULT)
                        .withTls(new TlsOptions(certs.cert(), false)).withRetry(RetryPolicy.NONE)).build()) {
            assertThat(t.call(CallRequest.get(base + "/warm"), Duration.ofSeconds(10)).outcome()).isEqualTo("ok");
            Map<String, Integer> outcomes = new TreeMap<>();
            try (ExecutorService ex = Executors.newVirtualThreadPerTaskExecutor()) {
                List<Future<CallResult>> fs = new ArrayList<>();
                for (int i = 0; i < 500; i++) {
                    fs.add(ex.submit(() -> t.call(CallRequest.get(base + "/sleep?ms=300"), Duration.ofSeconds(30))));
                }
                for (Future<CallResult> f : fs) {
                    outcomes.merge(f.get(60, TimeUnit.SECONDS).outcome(), 1, Integer::sum);
                }
            }
            assertThat(outcomes).isEqualTo(Map.of("ok", 500));
        }
        assertThat(server.http2Metrics().streams()).isEqualTo(501);
        // 500 calls at once at the server's 250 streams a connection: a few connections, not one per call
        assertThat(server.http2Metrics().connections()).isBetween(2L, 16L);
        assertThat(peak.get()).isGreaterThan(250);
        assertThat(server.http2Metrics().hostile()).isZero();
    }
}
