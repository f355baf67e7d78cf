package dev.weft.gateway;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.weft.config.ConfigException;
import dev.weft.gateway.config.GatewayConfig;
import dev.weft.gateway.config.GatewayConfigLoader;
import dev.weft.gateway.server.Gateway;
import dev.weft.server.admission.AdmissionPolicy;
import dev.weft.upstream.UpstreamConfig;
import dev.weft.upstream.UpstreamServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** The admission at the gateway's front door, in-process, against a weft-upstream backend over loopback. */
class AdmissionIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private UpstreamServer sim;
    private Gateway gw;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @TempDir
    Path dir;

    @BeforeEach
    void startBackend() throws Exception {
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

    private void start(String yaml) throws Exception {
        Path f = dir.resolve("gw.yaml");
        Files.writeString(f, yaml.replace("SIM", sim.url()));
        GatewayConfig cfg = GatewayConfigLoader.load(f);
        gw = Gateway.start(cfg, new InetSocketAddress("127.0.0.1", 0), null, line -> { });
    }

    private HttpResponse<String> get(String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(gw.url() + path)).timeout(Duration.ofSeconds(30)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** Sends GET /slow and returns once its call has reached the backend (/a): the route's one place is taken. */
    private CompletableFuture<HttpResponse<String>> slowInFlight() throws InterruptedException {
        CompletableFuture<HttpResponse<String>> first = http.sendAsync(
                HttpRequest.newBuilder(URI.create(gw.url() + "/slow")).build(), HttpResponse.BodyHandlers.ofString());
        await("the first request reached the backend").atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(5))
                .until(() -> sim.stats().requests("/a") >= 1);
        return first;
    }

    /** A connection to the gateway that has sent {@code bytes} as they are (reads time out after 10 s). */
    private Socket sendRaw(String bytes) throws IOException {
        Socket s = new Socket();
        try {
            s.connect(new InetSocketAddress("127.0.0.1", URI.create(gw.url()).getPort()), 10_000);
            s.setSoTimeout(10_000);
            s.getOutputStream().write(bytes.getBytes(StandardCharsets.US_ASCII));
            return s;
        } catch (IOException e) {
            s.close();
            throw e;
        }
    }

    @Test
    void aShedRequestGets503WithRetryAfterAndReachesNoBackend() throws Exception {
        start(oneSlowPlace("2s") + """
                  - get: /fast
                    calls:
                      b: { url: "SIM/b" }
                """);
        CompletableFuture<HttpResponse<String>> first = slowInFlight();
        HttpResponse<String> shed = get("/slow");
        assertThat(shed.statusCode()).isEqualTo(503);
        assertThat(shed.headers().firstValue("retry-after")).contains("1");
        assertThat(shed.headers().firstValue("content-type").orElse("")).startsWith("application/json");
        assertThat(JSON.readTree(shed.body()).get("error").asText()).contains("GET /slow").contains("limit 1");

        assertThat(get("/fast").statusCode()).as("another route has its own limit").isEqualTo(200);

        assertThat(first.get().statusCode()).isEqualTo(200);
        assertThat(sim.stats().requests("/a")).as("the shed request called no backend").isEqualTo(1);
        assertThat(get("/slow").statusCode()).as("the place is free again").isEqualTo(200);

        String metrics = get("/-/metrics").body();
        assertThat(metrics).contains("weft_admission_shed_total{route=\"GET /slow\"} 1.0");
        assertThat(metrics).contains("weft_admission_limit{route=\"GET /slow\"} 1.0");
        assertThat(metrics).contains("weft_admission_in_flight{route=\"GET /fast\"}");
        assertThat(metrics).contains("weft_admission_lag_seconds");
        assertThat(metrics).contains("weft_admission_cpu_share");
        assertThat(metrics).contains("weft_admission_shed_all_total 1.0");
        // the 503's own time in the gateway: one observation, and its bucket bounds are the documented ones
        assertThat(metrics).contains("weft_admission_shed_duration_seconds_count 1");
        assertThat(metrics).contains("weft_admission_shed_duration_seconds_bucket{le=\"5.0\"} 1");
        // the scheduler probe wakes every 10 ms: by now it has been observed
        assertThat(Scrape.value(metrics, "weft_scheduler_lag_seconds_count")).isPositive();
    }

    @Test
    void shedRequestsAndUnreadableOnesAreInTheAccessLog() throws Exception {
        Path log = dir.resolve("access.log");
        start("""
                access_log: "%s"
                limits: { header_timeout: 300ms, body_timeout: 300ms }
                """.formatted(log) + oneSlowPlace("1s"));
        CompletableFuture<HttpResponse<String>> first = slowInFlight();
        String trace = "4bf92f3577b34da6a3ce929d0e0e4736";
        HttpResponse<String> shed = http.send(HttpRequest.newBuilder(URI.create(gw.url() + "/slow"))
                .header("traceparent", "00-" + trace + "-00f067aa0ba902b7-01").build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(shed.statusCode()).isEqualTo(503);
        try (Socket s = sendRaw("GET /slow HTTP/1.1\r\n\r\n")) { // no Host: 400
            assertThat(new String(s.getInputStream().readAllBytes(), StandardCharsets.US_ASCII))
                    .startsWith("HTTP/1.1 400 ");
        }
        try (Socket s = sendRaw("GET /slow HTTP/1.1\r\n")) { // a head that never ends: closed, no line
            assertThat(s.getInputStream().read()).as("closed without an answer").isEqualTo(-1);
        }
        try (Socket s = sendRaw("POST /slow HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc")) { // a body that stops
            assertThat(s.getInputStream().read()).as("closed without an answer").isEqualTo(-1);
        }
        String metrics = get("/-/metrics").body();
        assertThat(metrics).contains("weft_gateway_connections_header_timeouts_total 1.0");
        assertThat(metrics).contains("weft_gateway_connections_body_timeouts_total 1.0");
        assertThat(metrics).contains("weft_gateway_connections_write_timeouts_total 0.0");
        assertThat(first.get().statusCode()).isEqualTo(200);
        gw.close(); // flushes the access log
        gw = null;
        java.util.List<com.fasterxml.jackson.databind.JsonNode> lines = new java.util.ArrayList<>();
        for (String l : Files.readAllLines(log)) {
            lines.add(JSON.readTree(l));
        }
        assertThat(lines).as("served, shed, unreadable, /-/metrics").hasSize(4);
        com.fasterxml.jackson.databind.JsonNode refused = lines.stream()
                .filter(n -> n.get("status").asInt() == 503).findFirst().orElseThrow();
        assertThat(refused.get("refused_by").asText()).isEqualTo("admission");
        assertThat(refused.get("route").asText()).isEqualTo("GET /slow");
        assertThat(refused.get("method").asText()).isEqualTo("GET");
        assertThat(refused.get("path").asText()).isEqualTo("/slow");
        assertThat(refused.get("trace_id").asText()).as("the caller's trace").isEqualTo(trace);
        assertThat(refused.get("completed").asBoolean()).isFalse();
        assertThat(refused.get("duration_ms").isNumber()).isTrue();
        assertThat(refused.get("bytes").asInt()).isEqualTo(shed.body().length());
        com.fasterxml.jackson.databind.JsonNode unreadable = lines.stream()
                .filter(n -> n.get("status").asInt() == 400).findFirst().orElseThrow();
        assertThat(unreadable.get("refused_by").asText()).isEqualTo("parser");
        assertThat(unreadable.get("method").isNull()).isTrue();
        assertThat(unreadable.get("path").isNull()).isTrue();
        assertThat(unreadable.get("duration_ms").isNull()).isTrue();
        assertThat(unreadable.get("remote").asText()).startsWith("127.0.0.1:");
        com.fasterxml.jackson.databind.JsonNode served = lines.stream()
                .filter(n -> n.get("path").asText().equals("/slow") && n.get("status").asInt() == 200)
                .findFirst().orElseThrow();
        assertThat(served.has("refused_by")).as("a request the gateway served").isFalse();
        assertThat(served.get("completed").asBoolean()).isTrue();
    }

    @Test
    void theCpuTheFrontDoorSpendsRefusingIsMeasured() throws Exception {
        start(oneSlowPlace("2s"));
        CompletableFuture<HttpResponse<String>> first = slowInFlight();
        String metrics = get("/-/metrics").body();
        assertThat(Scrape.value(metrics, "weft_admission_refusing_cpu_share")).as("nothing refused yet").isZero();
        // refused by the door for 700 ms, more than the five revisions (500 ms) its share is taken over
        long until = System.nanoTime() + Duration.ofMillis(700).toNanos();
        int refused = 0;
        while (System.nanoTime() - until < 0) {
            assertThat(get("/slow").statusCode()).isEqualTo(503);
            refused++;
        }
        metrics = get("/-/metrics").body();
        assertThat(Scrape.value(metrics, "weft_admission_refusing_cpu_share")).as("after %d refusals", refused)
                .isGreaterThan(0).isLessThanOrEqualTo(Scrape.value(metrics, "weft_admission_cpu_share"));
        assertThat(first.get().statusCode()).isEqualTo(200);
    }

    /** The default admission with no queue and one place for GET /slow, whose one call takes {@code latency}. */
    private static String oneSlowPlace(String latency) {
        return """
                admission:
                  queue: 0
                  routes: { "GET /slow": 1 }
                routes:
                  - get: /slow
                    timeout: 20s
                    calls:
                      a: { url: "SIM/a?latency=%s", timeout: 20s }
                """.formatted(latency);
    }

    @Test
    void byDefaultEachRouteHasAnAdaptiveLimitThatStartsAtItsCeiling() throws Exception {
        start("""
                limits: { max_concurrent: 300 }
                admission: { routes: { "GET /bounded": 40 } }
                routes:
                  - get: /open
                    calls:
                      a: { url: "SIM/a" }
                  - get: /bounded
                    calls:
                      b: { url: "SIM/b" }
                """);
        assertThat(get("/open").statusCode()).isEqualTo(200);
        assertThat(get("/bounded").statusCode()).isEqualTo(200);
        String metrics = get("/-/metrics").body();
        // no admission.enabled: the adaptive limit per route, at the ceiling until a shortage of CPU cuts it
        assertThat(metrics).contains("weft_admission_limit{route=\"GET /open\"} 300.0");
        assertThat(metrics).contains("weft_admission_limit{route=\"GET /bounded\"} 40.0");
        assertThat(metrics).contains("weft_admission_cpu_share");
        assertThat(metrics).contains("weft_admission_shed_all_total 0.0");
    }

    @Test
    void withoutTheAdaptiveLimitMaxConcurrentStillSheds() throws Exception {
        start("""
                limits: { max_concurrent: 1, max_wait: 0ms }
                admission: { enabled: false }
                routes:
                  - get: /slow
                    timeout: 20s
                    calls:
                      a: { url: "SIM/a?latency=2s", timeout: 20s }
                """);
        CompletableFuture<HttpResponse<String>> first = slowInFlight();
        HttpResponse<String> shed = get("/slow");
        assertThat(shed.statusCode()).isEqualTo(503);
        assertThat(shed.headers().firstValue("retry-after")).contains("1");
        assertThat(shed.body()).contains("max_concurrent");
        assertThat(first.get().statusCode()).isEqualTo(200);
        assertThat(sim.stats().requests("/a")).isEqualTo(1);
    }

    @Test
    void aCpuBusyOutsideZeroToOneIsNamedWithItsPlace() throws Exception {
        assertThatThrownBy(() -> GatewayConfigLoader.parse("gw.yaml", """
                admission:
                  enabled: true
                  cpu_busy: 1.5
                routes:
                  - get: /p
                    calls:
                      a: { url: "http://127.0.0.1:9/a" }
                """)).isInstanceOf(ConfigException.class).hasMessageContaining("gw.yaml:3:13")
                .hasMessageContaining("from 0.0 to 1.0");
        assertThat(GatewayConfigLoader.parse("gw.yaml", """
                admission:
                  enabled: true
                  cpu_busy: 0
                routes:
                  - get: /p
                    calls:
                      a: { url: "http://127.0.0.1:9/a" }
                """).admission().cpuBusy()).as("0: the lag alone decides").isZero();
    }

    @Test
    void aQueueingRatioBelowOneIsNamedWithItsPlace() throws Exception {
        assertThatThrownBy(() -> GatewayConfigLoader.parse("gw.yaml", """
                admission:
                  queueing: 0.5
                routes:
                  - get: /p
                    calls:
                      a: { url: "http://127.0.0.1:9/a" }
                """)).isInstanceOf(ConfigException.class).hasMessageContaining("gw.yaml:2:13")
                .hasMessageContaining("admission.queueing is 0 (off) or a ratio of 1 to 100");
        String yaml = """
                admission:
                  queueing: %s
                routes:
                  - get: /p
                    calls:
                      a: { url: "http://127.0.0.1:9/a" }
                """;
        assertThat(GatewayConfigLoader.parse("gw.yaml", yaml.formatted("0")).admission().queueing()).as("0: off").isZero();
        assertThat(GatewayConfigLoader.parse("gw.yaml", yaml.formatted("2")).admission().queueing()).isEqualTo(2.0);
        assertThat(GatewayConfigLoader.parse("gw.yaml", """
                routes:
                  - get: /p
                    calls:
                      a: { url: "http://127.0.0.1:9/a" }
                """).admission().queueing()).as("the default").isEqualTo(AdmissionPolicy.DEFAULT_QUEUEING);
    }

    @Test
    void anUnknownRouteInAdmissionIsNamedWithItsPlace() {
        assertThatThrownBy(() -> GatewayConfigLoader.parse("gw.yaml", """
                admission:
                  enabled: true
                  routes: { "GET /nope": 5 }
                routes:
                  - get: /p
                    calls:
                      a: { url: "http://127.0.0.1:9/a" }
                """)).isInstanceOf(ConfigException.class).hasMessageContaining("gw.yaml:3:")
                .hasMessageContaining("GET /nope");
    }

    @Test
    void aDoorNiceOutsideMinusTwentyToZeroIsNamedWithItsPlace() throws Exception {
        assertThatThrownBy(() -> GatewayConfigLoader.parse("gw.yaml", """
                admission:
                  door_nice: 5
                routes:
                  - get: /p
                    calls:
                      a: { url: "http://127.0.0.1:9/a" }
                """)).isInstanceOf(ConfigException.class).hasMessageContaining("gw.yaml:2:14");
        assertThat(GatewayConfigLoader.parse("gw.yaml", """
                admission:
                  door_nice: 0
                routes:
                  - get: /p
                    calls:
                      a: { url: "http://127.0.0.1:9/a" }
                """).admission().doorNice()).as("0: the door is left at the process's priority").isZero();
    }

    @Test
    void doorFallbackIsAutoLowerOthersOrNoneAndAnythingElseIsNamedWithItsPlace() throws Exception {
        String routes = """
                routes:
                  - get: /p
                    calls:
                      a: { url: "http://127.0.0.1:9/a" }
                """;
        assertThatThrownBy(() -> GatewayConfigLoader.parse("gw.yaml", """
                admission:
                  door_fallback: lower
                """ + routes)).isInstanceOf(ConfigException.class).hasMessageContaining("gw.yaml:2:18")
                .hasMessageContaining("auto").hasMessageContaining("lower_others").hasMessageContaining("none");
        assertThat(GatewayConfigLoader.parse("gw.yaml", routes).admission().doorFallback())
                .as("the default: lower the other threads where the process is alone in its CPU cgroup")
                .isEqualTo(AdmissionPolicy.DoorFallback.AUTO);
        for (AdmissionPolicy.DoorFallback f : AdmissionPolicy.DoorFallback.values()) {
            String value = f.name().toLowerCase(java.util.Locale.ROOT);
            assertThat(GatewayConfigLoader.parse("gw.yaml", "admission: { door_fallback: " + value + " }\n" + routes)
                    .admission().doorFallback()).as(value).isEqualTo(f);
        }
    }

    @Test
    void theFrontDoorsNiceIsInTheMetrics() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(java.nio.file.Files.isDirectory(java.nio.file.Path.of("/proc/thread-self")),
                "thread priorities are set on Linux only");
        // read first: where the door may not raise itself it lowers the other threads, this one too
        int process = dev.weft.os.ThreadNice.current();
        boolean mayRaise = dev.weft.os.ThreadNice.mayRaiseTo(-5);
        start(oneSlowPlace("10ms"));
        assertThat(get("/slow").statusCode()).isEqualTo(200);
        // the default door_nice, -5: taken where the process may raise a thread (CAP_SYS_NICE), else the process's
        assertThat(Scrape.value(get("/-/metrics").body(), "weft_admission_door_nice"))
                .as("the process at %d, may raise %s", process, mayRaise)
                .isEqualTo(mayRaise ? Math.min(-5, process) : process);
        if (mayRaise) { // else it lowered the others, or (a later door in this JVM) could not: DoorFallbackIT
            assertThat(Scrape.value(get("/-/metrics").body(), "weft_admission_door_lead"))
                    .isEqualTo(process - Math.min(-5, process));
        }
    }
}
