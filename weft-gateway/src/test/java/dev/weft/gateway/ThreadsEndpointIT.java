package dev.weft.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.weft.gateway.config.GatewayConfig;
import dev.weft.gateway.config.GatewayConfigLoader;
import dev.weft.gateway.server.Gateway;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;

import static org.assertj.core.api.Assertions.assertThat;

/** GET /-/threads: weft doctor's report of the gateway's own process, over real HTTP. */
class ThreadsEndpointIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private Gateway gw;

    @AfterEach
    void stop() {
        if (gw != null) {
            gw.close();
        }
        http.close();
    }

    private HttpResponse<String> get(String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(gw.url() + path)).timeout(Duration.ofSeconds(30)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void reportsTheGatewaysVirtualThreadsAndARunawayAmongThem() throws Exception {
        GatewayConfig cfg = GatewayConfigLoader.parse("gw.yaml", "routes:\n  - get: /x\n    calls:\n"
                + "      a: { url: \"http://127.0.0.1:9/a\" }\n");
        gw = Gateway.start(cfg, new InetSocketAddress("127.0.0.1", 0), null, line -> { });
        CountDownLatch parked = new CountDownLatch(50);
        for (int i = 0; i < 50; i++) {
            Thread.ofVirtual().name("parked-" + i).start(() -> {
                parked.countDown();
                try {
                    Thread.sleep(60_000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
        }
        parked.await();
        Thread spinner = Thread.ofVirtual().name("test-spinner").start(ThreadsEndpointIT::spinUntilInterrupted);
        try {
            HttpResponse<String> r = get("/-/threads?for=600ms");
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            JsonNode report = JSON.readTree(r.body());
            assertThat(report.path("executionSamples").asInt()).as(r.body()).isGreaterThanOrEqualTo(20);
            assertThat(report.path("runaways").findValuesAsText("name")).as(r.body()).contains("test-spinner");
            assertThat(report.path("carriers").path("parallelism").asInt()).isPositive();
            assertThat(report.path("virtualThreads").isNull()).as("no census unless asked").isTrue();

            JsonNode census = JSON.readTree(get("/-/threads?for=300ms&census=true").body());
            assertThat(census.path("virtualThreads").path("byState").path("TIMED_WAITING").asInt())
                    .isGreaterThanOrEqualTo(50);
        } finally {
            spinner.interrupt();
        }
        assertThat(get("/-/threads?for=1h").statusCode()).isEqualTo(400);
        assertThat(get("/-/threads?bogus=1").statusCode()).isEqualTo(400);
        assertThat(get("/-/metrics").body()).contains("weft_threads_runaways_total");
    }

    private static void spinUntilInterrupted() {
        long x = 0;
        while (!Thread.currentThread().isInterrupted()) {
            x += System.nanoTime() & 3;
        }
        if (x == 42) {
            System.out.println();
        }
    }
}
