package dev.weft.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
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

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code proxy:} routes over both protocols of the front door (HTTP/1.1 and h2c by upgrade, with the JDK's
 * HttpClient; h2c with prior knowledge for a stream reset) against real backends over loopback: weft-upstream, and a JDK
 * HttpServer that echoes what it received.
 */
class ProxyIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private UpstreamServer sim;
    private HttpServer echo;
    private final AtomicInteger echoed = new AtomicInteger();
    private final HttpClient scraper = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private Gateway gw;
    private int deadPort;

    @TempDir
    Path dir;

    @BeforeEach
    void backends() throws Exception {
        sim = UpstreamServer.start(UpstreamConfig.local());
        echo = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        echo.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        echo.createContext("/v1/status600", ex -> {
            ex.getRequestBody().readAllBytes();
            ex.sendResponseHeaders(600, 2); // not an HTTP status (RFC 9110 section 15)
            ex.getResponseBody().write("ok".getBytes(StandardCharsets.US_ASCII));
            ex.close();
        });
        echo.createContext("/", ex -> {
            echoed.incrementAndGet();
            Map<String, Object> seen = new java.util.TreeMap<>();
            seen.put("method", ex.getRequestMethod());
            seen.put("uri", ex.getRequestURI().getRawPath()
                    + (ex.getRequestURI().getRawQuery() == null ? "" : "?" + ex.getRequestURI().getRawQuery()));
            Map<String, String> headers = new java.util.TreeMap<>();
            ex.getRequestHeaders().forEach((k, v) -> headers.put(k.toLowerCase(java.util.Locale.ROOT), String.join(", ", v)));
            seen.put("headers", headers);
            seen.put("body", new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8));
            byte[] body = JSON.writeValueAsBytes(seen);
            ex.getResponseHeaders().add("Content-Type", "application/json");
            ex.getResponseHeaders().add("X-Backend", "echo");
            ex.getResponseHeaders().add("Connection", "x-secret");
            ex.getResponseHeaders().add("X-Secret", "only for the hop");
            ex.getResponseHeaders().add("Keep-Alive", "timeout=5");
            ex.getResponseHeaders().add("Proxy-Authenticate", "Basic");
            ex.sendResponseHeaders(201, body.length);
            ex.getResponseBody().write(body);
            ex.close();
        });
        echo.start();
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            deadPort = s.getLocalPort(); // closed at once: nothing listens there
        }
        Path f = dir.resolve("gw.yaml");
        Files.writeString(f, """
                http2: { upgrade: true }
                routes:
                  - prefix: /echo/
                    proxy: "ECHO/v1/"
                    max_body: 1KiB
                    via: weft
                  - prefix: /sim/
                    proxy: "SIM/"
                    timeout: 600ms
                  - prefix: /long/
                    proxy: "SIM/"
                    timeout: 30s
                  - prefix: /dead/
                    proxy: "http://127.0.0.1:DEAD/"
                """.replace("ECHO/", "http://127.0.0.1:" + echo.getAddress().getPort() + "/")
                .replace("SIM/", sim.url() + "/").replace("DEAD", Integer.toString(deadPort)));
        gw = Gateway.start(GatewayConfigLoader.load(f), new InetSocketAddress("127.0.0.1", 0), null, line -> { });
    }

    @AfterEach
    void stop() {
        if (gw != null) {
            gw.close();
        }
        sim.close();
        echo.stop(0);
        scraper.close();
    }

    /** A client of the gateway over {@code version}; HTTP/2 is asked by Upgrade: h2c on the first request. */
    private HttpClient client(HttpClient.Version version) throws Exception {
        HttpClient c = HttpClient.newBuilder().version(version).build();
        if (version == HttpClient.Version.HTTP_2) {
            HttpResponse<String> first = c.send(HttpRequest.newBuilder(URI.create(gw.url() + "/sim/warm")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(first.version()).as("upgraded to h2c").isEqualTo(HttpClient.Version.HTTP_2);
        }
        return c;
    }

    private static HttpResponse<String> send(HttpClient c, HttpRequest.Builder b) throws Exception {
        return c.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpRequest.Builder req(String path) {
        return HttpRequest.newBuilder(URI.create(gw.url() + path)).timeout(Duration.ofSeconds(20));
    }

    @ParameterizedTest
    @EnumSource(value = HttpClient.Version.class)
    void methodPathQueryHeadersAndBodyPassBothWays(HttpClient.Version version) throws Exception {
        try (HttpClient c = client(version)) {
            HttpResponse<String> r = send(c, req("/echo/a/b%20c?x=1&y=%2F").header("X-Custom", "v1")
                    .header("X-Forwarded-For", "10.0.0.1").PUT(HttpRequest.BodyPublishers.ofString("hello")));
            assertThat(r.version()).isEqualTo(version);
            assertThat(r.statusCode()).as("the backend's status").isEqualTo(201);
            assertThat(r.headers().firstValue("x-backend")).as("the backend's headers").hasValue("echo");
            assertThat(r.headers().firstValue("content-type")).hasValue("application/json");
            assertThat(r.headers().map().keySet()).as("hop-by-hop fields of the answer are not passed back")
                    .doesNotContain("x-secret", "keep-alive", "proxy-authenticate");
            JsonNode seen = JSON.readTree(r.body());
            assertThat(seen.get("method").asText()).isEqualTo("PUT");
            assertThat(seen.get("uri").asText()).isEqualTo("/v1/a/b%20c?x=1&y=%2F");
            assertThat(seen.get("body").asText()).isEqualTo("hello");
            JsonNode h = seen.get("headers");
            assertThat(h.get("x-custom").asText()).isEqualTo("v1");
            assertThat(h.get("x-forwarded-for").asText()).as("the client appended").isEqualTo("10.0.0.1, 127.0.0.1");
            assertThat(h.get("x-forwarded-proto").asText()).isEqualTo("http");
            assertThat(h.get("x-forwarded-host").asText()).isEqualTo(URI.create(gw.url()).getAuthority());
            assertThat(h.get("via").asText()).isEqualTo("1.1 weft");
            assertThat(h.get("host").asText()).as("the backend's own host").isEqualTo("127.0.0.1:" + echo.getAddress().getPort());
        }
    }

    @Test
    void hopByHopRequestFieldsAreNotRelayed() throws Exception {
        String head = "GET /echo/hop HTTP/1.1\r\nHost: front\r\nConnection: keep-alive, X-Hop, X-Forwarded-For\r\n"
                + "X-Hop: 1\r\nX-Forwarded-For: 6.6.6.6\r\n"
                + "Keep-Alive: timeout=5\r\nProxy-Authorization: Basic eDp5\r\nTE: trailers\r\nUpgrade: websocket\r\n"
                + "X-End: 2\r\nConnection: close\r\n\r\n";
        String answer;
        try (Socket s = new Socket("127.0.0.1", URI.create(gw.url()).getPort())) {
            s.setSoTimeout(20_000);
            s.getOutputStream().write(head.getBytes(StandardCharsets.US_ASCII));
            answer = new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        }
        assertThat(answer).startsWith("HTTP/1.1 201 ");
        JsonNode h = JSON.readTree(answer.substring(answer.indexOf("\r\n\r\n") + 4)).get("headers");
        assertThat(h.get("x-end").asText()).isEqualTo("2");
        assertThat(h.get("x-forwarded-host").asText()).isEqualTo("front");
        // a prior hop the Connection field names is this hop's, not one to pass on (before: "6.6.6.6, 127.0.0.1")
        assertThat(h.get("x-forwarded-for").asText()).isEqualTo("127.0.0.1");
        List<String> names = new java.util.ArrayList<>();
        h.fieldNames().forEachRemaining(names::add);
        assertThat(names).doesNotContain("x-hop", "keep-alive", "proxy-authorization", "te", "upgrade");
        assertThat(h.has("connection") ? h.get("connection").asText().toLowerCase() : "")
                .doesNotContain("x-hop").doesNotContain("close");
    }

    @ParameterizedTest
    @EnumSource(value = HttpClient.Version.class)
    void bodiesOverMaxBodyAreRefused413InAnd502Out(HttpClient.Version version) throws Exception {
        try (HttpClient c = client(version)) {
            HttpResponse<String> r = send(c, req("/echo/big").POST(HttpRequest.BodyPublishers.ofString("x".repeat(1025))));
            assertThat(r.statusCode()).isEqualTo(413);
            JsonNode e = JSON.readTree(r.body());
            assertThat(e.get("error").asText()).contains("1025 bytes").contains("max_body of 1024");
            assertThat(e.get("route").asText()).isEqualTo("* /echo/");
            assertThat(echoed.get()).as("nothing reached the backend").isZero();
            // a body of exactly max_body is relayed; the echo of it, over max_body, is not passed back
            HttpResponse<String> fits = send(c, req("/echo/fits").POST(HttpRequest.BodyPublishers.ofString("x".repeat(1024))));
            assertThat(echoed.get()).as("relayed").isEqualTo(1);
            assertThat(fits.statusCode()).isEqualTo(502);
            JsonNode tooLarge = JSON.readTree(fits.body());
            assertThat(tooLarge.get("reason").asText()).isEqualTo("too-large");
            assertThat(tooLarge.get("destination").asText()).isEqualTo("http://127.0.0.1:" + echo.getAddress().getPort());
        }
    }

    @ParameterizedTest
    @EnumSource(value = HttpClient.Version.class)
    void aDeadBackendIsNamedInA502(HttpClient.Version version) throws Exception {
        try (HttpClient c = client(version)) {
            HttpResponse<String> r = send(c, req("/dead/x"));
            assertThat(r.statusCode()).isEqualTo(502);
            JsonNode e = JSON.readTree(r.body());
            assertThat(e.get("destination").asText()).isEqualTo("http://127.0.0.1:" + deadPort);
            assertThat(e.get("reason").asText()).isEqualTo("refused");
            assertThat(e.get("error").asText()).contains("http://127.0.0.1:" + deadPort).contains("refused");
            assertThat(e.get("route").asText()).isEqualTo("* /dead/");
        }
    }

    @ParameterizedTest
    @EnumSource(value = HttpClient.Version.class)
    void aSlowBackendIsA504AtTheRoutesDeadline(HttpClient.Version version) throws Exception {
        try (HttpClient c = client(version)) {
            long t0 = System.nanoTime();
            HttpResponse<String> r = send(c, req("/sim/slow?latency=10s"));
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertThat(r.statusCode()).isEqualTo(504);
            assertThat(ms).as("answered at the 600 ms deadline, not the backend's 10 s").isBetween(550L, 5_000L);
            JsonNode e = JSON.readTree(r.body());
            assertThat(e.get("destination").asText()).isEqualTo(sim.url());
            assertThat(e.get("reason").asText()).isEqualTo("deadline");
            assertThat(e.get("error").asText()).contains("600ms").contains(sim.url());
        }
    }

    @Test
    void aStreamTheClientResetsCancelsTheBackendCall() throws Exception {
        try (H2cClient c = new H2cClient(new InetSocketAddress("127.0.0.1", URI.create(gw.url()).getPort()))) {
            int id = c.start("/long/held?latency=20s");
            waitFor(() -> sim.stats().requests("/held") == 1, "the backend got the call");
            assertThat(sim.stats().aborted()).isZero();
            c.reset(id);
            waitFor(() -> sim.stats().aborted() == 1, "the backend call was cancelled (its connection closed)");
        }
        waitFor(() -> metric("weft_gateway_requests_total{route=\"* /long/\",status=\"499\"}") == 1,
                "counted as 499, the client's doing, not as a 502 of the backend");
        assertThat(metric("weft_gateway_requests_total{route=\"* /long/\",status=\"502\"}")).isZero();
    }

    private double metric(String series) {
        try {
            String text = scraper.send(HttpRequest.newBuilder(URI.create(gw.url() + "/-/metrics")).build(),
                    HttpResponse.BodyHandlers.ofString()).body();
            for (String line : text.split("\n")) {
                if (line.startsWith(series + " ")) {
                    return Double.parseDouble(line.substring(series.length() + 1).strip());
                }
            }
            return 0;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    @ParameterizedTest
    @EnumSource(value = HttpClient.Version.class)
    void postIsNotRetriedByDefaultGetIs(HttpClient.Version version) throws Exception {
        try (HttpClient c = client(version)) {
            HttpResponse<String> post = send(c, req("/sim/p?status=503").POST(HttpRequest.BodyPublishers.ofString("{}")));
            assertThat(post.statusCode()).as("the backend's status passed back").isEqualTo(503);
            assertThat(sim.stats().requests("/p")).as("POST: one attempt").isEqualTo(1);
            HttpResponse<String> get = send(c, req("/sim/g?status=503"));
            assertThat(get.statusCode()).isEqualTo(503);
            assertThat(sim.stats().requests("/g")).as("GET: the destination's retry (2 attempts)").isEqualTo(2);
        }
    }

    /** A raw HTTP/1.1 exchange with the gateway: the whole answer (the request asks the connection closed). */
    private String raw(String head) throws Exception {
        try (Socket s = new Socket("127.0.0.1", URI.create(gw.url()).getPort())) {
            s.setSoTimeout(20_000);
            s.getOutputStream().write(head.getBytes(StandardCharsets.ISO_8859_1));
            return new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    /**
     * A path or method a backend could read otherwise than the gateway routed it gets a 400 with the gateway's JSON,
     * and nothing reaches the backend: before, {@code /echo/../admin} went to the backend as {@code /v1/../admin}
     * (outside the route's base path once the backend resolves it), {@code /echo//x} as {@code /v1/x} (past a
     * {@code calls:} route on the path as sent), {@code get} as {@code GET}.
     */
    @ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(strings = {"GET /echo/../admin", "GET /echo/x/../../admin",
            "GET /echo/%2e%2e/admin", "GET /echo/..%2fadmin", "GET /echo/..;/admin", "GET /echo//admin",
            "GET /echo/%61dmin", "GET /echo/a|b", "GET /echo/x%zz", "GET /echo/x?a=%zz", "GET /echo/admin;x/1",
            "GET /echo/group%2Fname", "get /echo/x", "Get /echo/x"})
    void aPathOrMethodABackendCouldReadAsAnotherIsRefused(String line) throws Exception {
        String answer = raw(line + " HTTP/1.1\r\nHost: front\r\nConnection: close\r\n\r\n");
        assertThat(answer).as(line).startsWith("HTTP/1.1 400 ");
        JsonNode error = JSON.readTree(answer.substring(answer.indexOf("\r\n\r\n") + 4));
        assertThat(error.get("error").asText()).as(line).isNotBlank().doesNotContain("127.0.0.1");
        assertThat(echoed.get()).as("nothing reached the backend").isZero();
    }

    /** A backend's status outside 100-599 is not passed on: a 502 naming the backend (before: the 600 went out). */
    @ParameterizedTest
    @EnumSource(value = HttpClient.Version.class)
    void aStatusOutside100To599IsA502(HttpClient.Version version) throws Exception {
        HttpResponse<String> r = client(version).send(HttpRequest.newBuilder(URI.create(gw.url() + "/echo/status600"))
                .build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(502);
        JsonNode error = JSON.readTree(r.body());
        assertThat(error.get("reason").asText()).isEqualTo("invalid-status");
        assertThat(error.get("destination").asText()).contains(Integer.toString(echo.getAddress().getPort()));
    }

    /**
     * A query passes as sent, but for the characters a URI does not allow in one, which clients send unencoded and the
     * relay percent-encodes (before: `a|b` failed the call with a 500 that named the backend).
     */
    @Test
    void aQueryPassesAsSentWithWhatAUriDoesNotAllowEncoded() throws Exception {
        String answer = raw("GET /echo/x?filter[a]=1&b=a|b&c={%22k%22:1} HTTP/1.1\r\nHost: front\r\n"
                + "Connection: close\r\n\r\n");
        assertThat(answer).startsWith("HTTP/1.1 201 ");
        JsonNode seen = JSON.readTree(answer.substring(answer.indexOf("\r\n\r\n") + 4));
        assertThat(seen.get("uri").asText()).isEqualTo("/v1/x?filter[a]=1&b=a%7Cb&c=%7B%22k%22:1%7D");
    }

    /**
     * The request that asks for h2c by {@code Upgrade} is relayed without the fields its {@code Connection} field
     * names (hop-by-hop, RFC 9110 section 7.6.1), as over HTTP/1.1; before, the upgrade dropped the Connection field
     * itself and so passed on what it named. A {@code X-Forwarded-For} it names is not taken as the prior hops either.
     */
    @Test
    void anUpgradedRequestDropsTheFieldsItsConnectionFieldNames() throws Exception {
        String head = "GET /echo/u HTTP/1.1\r\nHost: front\r\nConnection: Upgrade, HTTP2-Settings, X-Secret, "
                + "X-Forwarded-For\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\nX-Secret: 1\r\n"
                + "X-Forwarded-For: 6.6.6.6\r\nX-End: 2\r\n\r\n";
        try (Socket s = new Socket("127.0.0.1", URI.create(gw.url()).getPort())) {
            s.setSoTimeout(20_000);
            OutputStream out = s.getOutputStream();
            out.write(head.getBytes(StandardCharsets.US_ASCII));
            // the client's preface and an empty SETTINGS (RFC 9113 section 3.4), then its answer on stream 1
            out.write("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            out.write(new byte[]{0, 0, 0, 4, 0, 0, 0, 0, 0});
            out.flush();
            InputStream in = s.getInputStream();
            ByteArrayOutputStream got = new ByteArrayOutputStream();
            byte[] buf = new byte[4096];
            long until = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            // the echo's JSON goes in a DATA frame as it is (no HPACK): read until its last field has come
            while (!got.toString(StandardCharsets.ISO_8859_1).contains("\"uri\"") && System.nanoTime() < until) {
                int n = in.read(buf);
                if (n < 0) {
                    break;
                }
                got.write(buf, 0, n);
            }
            String seen = got.toString(StandardCharsets.ISO_8859_1);
            assertThat(seen).startsWith("HTTP/1.1 101 ").contains("\"x-end\":\"2\"");
            assertThat(seen).doesNotContain("\"x-secret\"").doesNotContain("6.6.6.6");
        }
    }

    private static void waitFor(BooleanSupplier condition, String what) {
        org.awaitility.Awaitility.await(what).atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(10))
                .until(condition::getAsBoolean);
    }
}
