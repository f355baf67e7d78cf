package dev.weft.dispatch;

import dev.weft.dispatch.config.DispatchConfigLoader;
import dev.weft.dispatch.engine.Dispatcher;
import dev.weft.dispatch.engine.EndpointStatus;
import dev.weft.dispatch.status.StatusServer;
import dev.weft.server.HttpServer;
import dev.weft.server.ServerResponse;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Endpoint state on the real broker: the admin endpoint (token, 404), a pause that parks and a resume that
 * releases, the state shared by two instances of one group, and kept over a restart (paused and disabled).
 */
class EndpointStateIT {
    static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    /** A receiver that records the webhook-ids it got, answering {@code status}. */
    record Receiver(HttpServer server, Set<String> ids, AtomicInteger requests) implements AutoCloseable {
        static Receiver start(int status) throws Exception {
            Set<String> ids = ConcurrentHashMap.newKeySet();
            AtomicInteger n = new AtomicInteger();
            HttpServer s = HttpServer.builder(r -> {
                        n.incrementAndGet();
                        ids.add(r.header("webhook-id"));
                        return ServerResponse.json(status, new byte[0]);
                    }).listen(new InetSocketAddress("127.0.0.1", 0)).start();
            return new Receiver(s, ids, n);
        }

        @Override
        public void close() {
            server.close();
        }
    }

    /**
     * The one place test configs are built (an endpoint line per receiver; short retries so nothing waits long).
     * The target guard's {@code allow_private: true} belongs in {@link #endpointLine} when it exists.
     */
    static String config(String topic, String group, List<String> ids, List<String> urls) throws Exception {
        StringBuilder b = new StringBuilder(DispatchIT.source(topic, group)).append("endpoints:\n");
        for (int i = 0; i < ids.size(); i++) {
            b.append(endpointLine(ids.get(i), urls.get(i)));
        }
        return b.toString();
    }

    static String endpointLine(String id, String url) {
        return "  - { id: " + id + ", url: \"" + url + "\", retry: [200ms], max_in_flight: 4, queue: 4, allow_private: true }\n";
    }

    static Dispatcher dispatcher(String yaml) throws Exception {
        return Dispatcher.start(DispatchConfigLoader.parse("test.yaml", yaml), TestKafka.bootstrap(),
                new PrometheusMeterRegistry(PrometheusConfig.DEFAULT), line -> System.out.println("dispatch: " + line));
    }

    static HttpResponse<String> post(String url, String token) throws Exception {
        HttpRequest.Builder r = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(60))
                .POST(HttpRequest.BodyPublishers.noBody());
        if (token != null) {
            r.header("Authorization", "Bearer " + token);
        }
        return HTTP.send(r.build(), HttpResponse.BodyHandlers.ofString());
    }

    static List<String> values(int from, int n) {
        List<String> v = new ArrayList<>();
        for (int i = from; i < from + n; i++) {
            v.add("{\"n\":" + i + "}");
        }
        return v;
    }

    @Test
    void pauseParksAndResumeReleasesThroughTheAdminEndpointWithItsToken() throws Exception {
        String topic = TestKafka.topic("pause", 2);
        try (Receiver a = Receiver.start(204); Receiver other = Receiver.start(204);
             Dispatcher d = dispatcher(config(topic, "g-pause", List.of("a", "other"),
                     List.of(a.server().url(), other.server().url())));
             StatusServer status = StatusServer.start(new InetSocketAddress("127.0.0.1", 0), d,
                     new PrometheusMeterRegistry(PrometheusConfig.DEFAULT), "s3cret-token")) {
            TestKafka.produce(topic, values(0, 5), null);
            assertThat(TestKafka.await(Duration.ofSeconds(60), () -> a.ids().size() == 5)).isTrue();

            HttpResponse<String> none = post(status.url() + "/-/endpoints/a/pause", null);
            assertThat(none.statusCode()).isEqualTo(401);
            assertThat(none.headers().firstValue("content-type").orElse("")).contains("json");
            assertThat(none.body()).contains("\"error\"");
            assertThat(post(status.url() + "/-/endpoints/a/pause", "wrong").statusCode()).isEqualTo(401);
            assertThat(DispatchIT.endpoint(d, "a").state()).isEqualTo(EndpointStatus.State.ACTIVE);
            HttpResponse<String> unknown = post(status.url() + "/-/endpoints/nope/pause", "s3cret-token");
            assertThat(unknown.statusCode()).isEqualTo(404);
            assertThat(unknown.body()).contains("nope");
            assertThat(post(status.url() + "/-/endpoints/a/explode", "s3cret-token").statusCode()).isEqualTo(404);

            HttpResponse<String> paused = post(status.url() + "/-/endpoints/a/pause", "s3cret-token");
            assertThat(paused.statusCode()).isEqualTo(200);
            assertThat(paused.body()).contains("\"state\":\"paused\"");

            TestKafka.produce(topic, values(5, 20), null);
            assertThat(TestKafka.await(Duration.ofSeconds(60), () -> other.ids().size() == 25))
                    .as("the other endpoint goes on").isTrue();
            assertThat(TestKafka.await(Duration.ofSeconds(30), () -> DispatchIT.endpoint(d, "a").parkedRoom() >= 20))
                    .as("the paused endpoint's deliveries are parked on its wait topic").isTrue();
            assertThat(a.ids()).as("nothing reaches a paused endpoint").hasSize(5);
            assertThat(TestKafka.awaitCommitted("g-pause", topic, 25, Duration.ofSeconds(30)))
                    .as("parked is done for the source topic: it commits").isTrue();

            HttpResponse<String> resumed = post(status.url() + "/-/endpoints/a/resume", "s3cret-token");
            assertThat(resumed.statusCode()).isEqualTo(200);
            assertThat(TestKafka.await(Duration.ofSeconds(60), () -> a.ids().size() == 25))
                    .as("resume releases every parked delivery").isTrue();
        }
    }

    @Test
    void stateIsSharedByInstancesAndSurvivesARestart() throws Exception {
        String topic = TestKafka.topic("state", 2);
        try (Receiver a = Receiver.start(204); Receiver gone = Receiver.start(410)) {
            String yaml = config(topic, "g-state", List.of("a", "gone"), List.of(a.server().url(), gone.server().url()));
            try (Dispatcher one = dispatcher(yaml); Dispatcher two = dispatcher(yaml)) {
                TestKafka.produce(topic, values(0, 4), null);
                assertThat(TestKafka.await(Duration.ofSeconds(60), () -> a.ids().size() == 4)).isTrue();
                assertThat(TestKafka.await(Duration.ofSeconds(60), () -> gone.requests().get() >= 1)).isTrue();
                // the instance that got the 410 wrote it; the other applies it
                assertThat(TestKafka.await(Duration.ofSeconds(30),
                        () -> DispatchIT.endpoint(one, "gone").state() == EndpointStatus.State.DISABLED
                                && DispatchIT.endpoint(two, "gone").state() == EndpointStatus.State.DISABLED))
                        .as("a 410 disables the endpoint on both instances").isTrue();
                one.control("a", Dispatcher.Action.PAUSE);
                assertThat(TestKafka.await(Duration.ofSeconds(30),
                        () -> DispatchIT.endpoint(two, "a").state() == EndpointStatus.State.PAUSED))
                        .as("a pause on one instance reaches the other").isTrue();
            }
            int before = a.ids().size();
            try (Dispatcher again = dispatcher(yaml)) {
                assertThat(DispatchIT.endpoint(again, "a").state()).as("paused after a restart")
                        .isEqualTo(EndpointStatus.State.PAUSED);
                assertThat(DispatchIT.endpoint(again, "gone").state()).as("disabled after a restart")
                        .isEqualTo(EndpointStatus.State.DISABLED);
                assertThat(DispatchIT.endpoint(again, "gone").disabled()).contains("410");
                TestKafka.produce(topic, values(4, 3), null);
                assertThat(TestKafka.await(Duration.ofSeconds(30), () -> DispatchIT.endpoint(again, "a").parkedRoom() >= 3))
                        .isTrue();
                assertThat(a.ids()).hasSize(before);
                int goneBefore = gone.requests().get();
                again.control("a", Dispatcher.Action.RESUME);
                again.control("gone", Dispatcher.Action.ENABLE);
                assertThat(DispatchIT.endpoint(again, "gone").state()).isEqualTo(EndpointStatus.State.ACTIVE);
                assertThat(TestKafka.await(Duration.ofSeconds(60), () -> a.ids().size() == 7)).isTrue();
                TestKafka.produce(topic, values(7, 1), null);
                assertThat(TestKafka.await(Duration.ofSeconds(60), () -> gone.requests().get() > goneBefore))
                        .as("an enabled endpoint is called again").isTrue();
            }
        }
    }
}
