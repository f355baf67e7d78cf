package dev.weft.agent;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.weft.legacy.LegacyService;
import dev.weft.upstream.UpstreamConfig;
import dev.weft.upstream.UpstreamServer;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The lab's unmodified service ({@link LegacyService}: JDK HttpServer, a fixed pool of 200 handlers, a fixed
 * pool of 200 for the backend calls) in a child JVM started with the agent at {@code concurrency=10000}, over
 * real sockets to weft-upstream backends: more requests than its 200 threads are in flight at once, each on a
 * virtual thread that keeps its pool's name ({@code http-handler-N}, {@code backend-call-N}), as a
 * {@code jcmd Thread.dump_to_file} of the child shows.
 */
class LegacyServiceIT {
    private static final int IN_FLIGHT = 300;

    @Test
    void handlerThreadsAreVirtualKeepTheirNamesAndOutnumberTheOldPool() throws Exception {
        UpstreamConfig config = UpstreamConfig.local().withListen(List.of(new InetSocketAddress("127.0.0.1", 0),
                new InetSocketAddress("127.0.0.1", 0), new InetSocketAddress("127.0.0.1", 0)));
        try (UpstreamServer sim = UpstreamServer.start(config);
             ChildJvm service = ChildJvm.start(ChildJvm.java(), "concurrency=10000", List.of(),
                     ChildJvm.classpath(), LegacyService.class.getName(),
                     List.of("--backends", urls(sim)));
             HttpClient client = HttpClient.newBuilder().executor(Executors.newVirtualThreadPerTaskExecutor())
                     .version(HttpClient.Version.HTTP_1_1).build()) {
            String base = service.awaitLine("READY ").substring("READY ".length());
            // long enough that all of them are in the service at once when it is looked at
            HttpRequest request = HttpRequest.newBuilder(URI.create(base + "/a/7?latency=5s"))
                    .timeout(Duration.ofSeconds(60)).build();
            List<CompletableFuture<HttpResponse<String>>> answers = new ArrayList<>();
            for (int i = 0; i < IN_FLIGHT; i++) {
                answers.add(client.sendAsync(request, HttpResponse.BodyHandlers.ofString()));
            }
            // every call of every request has reached the backends: each request holds a handler thread
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (sim.stats().requests() < 3L * IN_FLIGHT) {
                assertThat(System.nanoTime()).as("the backends saw %d of %d calls", sim.stats().requests(), 3 * IN_FLIGHT)
                        .isLessThan(deadline);
                Thread.sleep(20); // polling the condition: the simulator counts what it received
            }
            Map<String, Integer> threads = threads(service.process.pid());
            assertThat(threads.get("http-handler platform")).as("handler threads on platform threads").isNull();
            assertThat(threads.get("backend-call platform")).as("call threads on platform threads").isNull();
            assertThat(threads.get("http-handler virtual")).as(threads.toString()).isGreaterThanOrEqualTo(IN_FLIGHT);
            assertThat(threads.get("backend-call virtual")).as(threads.toString()).isGreaterThanOrEqualTo(3 * IN_FLIGHT);
            for (CompletableFuture<HttpResponse<String>> a : answers) {
                HttpResponse<String> r = a.get();
                assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
                assertThat(r.body()).startsWith("{\"b\":").contains(",\"c\":").contains(",\"d\":");
            }
            assertThat(service.stderr()).contains("weft agent: http-handler-N (java.util.concurrent.ThreadPoolExecutor): "
                    + "virtual threads, 10000 tasks at once (concurrency=10000; was 200)");
        }
    }

    private static String urls(UpstreamServer sim) {
        List<String> urls = new ArrayList<>();
        for (InetSocketAddress a : sim.addresses()) {
            urls.add("http://127.0.0.1:" + a.getPort());
        }
        return String.join(",", urls);
    }

    /** Threads of the child by pool and kind ({@code http-handler virtual} -> count), from jcmd's JSON dump. */
    private static Map<String, Integer> threads(long pid) throws Exception {
        Path dump = Files.createTempFile("weft-agent-dump", ".json");
        Files.delete(dump); // jcmd refuses to overwrite
        Process jcmd = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(),
                String.valueOf(pid), "Thread.dump_to_file", "-format=json", dump.toString())
                .redirectErrorStream(true).start();
        String said = new String(jcmd.getInputStream().readAllBytes());
        assertThat(jcmd.waitFor()).as(said).isZero();
        JsonNode root = new ObjectMapper().readTree(dump.toFile());
        Files.delete(dump);
        Map<String, Integer> byKind = new TreeMap<>();
        for (JsonNode container : root.path("threadDump").path("threadContainers")) {
            for (JsonNode t : container.path("threads")) {
                String name = t.path("name").asText();
                if (name.matches("(http-handler|backend-call)-\\d+")) {
                    // the dump marks virtual threads with "virtual": true
                    byKind.merge(name.replaceAll("-\\d+$", "") + (t.path("virtual").asBoolean(false) ? " virtual" : " platform"),
                            1, Integer::sum);
                }
            }
        }
        return byKind;
    }
}
