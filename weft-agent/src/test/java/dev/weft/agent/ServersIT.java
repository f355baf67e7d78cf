package dev.weft.agent;

import dev.weft.agent.apps.ServersApp;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Embedded Tomcat 11 and Jetty 12 serving over loopback in a child JVM with the agent. */
class ServersIT {
    static String get(String url) throws Exception {
        try (HttpClient client = HttpClient.newHttpClient()) {
            HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(30)).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            return r.body();
        }
    }

    static ChildJvm server(String agentOptions, String server) throws Exception {
        return ChildJvm.start(ChildJvm.java(), agentOptions, List.of(), ChildJvm.classpath(),
                ServersApp.class.getName(), List.of(server));
    }

    @Test
    void tomcatServesOnVirtualThreadsNamedAsItsExecutorNamesThem() throws Exception {
        try (ChildJvm app = server("", "tomcat")) {
            String base = app.awaitLine("READY ").substring("READY ".length());
            assertThat(get(base + "/")).matches("http-nio-127\\.0\\.0\\.1-auto-\\d+-exec-\\d+ virtual");
            assertThat(app.stderr()).containsPattern("weft agent: http-nio-127\\.0\\.0\\.1-auto-\\d+-exec-N "
                    + "\\(org\\.apache\\.tomcat\\.util\\.threads\\.ThreadPoolExecutor\\): virtual threads, 200 tasks at once");
            app.process.getOutputStream().close();
            assertThat(app.awaitLine("stopped")).isEqualTo("stopped");
            assertThat(app.exit()).isZero();
        }
    }

    @Test
    void concurrencyRaisesTomcatsMaximumOnly() throws Exception {
        try (ChildJvm app = server("concurrency=500", "tomcat")) {
            String base = app.awaitLine("READY ").substring("READY ".length());
            assertThat(get(base + "/")).endsWith(" virtual");
            // Tomcat's TaskQueue starts threads up to the maximum itself: its core (minSpareThreads, 10) stays
            assertThat(app.stderr()).containsPattern("weft agent: http-nio-127\\.0\\.0\\.1-auto-\\d+-exec-N "
                    + "\\(org\\.apache\\.tomcat\\.util\\.threads\\.ThreadPoolExecutor\\): virtual threads, 500 tasks at "
                    + "once \\(concurrency=500; was 200\\); core 10, max 200 platform threads before");
        }
    }

    @Test
    void withoutTheAgentTomcatServesOnPlatformThreads() throws Exception {
        try (ChildJvm app = server(null, "tomcat")) {
            String base = app.awaitLine("READY ").substring("READY ".length());
            assertThat(get(base + "/")).matches("http-nio-127\\.0\\.0\\.1-auto-\\d+-exec-\\d+ platform");
        }
    }

    @Test
    void jettyRunsBlockingHandlersOnVirtualThreadsThroughItsHook() throws Exception {
        try (ChildJvm app = server("", "jetty")) {
            String base = app.awaitLine("READY ").substring("READY ".length());
            assertThat(get(base + "/")).matches("qtp\\d+-virtual-\\d+ virtual");
            assertThat(app.stderr()).containsPattern("weft agent: qtp\\d+-virtual-N \\(org\\.eclipse\\.jetty\\.util\\.thread"
                    + "\\.QueuedThreadPool\\): blocking handlers on virtual threads, 200 at once \\(maxThreads\\)");
        }
    }

    @Test
    void jettysVirtualThreadsWaitInOrderBoundedByItsQueueAndNotPastItsStop() throws Exception {
        try (ChildJvm app = ChildJvm.start(ChildJvm.java(), "", List.of(), ChildJvm.classpath(),
                dev.weft.agent.apps.JettyQueueApp.class.getName(), List.of())) {
            java.util.Map<String, String> f = app.facts();
            assertThat(f).containsEntry("jetty.executor", "true").containsEntry("jetty.filled", "true");
            // 20 running, 3 waiting (the pool's queue of 3): a fourth is refused, as Jetty's own pool refuses
            assertThat(f).containsEntry("jetty.fourth", "rejected");
            assertThat(f).containsEntry("jetty.waitingRan", "true").containsEntry("jetty.order", "w1,w2,w3")
                    .containsEntry("jetty.refilled", "true");
            // stopped: nothing more accepted, the waiting jobs never run (closed, as Jetty closes its queued jobs)
            assertThat(f).containsEntry("jetty.executeAfterStop", "rejected").containsEntry("jetty.heldEnded", "true")
                    .containsEntry("jetty.queuedRanAfterStop", "false").containsEntry("jetty.queuedClosed", "true");
            assertThat(f).containsEntry("jetty.ranAfterRestart", "true");
            assertThat(app.stderr()).containsPattern("weft agent: qtp\\d+-virtual-N .*20 at once \\(maxThreads\\), up to 3 waiting");
        }
    }

    @Test
    void withoutTheAgentJettyRunsHandlersOnItsPlatformThreads() throws Exception {
        try (ChildJvm app = server(null, "jetty")) {
            String base = app.awaitLine("READY ").substring("READY ".length());
            assertThat(get(base + "/")).matches("qtp\\d+-\\d+ platform");
        }
    }
}
