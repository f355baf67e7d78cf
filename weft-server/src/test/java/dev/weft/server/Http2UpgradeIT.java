package dev.weft.server;

import dev.weft.server.admission.Admission;
import dev.weft.server.admission.FixedAdmission;
import dev.weft.server.http2.Http2Limits;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code Upgrade: h2c} for the JDK's {@link HttpClient} (it has no prior-knowledge mode), on a plain listener read
 * by a connection's own thread and by the front door: taken only where {@code http2.upgrade} asks for it.
 */
class Http2UpgradeIT {
    private static HttpServer start(boolean upgrade, boolean door) throws Exception {
        Admission admission = door ? DoorIT.admission(Map.of(), 0, Duration.ZERO)
                : new FixedAdmission(10_000, Duration.ofMillis(100));
        return HttpServer.builder(r -> {
                    Thread.sleep(50);
                    return ServerResponse.json(200, "{\"path\":\"" + r.path() + "\",\"body\":" + r.body().length + "}");
                }).admission(admission).http2(Http2Limits.DEFAULT.withUpgrade(upgrade)).start();
    }

    @ParameterizedTest(name = "through the front door: {0}")
    @ValueSource(booleans = {false, true})
    void whereAskedTheJdkClientUpgradesToH2cAndSendsEveryLaterRequestOnOneConnection(boolean door) throws Exception {
        try (HttpServer s = start(true, door);
             HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_2).build()) {
            String base = "http://127.0.0.1:" + s.addresses().getFirst().getPort();
            HttpResponse<String> first = client.send(HttpRequest.newBuilder(URI.create(base + "/first")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(first.version()).as("upgraded").isEqualTo(HttpClient.Version.HTTP_2);
            assertThat(first.body()).isEqualTo("{\"path\":\"/first\",\"body\":0}");
            List<CompletableFuture<HttpResponse<String>>> all = new ArrayList<>();
            for (int i = 0; i < 100; i++) {
                all.add(client.sendAsync(HttpRequest.newBuilder(URI.create(base + "/n" + i))
                        .POST(HttpRequest.BodyPublishers.ofString("x".repeat(i))).build(), HttpResponse.BodyHandlers.ofString()));
            }
            for (int i = 0; i < all.size(); i++) {
                HttpResponse<String> r = all.get(i).get(30, TimeUnit.SECONDS);
                assertThat(r.version()).isEqualTo(HttpClient.Version.HTTP_2);
                assertThat(r.body()).isEqualTo("{\"path\":\"/n" + i + "\",\"body\":" + i + "}");
            }
            assertThat(s.http2Metrics().connections()).as("one connection, upgraded").isEqualTo(1);
            assertThat(s.http2Metrics().streams()).isEqualTo(101);
        }
    }

    @org.junit.jupiter.api.Test
    void anEmptyPostOverH2IsAnswered() throws Exception {
        try (HttpServer s = start(true, false);
             HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_2).build()) {
            String base = "http://127.0.0.1:" + s.addresses().getFirst().getPort();
            assertThat(client.send(HttpRequest.newBuilder(URI.create(base + "/first")).build(),
                    HttpResponse.BodyHandlers.ofString()).version()).isEqualTo(HttpClient.Version.HTTP_2);
            for (HttpRequest.BodyPublisher empty : List.of(HttpRequest.BodyPublishers.noBody(),
                    HttpRequest.BodyPublishers.ofString(""))) {
                HttpResponse<String> r = client.sendAsync(HttpRequest.newBuilder(URI.create(base + "/empty"))
                        .POST(empty).build(), HttpResponse.BodyHandlers.ofString()).get(5, TimeUnit.SECONDS);
                assertThat(r.version()).isEqualTo(HttpClient.Version.HTTP_2);
                assertThat(r.body()).isEqualTo("{\"path\":\"/empty\",\"body\":0}");
            }
        }
    }

    @ParameterizedTest(name = "through the front door: {0}")
    @ValueSource(booleans = {false, true})
    void byDefaultAnUpgradeIsIgnoredAndAnsweredOverHttp11(boolean door) throws Exception {
        try (HttpServer s = start(false, door);
             HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_2).build()) {
            String base = "http://127.0.0.1:" + s.addresses().getFirst().getPort();
            HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create(base + "/first")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(r.version()).isEqualTo(HttpClient.Version.HTTP_1_1);
            assertThat(r.body()).isEqualTo("{\"path\":\"/first\",\"body\":0}");
            assertThat(s.http2Metrics().connections()).isZero();
        }
    }
}
