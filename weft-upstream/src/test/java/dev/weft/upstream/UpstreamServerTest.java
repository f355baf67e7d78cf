package dev.weft.upstream;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** weft-upstream over real loopback HTTP, driven by the JDK's own client (independent of weft-client). */
class UpstreamServerTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private UpstreamServer sim;
    private HttpClient http;

    @BeforeEach
    void start() throws IOException {
        sim = UpstreamServer.start(UpstreamConfig.local());
        http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    }

    @AfterEach
    void stop() {
        http.close();
        sim.close();
    }

    private HttpResponse<String> get(String pathAndQuery, String... headers) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(sim.url(pathAndQuery))).timeout(Duration.ofSeconds(30));
        if (headers.length > 0) {
            b.headers(headers);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void dropResetsEveryOpenConnectionAsARestartWould() throws Exception {
        try (java.net.Socket held = new java.net.Socket("127.0.0.1", sim.addresses().getFirst().getPort())) {
            held.getOutputStream().write("GET /a HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            java.io.InputStream in = held.getInputStream();
            byte[] buf = new byte[4096];
            assertThat(in.read(buf)).isPositive(); // answered; the connection stays open (keep-alive)
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(sim.url("/-/drop")))
                    .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.body()).contains("dropping");
            held.setSoTimeout(10_000);
            int n;
            try {
                n = in.read(buf);
            } catch (java.net.SocketException e) {
                n = -1; // reset
            }
            assertThat(n).as("the held connection was closed by the drop").isEqualTo(-1);
        }
        assertThat(get("/b").statusCode()).as("still listening").isEqualTo(200);
    }

    @Test
    void answersDeterministicJsonAfterTheLatency() throws Exception {
        long t0 = System.nanoTime();
        HttpResponse<String> r = get("/b?latency=300ms");
        long took = System.nanoTime() - t0;
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("content-type")).contains("application/json");
        assertThat(r.body()).isEqualTo("{\"path\":\"/b\",\"items\":[{\"id\":1,\"name\":\"item-1\"},"
                + "{\"id\":2,\"name\":\"item-2\"},{\"id\":3,\"name\":\"item-3\"}]}");
        assertThat(took).as("waited at least the latency").isGreaterThanOrEqualTo(Duration.ofMillis(300).toNanos());
        assertThat(get("/b?latency=300ms").body()).isEqualTo(r.body());
    }

    @Test
    void shapesStatusSizeItemsAndRetryAfter() throws Exception {
        HttpResponse<String> r = get("/x?status=503&retry_after=2");
        assertThat(r.statusCode()).isEqualTo(503);
        assertThat(r.headers().firstValue("retry-after")).contains("2");
        assertThat(get("/x?bytes=5000").body()).hasSize(5000);
        assertThat(JSON.readTree(get("/x?bytes=5000").body()).get("items")).hasSize(3);
        assertThat(JSON.readTree(get("/x?items=0").body()).get("items")).isEmpty();
        assertThat(List.of(get("/s?status=seq:503,200").statusCode(), get("/s?status=seq:503,200").statusCode(),
                get("/s?status=seq:503,200").statusCode())).containsExactly(503, 200, 503);
        int fails = 0;
        for (int i = 0; i < 20; i++) {
            fails += get("/f?fail=1").statusCode() == 503 ? 1 : 0;
        }
        assertThat(fails).isEqualTo(20);
        assertThat(get("/f?fail=0").statusCode()).isEqualTo(200);
    }

    @Test
    void badParametersAre400NamingTheParameter() throws Exception {
        HttpResponse<String> r = get("/b?latency=abc");
        assertThat(r.statusCode()).isEqualTo(400);
        JsonNode body = JSON.readTree(r.body());
        assertThat(body.get("parameter").asText()).isEqualTo("latency");
        assertThat(body.get("error").asText()).contains("'latency'").contains("'abc'");
        assertThat(JSON.readTree(get("/b?status=99").body()).get("parameter").asText()).isEqualTo("status");
        assertThat(JSON.readTree(get("/b?fault=explode").body()).get("error").asText())
                .contains("hang, reset, close or drip");
        assertThat(get("/b?latency=uniform:1s..10ms").statusCode()).isEqualTo(400);
        assertThat(get("/b?unrelated=1").statusCode()).as("unknown parameters are the caller's own").isEqualTo(200);
    }

    @Test
    void dripsTheBodyOneByteAtATime() throws Exception {
        long t0 = System.nanoTime();
        HttpResponse<String> r = get("/d?fault=drip&drip=20ms&items=0");
        long took = System.nanoTime() - t0;
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).isEqualTo("{\"path\":\"/d\",\"items\":[]}");
        assertThat(took).isGreaterThanOrEqualTo(Duration.ofMillis(20L * (r.body().length() - 1)).toNanos());
        assertThat(sim.stats().answered("/d", "200")).isEqualTo(1);
    }

    @Test
    void resetCloseAndHangFail() throws Exception {
        assertThatThrownBy(() -> get("/r?fault=reset")).isInstanceOf(IOException.class);
        assertThatThrownBy(() -> get("/c?fault=close")).isInstanceOf(IOException.class);
        HttpRequest hang = HttpRequest.newBuilder(URI.create(sim.url("/h?fault=hang"))).timeout(Duration.ofMillis(300))
                .build();
        assertThatThrownBy(() -> http.send(hang, HttpResponse.BodyHandlers.ofString()))
                .isInstanceOf(java.net.http.HttpTimeoutException.class);
        // at least once: the JDK client tries an idempotent request again after a reset
        assertThat(sim.stats().answered("/r", "reset")).isGreaterThanOrEqualTo(1);
        assertThat(sim.stats().answered("/h", "hang")).isEqualTo(1);
    }

    @Test
    void statsCountPathsAnswersAndDistinctWebhookIds() throws Exception {
        get("/w", "webhook-id", "msg_1");
        get("/w", "webhook-id", "msg_1");
        get("/w", "webhook-id", "msg_2");
        get("/v?status=500");
        JsonNode stats = JSON.readTree(get("/-/stats").body());
        assertThat(stats.get("requests").asLong()).isEqualTo(4);
        assertThat(stats.at("/by_path/~1w/requests").asLong()).isEqualTo(3);
        assertThat(stats.at("/answers/500").asLong()).isEqualTo(1);
        assertThat(stats.at("/webhook_ids/distinct").asLong()).isEqualTo(2);
        assertThat(stats.at("/webhook_ids/requests").asLong()).isEqualTo(3);
        assertThat(stats.at("/webhook_ids/values").isMissingNode()).as("values only when asked").isTrue();
        JsonNode withIds = JSON.readTree(get("/-/stats?ids=true").body());
        assertThat(withIds.at("/webhook_ids/values").toString()).isEqualTo("[\"msg_1\",\"msg_2\"]");

        HttpResponse<String> reset = http.send(HttpRequest.newBuilder(URI.create(sim.url("/-/reset")))
                .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(reset.statusCode()).isEqualTo(200);
        assertThat(sim.stats().requests()).isZero();
        assertThat(get("/-/nope").statusCode()).isEqualTo(404);
    }

    @Test
    void countsRequestBodies() throws Exception {
        http.send(HttpRequest.newBuilder(URI.create(sim.url("/hook"))).POST(HttpRequest.BodyPublishers.ofString("x".repeat(
                1000))).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(JSON.readTree(get("/-/stats").body()).get("bytes_received").asLong()).isEqualTo(1000);
    }

    @Test
    void aRequestSentWhileAnAnswerIsPendingIsAnsweredAfterIt() throws Exception {
        try (java.net.Socket c = new java.net.Socket("127.0.0.1", sim.addresses().getFirst().getPort())) {
            c.setSoTimeout(10_000);
            var out = c.getOutputStream();
            out.write(ascii("GET /first?latency=400ms HTTP/1.1\r\nHost: x\r\n\r\n"));
            out.flush();
            // the first is read and waiting for its latency before the second arrives
            await("the sim has read /first").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(5))
                    .until(() -> sim.stats().snapshot(false).toString().contains("/first"));
            out.write(ascii("GET /second?latency=0ms HTTP/1.1\r\nHost: x\r\n\r\n"));
            out.flush();
            String both = readUntil(c, "/second");
            assertThat(both.indexOf("/first")).as(both).isGreaterThan(0).isLessThan(both.indexOf("/second"));
        }
        assertThat(sim.stats().aborted()).isZero();
    }

    @Test
    void aCallerThatLeavesBeforeTheAnswerIsCountedAsAborted() throws Exception {
        try (java.net.Socket c = new java.net.Socket("127.0.0.1", sim.addresses().getFirst().getPort())) {
            c.getOutputStream().write(ascii("GET /left?latency=5s HTTP/1.1\r\nHost: x\r\n\r\n"));
            c.getOutputStream().flush();
            await("the sim has read /left").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(10))
                    .until(() -> sim.stats().snapshot(false).toString().contains("/left"));
        }
        await("the abort is seen before the 5 s latency passed").atMost(Duration.ofSeconds(4))
                .pollInterval(Duration.ofMillis(10)).until(() -> sim.stats().aborted() > 0);
        assertThat(sim.stats().aborted()).isEqualTo(1);
    }

    private static byte[] ascii(String s) {
        return s.getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    }

    private static String readUntil(java.net.Socket c, String marker) throws IOException {
        StringBuilder sb = new StringBuilder();
        byte[] buf = new byte[4096];
        while (sb.indexOf(marker) < 0) {
            int n = c.getInputStream().read(buf);
            if (n < 0) {
                break;
            }
            sb.append(new String(buf, 0, n, java.nio.charset.StandardCharsets.US_ASCII));
        }
        return sb.toString();
    }

    @Test
    void closesIdleKeepAliveConnectionsButNotBusyOnes() throws Exception {
        UpstreamConfig cfg = new UpstreamConfig(List.of(new InetSocketAddress("127.0.0.1", 0)), Behavior.DEFAULT, List.of(),
                100, Duration.ofMillis(200));
        try (UpstreamServer s = UpstreamServer.start(cfg); java.net.Socket c = new java.net.Socket("127.0.0.1",
                s.addresses().getFirst().getPort())) {
            c.setSoTimeout(10_000);
            byte[] req = "GET /slow?latency=600ms HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
            // The server's idle clock starts when it has written the answer, which it cannot do before the
            // request is sent plus its 600 ms latency: measured from the send, not from when this thread
            // happens to wake with the answer (a loaded machine wakes it late and the gap looks short).
            long sent = System.nanoTime();
            c.getOutputStream().write(req);
            byte[] answer = new byte[4096];
            int n = c.getInputStream().read(answer);
            assertThat(new String(answer, 0, n, java.nio.charset.StandardCharsets.US_ASCII))
                    .as("a request slower than the idle timeout is not cut").startsWith("HTTP/1.1 200 ");
            int eof = c.getInputStream().read(answer);
            assertThat(eof).as("then the idle connection is closed by the server").isEqualTo(-1);
            assertThat(Duration.ofNanos(System.nanoTime() - sent)).as("closed no sooner than latency + idle timeout")
                    .isGreaterThanOrEqualTo(Duration.ofMillis(600 + 200));
        }
    }

    @Test
    void quotesPathsAsJson() {
        assertThat(dev.weft.server.JsonText.quote("/a\"b\\c\u0001")).isEqualTo("\"/a\\\"b\\\\c\\u0001\"");
    }

    @Test
    void aPortInUseIsNamed() {
        InetSocketAddress taken = sim.addresses().getFirst();
        assertThatThrownBy(() -> UpstreamServer.start(UpstreamConfig.local().withListen(List.of(taken))))
                .isInstanceOf(BindException.class)
                .hasMessageStartingWith("cannot listen on 127.0.0.1:" + taken.getPort());
    }

    @Test
    void listensOnSeveralAddresses() throws Exception {
        try (UpstreamServer two = UpstreamServer.start(UpstreamConfig.local().withListen(List.of(
                new InetSocketAddress("127.0.0.1", 0), new InetSocketAddress("127.0.0.2", 0))))) {
            InetSocketAddress second = two.addresses().get(1);
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.2:" + second.getPort()
                    + "/b")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(two.stats().requests()).isEqualTo(1);
        }
    }

    @Test
    void configSetsDefaultsPerPathAndQueryOverrides(@TempDir Path dir) throws Exception {
        Path f = Files.writeString(dir.resolve("sim.yaml"), """
                listen: 127.0.0.1:0
                defaults: { items: 1 }
                paths:
                  /b: { status: 201 }
                  /users/*: { body: { id: 7, name: Ann, tags: [a, b] } }
                """);
        UpstreamConfig cfg = UpstreamConfig.load(f);
        try (UpstreamServer s = UpstreamServer.start(cfg)) {
            HttpResponse<String> b = http.send(HttpRequest.newBuilder(URI.create(s.url("/b"))).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(b.statusCode()).isEqualTo(201);
            assertThat(JSON.readTree(b.body()).get("items")).hasSize(1);
            HttpResponse<String> over = http.send(HttpRequest.newBuilder(URI.create(s.url("/b?status=202"))).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(over.statusCode()).isEqualTo(202);
            HttpResponse<String> u = http.send(HttpRequest.newBuilder(URI.create(s.url("/users/7"))).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(u.body()).isEqualTo("{\"id\":7,\"name\":\"Ann\",\"tags\":[\"a\",\"b\"]}");
        }
    }

    @Test
    void configErrorsNameFileLineAndColumn(@TempDir Path dir) throws Exception {
        Path f = Files.writeString(dir.resolve("bad.yaml"), """
                listen: nowhere
                paths:
                  /b: { latency: soon }
                  c: { status: 200 }
                  /d: { colour: red }
                """);
        assertThatThrownBy(() -> UpstreamConfig.load(f))
                .hasMessageContaining(f + ":1:9: expected HOST:PORT")
                .hasMessageContaining(f + ":3:18: bad value of 'latency'")
                .hasMessageContaining(f + ":4:6: path 'c' must start with /")
                .hasMessageContaining(f + ":5:9: unknown key 'colour'");
    }
}
