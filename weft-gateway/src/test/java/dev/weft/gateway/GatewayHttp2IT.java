package dev.weft.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import dev.weft.core.tls.Pem;
import dev.weft.devtools.TestCerts;
import dev.weft.gateway.config.GatewayConfigLoader;
import dev.weft.gateway.server.Gateway;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The gateway over HTTP/2: h2c with prior knowledge on its plain listener by default, h2 by ALPN with TLS; routes,
 * the access log and the metrics the same as over HTTP/1.1; {@code http2: off} leaves HTTP/1.1 only.
 */
class GatewayHttp2IT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private HttpServer backend;
    private Gateway gw;

    @TempDir
    Path dir;

    @BeforeEach
    void backend() throws Exception {
        backend = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        backend.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        backend.createContext("/", ex -> {
            byte[] body = ("{\"path\":\"" + ex.getRequestURI().getPath() + "\"}").getBytes(StandardCharsets.UTF_8);
            ex.getResponseHeaders().add("Content-Type", "application/json");
            ex.sendResponseHeaders(200, body.length);
            ex.getResponseBody().write(body);
            ex.close();
        });
        backend.start();
    }

    @AfterEach
    void stop() {
        if (gw != null) {
            gw.close();
        }
        backend.stop(0);
    }

    private void start(String extra) throws Exception {
        Path f = dir.resolve("gw.yaml");
        Files.writeString(f, """
                access_log: %s
                %s
                routes:
                  - get: /two
                    calls:
                      a: {url: "B/a"}
                      b: {url: "B/b", needs: [a]}
                """.formatted(dir.resolve("access.log"), extra)
                .replace("B/", "http://127.0.0.1:" + backend.getAddress().getPort() + "/"));
        gw = Gateway.start(GatewayConfigLoader.load(f), new InetSocketAddress("127.0.0.1", 0), null, line -> { });
    }

    private InetSocketAddress address() {
        URI u = URI.create(gw.url());
        return new InetSocketAddress(u.getHost(), u.getPort());
    }

    @Test
    void thePlainListenerServesH2cByDefaultManyStreamsOnOneConnection() throws Exception {
        start("");
        List<String> paths = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            paths.add(i % 10 == 9 ? "/nowhere" : "/two");
        }
        List<H2cClient.Answer> answers;
        try (H2cClient c = new H2cClient(address())) {
            answers = c.getAll(paths);
        }
        for (int i = 0; i < paths.size(); i++) {
            H2cClient.Answer a = answers.get(i);
            if (paths.get(i).equals("/two")) {
                assertThat(a.status()).isEqualTo(200);
                assertThat(a.body()).contains("/a").contains("/b");
            } else {
                assertThat(a.status()).isEqualTo(404);
            }
        }
        String metrics = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(gw.url() + "/-/metrics")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        assertThat(Scrape.value(metrics, "weft_gateway_http2_streams_total")).isEqualTo(50.0);
        assertThat(Scrape.value(metrics, "weft_gateway_http2_connections_total")).isEqualTo(1.0);
        gw.close(); // flushes the access log
        gw = null;
        List<JsonNode> lines = new ArrayList<>();
        for (String l : Files.readAllLines(dir.resolve("access.log"))) {
            lines.add(JSON.readTree(l));
        }
        assertThat(lines).hasSize(51); // the 50 streams and the HTTP/1.1 scrape
        assertThat(lines.stream().filter(l -> l.get("route").asText().equals("GET /two")
                && l.get("status").asInt() == 200)).hasSize(45);
        assertThat(lines.stream().filter(l -> l.get("status").asInt() == 404)).hasSize(5);
    }

    @Test
    void withTlsTheJdkClientGetsH2ByAlpn() throws Exception {
        TestCerts certs = TestCerts.selfSigned(dir.resolve("tls"));
        start("tls: { cert: tls/cert.pem, key: tls/key.pem }");
        try (HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_2)
                .sslContext(Pem.clientContext(certs.cert())).build()) {
            HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create(gw.url() + "/two")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(r.version()).isEqualTo(HttpClient.Version.HTTP_2);
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.body()).contains("/a").contains("/b");
        }
    }

    @Test
    void http2OffLeavesTheListenerHttp11Only() throws Exception {
        start("http2: off");
        try (Socket s = new Socket(address().getAddress(), address().getPort())) {
            s.setSoTimeout(10_000);
            s.getOutputStream().write("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            InputStream in = s.getInputStream();
            String answer = new String(in.readNBytes(12), StandardCharsets.US_ASCII);
            assertThat(answer).isEqualTo("HTTP/1.1 505");
        }
    }
}
