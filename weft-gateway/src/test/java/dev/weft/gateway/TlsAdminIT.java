package dev.weft.gateway;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.weft.config.ConfigException;
import dev.weft.core.tls.Pem;
import dev.weft.devtools.TestCerts;
import dev.weft.gateway.config.GatewayConfig;
import dev.weft.gateway.config.GatewayConfigLoader;
import dev.weft.gateway.server.Gateway;
import dev.weft.upstream.UpstreamConfig;
import dev.weft.upstream.UpstreamServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** Inbound TLS and the admin listener, over real sockets: the gateway in-process, weft-upstream behind it. */
class TlsAdminIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private UpstreamServer sim;
    private Gateway gw;
    private final List<String> log = Collections.synchronizedList(new ArrayList<>());

    @TempDir
    Path dir;

    @BeforeEach
    void startBackends() throws Exception {
        System.setProperty("weft.tlsWatch", "200ms");
        sim = UpstreamServer.start(UpstreamConfig.local());
    }

    @AfterEach
    void stop() {
        if (gw != null) {
            gw.close();
        }
        sim.close();
        System.clearProperty("weft.tlsWatch");
    }

    private static final String ROUTES = """
            routes:
              - get: /p
                calls:
                  a: { url: "SIM/a" }
                  b: { url: "SIM/b" }
            """;

    private void start(String yaml, Map<String, String> env) throws Exception {
        Path f = dir.resolve("gw.yaml");
        Files.writeString(f, yaml.replace("SIM", sim.url()));
        GatewayConfig cfg = GatewayConfigLoader.load(f, env::get);
        gw = Gateway.start(cfg, new InetSocketAddress("127.0.0.1", 0), null, log::add);
    }

    private static HttpClient client(SSLContext ctx) {
        return HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).sslContext(ctx)
                .connectTimeout(Duration.ofSeconds(30)).build();
    }

    private static HttpResponse<String> get(HttpClient c, String url, String... headers) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(30));
        if (headers.length > 0) {
            b.headers(headers);
        }
        return c.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void aHandshakeTrickledPastTheHeaderTimeoutIsClosed() throws Exception {
        TestCerts certs = TestCerts.selfSigned(dir.resolve("tls"));
        start("tls: { cert: tls/cert.pem, key: tls/key.pem }\nlimits: { header_timeout: 1s }\n" + ROUTES, Map.of());
        boolean closed = false;
        try (Socket s = new Socket(gw.address().getAddress(), gw.address().getPort())) {
            s.setSoTimeout(10_000);
            java.io.OutputStream out = s.getOutputStream();
            out.write(new byte[] {0x16, 0x03, 0x01, 0x02, 0x00}); // a handshake record of 512 bytes, then one a time
            long start = System.nanoTime();
            try {
                // every 300 ms: no single read waits header_timeout, so only a deadline on the whole handshake ends it
                // (before, it was held until idle_timeout, 60 s)
                while (System.nanoTime() - start < 8_000_000_000L) {
                    out.write(0x01);
                    out.flush();
                    Thread.sleep(300);
                }
                closed = s.getInputStream().read() < 0;
            } catch (java.net.SocketException reset) {
                closed = true; // writing to the closed connection
            }
        }
        assertThat(closed).as("the trickled handshake's connection was closed").isTrue();
        try (HttpClient c = client(Pem.clientContext(certs.cert()))) {
            String metrics = get(c, gw.url() + "/-/metrics").body();
            assertThat(Scrape.value(metrics, "weft_gateway_connections_header_timeouts_total")).isEqualTo(1.0);
            assertThat(Scrape.value(metrics, "weft_gateway_tls_handshake_failures_total")).isEqualTo(1.0);
        }
    }

    @Test
    void httpsAnswersTheComposedResponseAndCountsFailedHandshakes() throws Exception {
        TestCerts certs = TestCerts.selfSigned(dir.resolve("tls"));
        start("tls: { cert: tls/cert.pem, key: tls/key.pem }\n" + ROUTES, Map.of());
        assertThat(gw.url()).startsWith("https://");
        try (HttpClient c = client(Pem.clientContext(certs.cert()))) {
            HttpResponse<String> r = get(c, gw.url() + "/p");
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            assertThat(JSON.readTree(r.body()).at("/a/path").asText()).isEqualTo("/a");
            assertThat(JSON.readTree(r.body()).at("/b/path").asText()).isEqualTo("/b");

            // plain HTTP to the TLS port: the handshake fails, the connection is closed, the failure counted
            try (Socket s = new Socket(gw.address().getAddress(), gw.address().getPort())) {
                s.setSoTimeout(30_000);
                s.getOutputStream().write("GET /p HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                s.getOutputStream().flush();
                s.getInputStream().readAllBytes(); // ends when the gateway closes it
            }
            await("the failed handshake is counted").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20))
                    .until(() -> Scrape.value(get(c, gw.url() + "/-/metrics").body(),
                            "weft_gateway_tls_handshake_failures_total") >= 1);
            assertThat(Scrape.value(get(c, gw.url() + "/-/metrics").body(), "weft_gateway_tls_handshake_failures_total"))
                    .isEqualTo(1.0);
            assertThat(log).noneMatch(l -> l.contains("handshake"));
        }
        // the real curl, when the machine has one
        if (Files.isExecutable(Path.of("/usr/bin/curl"))) {
            Process p = new ProcessBuilder("/usr/bin/curl", "-sk", "--max-time", "30", gw.url() + "/p")
                    .redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
            assertThat(p.exitValue()).as(out).isZero();
            assertThat(JSON.readTree(out).at("/a/path").asText()).isEqualTo("/a");
        }
    }

    @Test
    void adminEndpointsMoveToTheAdminListenerBehindTheToken() throws Exception {
        start("admin: { listen: 127.0.0.1:0, token_env: ADMIN_TOKEN }\n" + ROUTES, Map.of("ADMIN_TOKEN", "s3cret"));
        try (HttpClient c = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()) {
            assertThat(get(c, gw.url() + "/p").statusCode()).isEqualTo(200);
            for (String p : List.of("/-/routes", "/-/metrics", "/-/health")) {
                HttpResponse<String> r = get(c, gw.url() + p);
                assertThat(r.statusCode()).as(p).isEqualTo(404);
                assertThat(JSON.readTree(r.body()).get("error").asText()).contains("admin listener");
            }
            String admin = gw.adminUrl();
            assertThat(admin).isNotNull().isNotEqualTo(gw.url());
            HttpResponse<String> no = get(c, admin + "/-/metrics");
            assertThat(no.statusCode()).isEqualTo(401);
            assertThat(JSON.readTree(no.body()).get("error").asText()).contains("Bearer");
            assertThat(get(c, admin + "/-/routes", "Authorization", "Bearer wrong").statusCode()).isEqualTo(401);
            HttpResponse<String> m = get(c, admin + "/-/metrics", "Authorization", "Bearer s3cret");
            assertThat(m.statusCode()).isEqualTo(200);
            assertThat(Scrape.value(m.body(), "weft_gateway_requests_total")).isEqualTo(1.0);
            HttpResponse<String> routes = get(c, admin + "/-/routes", "Authorization", "Bearer s3cret");
            assertThat(JSON.readTree(routes.body()).at("/routes/0/route").asText()).isEqualTo("GET /p");
            assertThat(get(c, admin + "/-/health").statusCode()).isEqualTo(200);
            assertThat(get(c, admin + "/-/ready").statusCode()).isEqualTo(200);
        }
    }

    @Test
    void pkcs12KeystoreWithItsPasswordFromTheEnvironment() throws Exception {
        TestCerts certs = TestCerts.selfSigned(dir.resolve("tls"));
        Process p = new ProcessBuilder("openssl", "pkcs12", "-export", "-in", certs.cert().toString(), "-inkey",
                certs.key().toString(), "-out", dir.resolve("tls/weft.p12").toString(), "-passout", "pass:pw1")
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(out).isZero();
        Path f = dir.resolve("gw.yaml");
        Files.writeString(f, "tls: { keystore: tls/weft.p12, password_env: P12_PASSWORD }\n" + ROUTES.replace("SIM", sim.url()));
        assertThatThrownBy(() -> GatewayConfigLoader.load(f, Map.of("P12_PASSWORD", "wrong")::get))
                .isInstanceOf(ConfigException.class).hasMessageContaining("gw.yaml:1:18").hasMessageContaining("weft.p12");
        start("tls: { keystore: tls/weft.p12, password_env: P12_PASSWORD }\n" + ROUTES, Map.of("P12_PASSWORD", "pw1"));
        try (HttpClient c = client(Pem.clientContext(certs.cert()))) {
            HttpResponse<String> r = get(c, gw.url() + "/p");
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            assertThat(JSON.readTree(r.body()).at("/a/path").asText()).isEqualTo("/a");
        }
    }

    @Test
    void adminTokenVariableMustBeSet() throws Exception {
        Path f = dir.resolve("gw.yaml");
        Files.writeString(f, "admin:\n  token_env: NOT_SET_HERE\n" + ROUTES.replace("SIM", sim.url()));
        assertThatThrownBy(() -> GatewayConfigLoader.load(f, Map.<String, String>of()::get))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("gw.yaml:2:14").hasMessageContaining("NOT_SET_HERE");
    }

    @Test
    void badCertificateAtStartIsAConfigErrorNamingTheFile() throws Exception {
        Files.createDirectories(dir.resolve("tls"));
        Files.writeString(dir.resolve("tls/cert.pem"), "not a certificate\n");
        TestCerts.selfSigned(dir.resolve("other"));
        Path f = dir.resolve("gw.yaml");
        Files.writeString(f, "tls:\n  cert: tls/cert.pem\n  key: other/key.pem\n" + ROUTES.replace("SIM", sim.url()));
        assertThatThrownBy(() -> GatewayConfigLoader.load(f))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("gw.yaml:2:9").hasMessageContaining("cert.pem");
    }

    private static X509Certificate peer(SSLSocket s) throws Exception {
        return (X509Certificate) s.getSession().getPeerCertificates()[0];
    }

    private static String request(SSLSocket s, InputStream in) throws Exception {
        OutputStream out = s.getOutputStream();
        out.write("GET /p HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        out.flush();
        BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.US_ASCII));
        String status = r.readLine();
        int length = 0;
        for (String h = r.readLine(); h != null && !h.isEmpty(); h = r.readLine()) {
            if (h.toLowerCase().startsWith("content-length:")) {
                length = Integer.parseInt(h.substring(15).strip());
            }
        }
        char[] body = new char[length];
        int n = 0;
        while (n < length) {
            n += r.read(body, n, length - n);
        }
        return status;
    }

    @Test
    void replacedCertificateFilesReachNewConnectionsWhileOpenOnesKeepTheirs() throws Exception {
        TestCerts first = TestCerts.selfSigned(dir.resolve("tls"));
        TestCerts second = TestCerts.selfSigned(dir.resolve("next"));
        start("tls: { cert: tls/cert.pem, key: tls/key.pem }\n" + ROUTES, Map.of());
        // trusts both certificates
        Path both = dir.resolve("both.pem");
        Files.writeString(both, Files.readString(first.cert()) + Files.readString(second.cert()));
        SSLContext trust = Pem.clientContext(both);
        X509Certificate firstCert = Pem.certificates(first.cert()).getFirst();
        X509Certificate secondCert = Pem.certificates(second.cert()).getFirst();

        try (SSLSocket open = (SSLSocket) trust.getSocketFactory().createSocket("127.0.0.1", gw.address().getPort())) {
            open.setSoTimeout(30_000);
            javax.net.ssl.SSLParameters alpn = open.getSSLParameters();
            alpn.setApplicationProtocols(new String[]{"http/1.1"}); // this test speaks HTTP/1.1 (h2: GatewayHttp2IT)
            open.setSSLParameters(alpn);
            open.startHandshake();
            assertThat(peer(open)).isEqualTo(firstCert);
            assertThat(open.getApplicationProtocol()).as("ALPN").isEqualTo("http/1.1");
            assertThat(open.getSession().getProtocol()).isEqualTo("TLSv1.3");
            // request() reads with a BufferedReader per call; one answer per call, read whole
            assertThat(request(open, open.getInputStream())).isEqualTo("HTTP/1.1 200 OK");

            // a broken file first: the old certificate stays, the reason is logged
            Files.writeString(dir.resolve("tls/cert.pem"), "garbage\n");
            await("the broken certificate's reload is refused").atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(20)).until(() -> log.stream().anyMatch(l -> l.contains("reload refused")));
            assertThat(log).anyMatch(l -> l.contains("reload refused") && l.contains("cert.pem"));
            try (SSLSocket s = (SSLSocket) trust.getSocketFactory().createSocket("127.0.0.1", gw.address().getPort())) {
                s.setSoTimeout(30_000);
                s.startHandshake();
                assertThat(peer(s)).isEqualTo(firstCert);
            }

            Files.copy(second.key(), dir.resolve("tls/key.pem"), StandardCopyOption.REPLACE_EXISTING);
            Files.copy(second.cert(), dir.resolve("tls/cert.pem"), StandardCopyOption.REPLACE_EXISTING);
            // new connections get the second certificate once the reload has happened
            await("new connections get the second certificate").atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(20)).until(() -> {
                        try (SSLSocket s = (SSLSocket) trust.getSocketFactory().createSocket("127.0.0.1",
                                gw.address().getPort())) {
                            s.setSoTimeout(30_000);
                            s.startHandshake();
                            X509Certificate seen = peer(s);
                            assertThat(request(s, s.getInputStream())).isEqualTo("HTTP/1.1 200 OK");
                            return seen.equals(secondCert);
                        }
                    });
            // the connection opened before the change still works, with its own certificate
            assertThat(request(open, open.getInputStream())).isEqualTo("HTTP/1.1 200 OK");
            assertThat(peer(open)).isEqualTo(firstCert);
        }
    }
}
