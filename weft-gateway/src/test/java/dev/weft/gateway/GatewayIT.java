package dev.weft.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.weft.config.ConfigException;
import dev.weft.server.ExecutorModel;
import dev.weft.gateway.config.GatewayConfig;
import dev.weft.gateway.config.GatewayConfigLoader;
import dev.weft.gateway.server.Gateway;
import dev.weft.upstream.UpstreamConfig;
import dev.weft.upstream.UpstreamServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.InputStream;
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
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** The gateway in-process, against weft-upstream backends over loopback, driven by the JDK HTTP client. */
class GatewayIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private UpstreamServer sim;
    private Gateway gw;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private final List<String> log = new ArrayList<>();

    @TempDir
    Path dir;

    @BeforeEach
    void startBackends() throws Exception {
        sim = UpstreamServer.start(UpstreamConfig.local());
    }

    @AfterEach
    void stop() {
        if (gw != null) {
            gw.close();
        }
        sim.close();
        http.close();
    }

    /** Writes the config (SIM is replaced by the backend's URL) and starts a gateway on a free port. */
    private Path start(String yaml) throws Exception {
        return start(yaml, null);
    }

    private Path start(String yaml, ExecutorModel executor) throws Exception {
        Path f = dir.resolve("gw.yaml");
        Files.writeString(f, yaml.replace("SIM", sim.url()));
        GatewayConfig cfg = GatewayConfigLoader.load(f);
        gw = Gateway.start(cfg, new InetSocketAddress("127.0.0.1", 0), executor, log::add);
        return f;
    }

    private HttpResponse<String> get(String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(gw.url() + path)).timeout(Duration.ofSeconds(30)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static JsonNode json(HttpResponse<String> r) throws Exception {
        return JSON.readTree(r.body());
    }

    @Test
    void callsWithoutNeedsRunInParallel() throws Exception {
        start("""
                routes:
                  - get: /p
                    timeout: 10s
                    calls:
                      a: { url: "SIM/a?latency=2s", timeout: 10s }
                      b: { url: "SIM/b?latency=2s", timeout: 10s }
                """);
        CompletableFuture<HttpResponse<String>> pending = http.sendAsync(
                HttpRequest.newBuilder(URI.create(gw.url() + "/p")).build(), HttpResponse.BodyHandlers.ofString());
        await("both calls reached the backend").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(5))
                .until(() -> sim.stats().requests("/a") == 1 && sim.stats().requests("/b") == 1);
        // In turn, the second call would reach the backend only after the first was answered.
        assertThat(sim.stats().answered("/a", "200") + sim.stats().answered("/b", "200"))
                .as("both calls were in flight at once: neither was answered before the other was sent").isZero();
        HttpResponse<String> r = pending.get();
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("weft-completed")).contains("true");
        assertThat(json(r).at("/a/path").asText()).isEqualTo("/a");
        assertThat(json(r).at("/b/path").asText()).isEqualTo("/b");
    }

    @Test
    void needsOrderCallsAndTemplatesReadEarlierBodies() throws Exception {
        start("""
                routes:
                  - get: /orders/{id}
                    calls:
                      user:  { url: "SIM/users/{path.id}?tag={query.tag}" }
                      order: { url: "SIM/orders/{user.body.items.1.id}?from={user.body.path}" }
                      note:  { method: POST, url: "SIM/notes", needs: [order], body: { user: "{path.id}", first: "{user.body.items.0}" } }
                """);
        HttpResponse<String> r = get("/orders/7?tag=a%20b");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        assertThat(json(r).at("/order/path").asText()).isEqualTo("/orders/2");
        assertThat(sim.stats().requests("/users/7")).isEqualTo(1);
        assertThat(sim.stats().requests("/orders/2")).isEqualTo(1);
        assertThat(sim.stats().requests("/notes")).isEqualTo(1);
        assertThat(sim.stats().snapshot(false).toString()).contains("bytes_received=" + "{\"user\":\"7\",\"first\":{\"id\":1,\"name\":\"item-1\"}}".length());
    }

    @Test
    void foreachFansOutAndKeepsInputOrder() throws Exception {
        start("""
                routes:
                  - get: /list
                    calls:
                      list:  { url: "SIM/list?items=5" }
                      items: { foreach: list.body.items, concurrency: 2, url: "SIM/item/{item.id}?latency=seq:200ms,0ms,100ms,0ms,50ms" }
                """);
        HttpResponse<String> r = get("/list");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        JsonNode items = json(r).get("items");
        assertThat(items).hasSize(5);
        for (int i = 0; i < 5; i++) {
            assertThat(items.get(i).get("path").asText()).isEqualTo("/item/" + (i + 1));
        }
    }

    @Test
    void hedgeAnswersFromTheSecondCopy() throws Exception {
        start("""
                routes:
                  - get: /h
                    calls:
                      slow: { url: "SIM/h?latency=seq:5s,0ms", hedge: 100ms, timeout: 3s }
                """);
        HttpResponse<String> r = get("/h");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        assertThat(sim.stats().requests("/h")).isEqualTo(2);
        await("the losing copy was cancelled").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(5))
                .until(() -> sim.stats().aborted() >= 1);
        assertThat(sim.stats().aborted()).as("only the losing copy").isEqualTo(1);
    }

    @Test
    void optionalFailuresAreNamedRequiredFailuresGive502() throws Exception {
        start("""
                destination_defaults: { retry: { attempts: 1 } }
                routes:
                  - get: /opt
                    calls:
                      main: { url: "SIM/main" }
                      ads:  { url: "SIM/ads?status=503", optional: true }
                  - get: /req
                    calls:
                      main: { url: "SIM/main" }
                      pay:  { url: "SIM/pay?status=500" }
                      after: { url: "SIM/after/{pay.body.path}" }
                """);
        HttpResponse<String> opt = get("/opt");
        assertThat(opt.statusCode()).isEqualTo(200);
        assertThat(opt.headers().firstValue("weft-completed")).contains("false");
        assertThat(opt.headers().firstValue("weft-failed")).contains("ads=status-503");
        assertThat(json(opt).has("ads")).isFalse();
        assertThat(json(opt).at("/weft/failed/ads").asText()).isEqualTo("status-503");

        HttpResponse<String> req = get("/req");
        assertThat(req.statusCode()).isEqualTo(502);
        assertThat(req.headers().firstValue("content-type")).contains("application/json");
        JsonNode e = json(req);
        assertThat(e.get("call").asText()).isEqualTo("pay");
        assertThat(e.get("reason").asText()).isEqualTo("status-500");
        assertThat(e.get("error").asText()).isEqualTo("call 'pay' failed: status-500");
        assertThat(e.at("/failed/after").asText()).isEqualTo("skipped");
        assertThat(e.at("/completed/main/path").asText()).isEqualTo("/main");
    }

    @Test
    void theDeadlineGives504WithWhatCompleted() throws Exception {
        start("""
                routes:
                  - get: /slow
                    timeout: 1s
                    calls:
                      fast:  { url: "SIM/fast" }
                      drip:  { url: "SIM/drip?fault=drip&drip=100ms", timeout: 5s }
                """);
        HttpResponse<String> r = get("/slow");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(504);
        assertThat(sim.stats().answered("/drip", "200"))
                .as("the answer came at the route's deadline, before the dripping body was whole").isZero();
        await("the gateway hung up on the dripping call").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(5))
                .until(() -> sim.stats().aborted() >= 1);
        JsonNode e = json(r);
        assertThat(e.get("call").asText()).isEqualTo("drip");
        assertThat(e.get("reason").asText()).isEqualTo("timeout-body");
        assertThat(e.at("/completed/fast/path").asText()).isEqualTo("/fast");
        assertThat(r.headers().firstValue("weft-completed")).contains("false");
    }

    @Test
    void aCallThatWaitsForAConnectionKeepsItsWholeTimeoutForTheBackend() throws Exception {
        // One connection to the backend; three requests at once, each one call of 400 ms under a 600 ms
        // timeout: the second waits ~400 ms for the connection, the third ~800 ms. The wait is the gateway's
        // own queueing and counts against the route's 10 s only; counted against the call's 600 ms, the
        // second call was cut (timeout-headers) and the third gave up waiting (connect-wait): two 502s.
        start("""
                destination_defaults: { max_connections: 1 }
                routes:
                  - get: /one/{id}
                    timeout: 10s
                    calls:
                      a: { url: "SIM/one/{path.id}?latency=400ms", timeout: 600ms }
                """);
        List<CompletableFuture<HttpResponse<String>>> pending = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            pending.add(http.sendAsync(HttpRequest.newBuilder(URI.create(gw.url() + "/one/" + i)).build(),
                    HttpResponse.BodyHandlers.ofString()));
        }
        for (CompletableFuture<HttpResponse<String>> p : pending) {
            HttpResponse<String> r = p.get(30, java.util.concurrent.TimeUnit.SECONDS);
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        }
        assertThat(sim.stats().answered("/one/0", "200") + sim.stats().answered("/one/1", "200")
                + sim.stats().answered("/one/2", "200")).as("each call reached the backend once").isEqualTo(3);
    }

    @Test
    void statusFromPassesTheBackendStatusThrough() throws Exception {
        start("""
                destination_defaults: { retry: { attempts: 1 } }
                routes:
                  - get: /s/{code}
                    calls:
                      thing: { url: "SIM/thing?status={path.code}" }
                    respond: { status_from: thing }
                """);
        assertThat(get("/s/404").statusCode()).isEqualTo(404);
        assertThat(get("/s/201").statusCode()).isEqualTo(201);
        gw.close();
        start("""
                destination_defaults: { retry: { attempts: 1 }, max_body: 100 }
                routes:
                  - get: /big
                    calls:
                      thing: { url: "SIM/thing?bytes=1000" }
                    respond: { status_from: thing }
                """);
        HttpResponse<String> big = get("/big");
        assertThat(big.statusCode()).as("a too-large answer is a failed call, not a 200 to pass on").isEqualTo(502);
        assertThat(json(big).get("reason").asText()).isEqualTo("too-large");
    }

    /** The answer that copies each body as sent: the exact bytes, under a key that JSON must escape. */
    @Test
    void splicesBodiesAsSentUnderEscapedKeys() throws Exception {
        start("""
                routes:
                  - get: /s
                    calls:
                      a: { url: "SIM/a?items=1" }
                      b: { url: "SIM/b?items=0", as: 'q"u' }
                      c: { url: "SIM/c" }
                """);
        HttpResponse<String> r = get("/s");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("weft-completed")).contains("true");
        assertThat(r.body()).isEqualTo("{\"a\":" + direct("/a?items=1") + ",\"q\\\"u\":" + direct("/b?items=0")
                + ",\"c\":" + direct("/c") + "}");
        assertThat(JSON.readTree(r.body()).fieldNames()).toIterable().containsExactly("a", "q\"u", "c");
    }

    /** A backend's body as it answers it, asked directly. */
    private String direct(String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(sim.url() + path)).build(),
                HttpResponse.BodyHandlers.ofString()).body();
    }

    @Test
    void composesWithMergePickOmitAndAs() throws Exception {
        start("""
                routes:
                  - get: /m
                    calls:
                      a: { url: "SIM/a?items=1", omit: [items] }
                      b: { url: "SIM/b?items=2", pick: [items] }
                      c: { url: "SIM/c", as: extra, pick: [path] }
                    respond: { merge: true }
                """);
        JsonNode body = json(get("/m"));
        assertThat(body.get("path").asText()).as("a's path, merged at the top").isEqualTo("/a");
        assertThat(body.get("items")).as("b's items (a's were omitted)").hasSize(2);
        assertThat(body.at("/extra/path").asText()).as("c kept under its 'as' key").isEqualTo("/c");
        assertThat(body.at("/extra/items").isMissingNode()).as("c picked only path").isTrue();
    }

    @Test
    void limitsAnswer413And431And503() throws Exception {
        start("""
                limits: { max_body_bytes: 100, max_header_bytes: 1KiB, max_concurrent: 1, max_wait: 20ms }
                routes:
                  - get: /slow
                    calls: { a: { url: "SIM/a?latency=1500ms", timeout: 5s } }
                    timeout: 5s
                  - post: /in
                    calls: { a: { url: "SIM/a" } }
                """);
        HttpResponse<String> big = http.send(HttpRequest.newBuilder(URI.create(gw.url() + "/in"))
                .POST(HttpRequest.BodyPublishers.ofString("x".repeat(1000))).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(big.statusCode()).isEqualTo(413);
        assertThat(json(big).get("error").asText()).contains("over the limit of 100");

        assertThat(rawStatus("GET /slow HTTP/1.1\r\nHost: x\r\nX-Big: " + "y".repeat(2000) + "\r\n\r\n")).isEqualTo(431);

        CompletableFuture<HttpResponse<String>> first = http.sendAsync(
                HttpRequest.newBuilder(URI.create(gw.url() + "/slow")).build(), HttpResponse.BodyHandlers.ofString());
        await("the first request is in flight").atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(5))
                .until(() -> sim.stats().requests("/a") >= 1);
        HttpResponse<String> over = get("/slow");
        assertThat(over.statusCode()).isEqualTo(503);
        assertThat(over.headers().firstValue("retry-after")).contains("1");
        assertThat(json(over).get("error").asText()).contains("max_concurrent");
        assertThat(first.get().statusCode()).isEqualTo(200);
    }

    private int rawStatus(String request) throws Exception {
        try (Socket s = new Socket("127.0.0.1", gw.address().getPort())) {
            s.setSoTimeout(10_000);
            OutputStream out = s.getOutputStream();
            out.write(request.getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = s.getInputStream();
            String head = new String(in.readNBytes(12), StandardCharsets.US_ASCII);
            return Integer.parseInt(head.substring(9, 12));
        }
    }

    @Test
    void aReloadWithABadFileKeepsTheOldConfig() throws Exception {
        Path f = start("""
                routes:
                  - get: /one
                    calls: { a: { url: "SIM/one" } }
                """);
        Files.writeString(f, """
                routes:
                  - get: /two
                    calls: { a: { url: "SIM/two", timeout: soon } }
                """);
        assertThat(gw.reload()).isFalse();
        assertThat(log.getLast()).contains("reload refused").contains(f + ":3:44");
        assertThat(get("/one").statusCode()).isEqualTo(200);
        assertThat(get("/-/routes").body()).contains("last_reload_error");

        Files.writeString(f, """
                routes:
                  - get: /two
                    calls: { a: { url: "SIM/two" } }
                """.replace("SIM", sim.url()));
        assertThat(gw.reload()).isTrue();
        assertThat(get("/two").statusCode()).isEqualTo(200);
        assertThat(get("/one").statusCode()).isEqualTo(404);
    }

    @Test
    void adminEndpoints() throws Exception {
        start("""
                routes:
                  - get: /x
                    calls: { a: { url: "SIM/x" } }
                """);
        get("/x");
        assertThat(json(get("/-/health")).get("status").asText()).isEqualTo("up");
        assertThat(get("/-/ready").statusCode()).isEqualTo(200);
        String metrics = get("/-/metrics").body();
        assertThat(metrics).contains("weft_gateway_requests_total{route=\"GET /x\",status=\"200\"} 1.0");
        assertThat(metrics).contains("weft_calls_total{destination=\"" + sim.url() + "\",outcome=\"ok\"} 1.0");
        assertThat(json(get("/-/routes")).at("/routes/0/route").asText()).isEqualTo("GET /x");
        assertThat(get("/-/nope").statusCode()).isEqualTo(404);
        HttpResponse<String> unknown = get("/nowhere");
        assertThat(unknown.statusCode()).isEqualTo(404);
        assertThat(json(unknown).get("error").asText()).contains("no route for GET /nowhere");
    }

    @Test
    void theJvmsMetersAreInMetricsAndTheCollectorsPausesAreAHistogram() throws Exception {
        start("""
                routes:
                  - get: /x
                    calls: { a: { url: "SIM/x" } }
                """);
        System.gc(); // a stop-the-world collection of this JVM, the gateway's: told to the gateway's listener
        await("a collector pause in /-/metrics").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(5))
                .until(() -> get("/-/metrics").body().contains("jvm_gc_pause_seconds_count"));
        String metrics = get("/-/metrics").body();
        assertThat(Scrape.sum(metrics, "jvm_gc_pause_seconds_count", "")).isGreaterThanOrEqualTo(1);
        // the documented buckets, 1 ms to 5 s, and the pause counted in the last
        assertThat(Scrape.sum(metrics, "jvm_gc_pause_seconds_bucket", "le=\"0.001\"")).isGreaterThanOrEqualTo(0);
        assertThat(Scrape.sum(metrics, "jvm_gc_pause_seconds_bucket", "le=\"5.0\""))
                .isEqualTo(Scrape.sum(metrics, "jvm_gc_pause_seconds_count", ""));
        for (String meter : List.of("jvm_gc_overhead", "jvm_memory_used_bytes", "jvm_threads_live_threads",
                "jvm_classes_loaded_classes", "jvm_compilation_time_ms_total", "jvm_info", "process_cpu_usage",
                "process_uptime_seconds", "process_files_open_files", "process_files_max_files")) {
            assertThat(metrics).as(meter).containsPattern("(?m)^" + meter + "[ {]");
        }
    }

    @Test
    void platformExecutorRunsTheSameHandler() throws Exception {
        start("""
                routes:
                  - get: /x
                    calls: { a: { url: "SIM/x" }, b: { url: "SIM/y" } }
                """, new ExecutorModel.Platform(2));
        HttpResponse<String> r = get("/x");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(json(r).at("/b/path").asText()).isEqualTo("/y");
        assertThat(gw.executor()).hasToString("platform:2");
    }

    @Test
    void forwardsChosenHeadersAndRejectsMalformedRequests() throws Exception {
        start("""
                routes:
                  - get: /f
                    forward_headers: [webhook-id]
                    calls: { a: { url: "SIM/a" }, b: { url: "SIM/b", headers: { webhook-id: "{header.webhook-id}-b" } } }
                """);
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(gw.url() + "/f"))
                .header("webhook-id", "msg_1").header("x-other", "no").build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(sim.stats().hasWebhookId("msg_1")).as("forwarded to a").isTrue();
        assertThat(sim.stats().hasWebhookId("msg_1-b")).as("b's own header replaces the forwarded one").isTrue();
        assertThat(sim.stats().distinctWebhookIds()).isEqualTo(2);
        assertThat(rawStatus("NOT-HTTP\r\n\r\n")).isEqualTo(400);
    }

    @Test
    void bodiesAreEmbeddedAsSentOrParsedWhenTheyAreNotOneJsonValue() throws Exception {
        try (dev.weft.server.HttpServer raw = dev.weft.server.HttpServer.builder(
                req -> dev.weft.server.ServerResponse.text(200, "application/json",
                        req.path().equals("/spaced") ? " { \"x\" : 1.10 }\n" : "{\"a\":1} trailing")).start()) {
            start("""
                    routes:
                      - get: /e
                        calls:
                          s: { url: "RAW/spaced" }
                          t: { url: "RAW/trailing" }
                          b: { url: "SIM/b" }
                      - get: /s
                        calls:
                          s: { url: "RAW/spaced" }
                          b: { url: "SIM/b", as: sim }
                    """.replace("RAW", raw.url()));
            HttpResponse<String> each = get("/e");
            assertThat(each.statusCode()).isEqualTo(200);
            assertThat(json(each).at("/s/x").decimalValue()).isEqualByComparingTo("1.1");
            assertThat(json(each).get("t").asText()).as("not one JSON value: the tree path, a string")
                    .isEqualTo("{\"a\":1} trailing");
            HttpResponse<String> spliced = get("/s");
            assertThat(spliced.body()).as("every body one JSON value: copied as sent, less the outer whitespace")
                    .startsWith("{\"s\":{ \"x\" : 1.10 },\"sim\":{\"path\":\"/b\",");
            assertThat(spliced.headers().firstValue("weft-completed")).contains("true");
        }
    }

    @Test
    void aTemplateIntoABodyThatIsNotJsonFailsWithANamedReason() throws Exception {
        try (dev.weft.server.HttpServer text = dev.weft.server.HttpServer.builder(
                req -> dev.weft.server.ServerResponse.text(200, "text/plain", "hello")).start()) {
            start("""
                    routes:
                      - get: /t
                        calls:
                          plain: { url: "TEXT/x" }
                          next:  { url: "SIM/n/{plain.body.id}" }
                    """.replace("TEXT", text.url()));
            HttpResponse<String> r = get("/t");
            assertThat(r.statusCode()).isEqualTo(502);
            assertThat(json(r).get("call").asText()).isEqualTo("next");
            assertThat(json(r).get("reason").asText()).isEqualTo("not-json");
            assertThat(json(r).at("/completed/plain").asText()).as("a text body is kept as a string").isEqualTo("hello");
        }
    }

    @Test
    void reloadsWhenTheFileChanges() throws Exception {
        Path f = start("""
                routes:
                  - get: /one
                    calls: { a: { url: "SIM/one" } }
                """);
        FileTime before = Files.getLastModifiedTime(f);
        gw.watchFile(Duration.ofMillis(50));
        Files.writeString(f, """
                routes:
                  - get: /one
                    calls: { a: { url: "SIM/two" } }
                """.replace("SIM", sim.url()));
        // The same size, and on a coarse file system perhaps the same modification time: set a later one
        // rather than wait for the clock to move past the file system's resolution.
        Files.setLastModifiedTime(f, FileTime.fromMillis(before.toMillis() + 2_000));
        await("the changed file was loaded").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(5))
                .until(() -> json(get("/one")).at("/a/path").asText().equals("/two"));
        assertThat(log).anyMatch(l -> l.startsWith("reloaded "));
    }

    @Test
    void drainLetsRequestsInFlightFinishAndRefusesNewOnes() throws Exception {
        start("""
                limits: { drain_timeout: 10s }
                routes:
                  - get: /slow
                    timeout: 5s
                    calls: { a: { url: "SIM/a?latency=1s", timeout: 5s } }
                """);
        CompletableFuture<HttpResponse<String>> inFlight = http.sendAsync(
                HttpRequest.newBuilder(URI.create(gw.url() + "/slow")).build(), HttpResponse.BodyHandlers.ofString());
        await("the request is in flight").atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(5))
                .until(() -> sim.stats().requests("/a") >= 1);
        String url = gw.url();
        assertThat(gw.drain()).as("every request finished within the drain timeout").isTrue();
        assertThat(inFlight.get().statusCode()).isEqualTo(200);
        assertThatThrownBy(() -> http.send(HttpRequest.newBuilder(URI.create(url + "/slow")).build(),
                HttpResponse.BodyHandlers.ofString())).isInstanceOf(java.io.IOException.class);
        gw = null;
    }

    @Test
    void configErrorsNameFileLineColumnAndStartNothing() throws Exception {
        Path f = dir.resolve("bad.yaml");
        Files.writeString(f, """
                routes:
                  - get: /o/{id}
                    timeout: soon
                    calls:
                      a: { url: "http://h:1/{path.nope}" }
                      b: { url: "http://h:1/{c.body.x}" }
                      c: { url: "http://h:1/{b.body.x}" }
                      d: { url: "http://h:1/", needs: [zz], colour: red }
                    respond: { status_from: missing }
                """);
        assertThatThrownBy(() -> GatewayConfigLoader.load(f)).isInstanceOf(ConfigException.class)
                .hasMessageContaining(f + ":3:14: expected a duration")
                .hasMessageContaining(f + ":5:10: call 'a' reads {path.nope}, but the route path /o/{id} has no {nope}")
                .hasMessageContaining(f + ":8:45: unknown key 'colour'")
                .hasMessageContaining("call 'd' needs 'zz', which is not a call of this route")
                .hasMessageContaining(f + ":9:29: status_from names 'missing'");
        Files.writeString(f, """
                routes:
                  - get: /o
                    calls:
                      b: { url: "http://h:1/{c.body.x}" }
                      c: { url: "http://h:1/{b.body.x}" }
                """);
        assertThatThrownBy(() -> GatewayConfigLoader.load(f)).hasMessageContaining(f + ":4:10: calls form a cycle: b -> c -> b");
    }
}
