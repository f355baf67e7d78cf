package dev.weft.agent;

import dev.weft.agent.apps.ConnectionPoolsApp;
import dev.weft.agent.apps.KeepAliveApp;
import dev.weft.agent.apps.OkHttpApp;
import dev.weft.agent.apps.PoolsApp;
import dev.weft.upstream.UpstreamConfig;
import dev.weft.upstream.UpstreamServer;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import javax.tools.ToolProvider;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The agent in child JVMs started with {@code -javaagent:target/weft-agent.jar}: an application that knows
 * nothing of it ({@link PoolsApp}) gets virtual threads named as its factories name them, and everything its
 * pools promised stays.
 */
class AgentIT {
    private static final String[] POOL_SCENARIOS = {"fixed", "cached", "single", "custom", "hooks", "abort",
            "callerruns", "shutdownnow", "invokeall", "subclass", "scheduled"};

    @Test
    void poolsRunOnVirtualThreadsNamedByTheirFactoriesAndKeepWhatTheyPromised() throws Exception {
        Map<String, String> f;
        try (ChildJvm app = ChildJvm.app("", PoolsApp.class, POOL_SCENARIOS)) {
            f = app.facts();
            assertThat(app.stderr()).containsPattern("weft agent: pool-\\d+-thread-N \\(java.util.concurrent.ThreadPoolExecutor\\): "
                    + "virtual threads, 3 tasks at once \\(as before\\); core 3, max 3 platform threads before");
            assertThat(app.stderr()).contains("weft agent: http-worker-N (java.util.concurrent.ThreadPoolExecutor): virtual threads")
                    .doesNotContain("internal error");
        }
        // fixed: three workers, virtual, the factory's names; the statistics are the executor's
        assertThat(f.get("fixed.threads")).matches("\\[pool-(\\d+)-thread-1 virtual, pool-\\1-thread-2 virtual, "
                + "pool-\\1-thread-3 virtual]");
        assertThat(f).containsEntry("fixed.poolSize", "3").containsEntry("fixed.max", "3")
                .containsEntry("fixed.completed", "4").containsEntry("fixed.terminated", "true");
        assertThat(f).containsEntry("fixed.mbean", "true").containsEntry("fixed.mbean.poolSize", "3")
                .containsEntry("fixed.mbean.max", "3")
                .containsEntry("fixed.mbean.class", "java.util.concurrent.ThreadPoolExecutor");
        // cached: a thread per concurrent task, each virtual
        assertThat(f.get("cached.threads").split(", ")).hasSize(5)
                .allSatisfy(t -> assertThat(t).matches("\\[?pool-\\d+-thread-\\d virtual]?"));
        // single: one virtual worker, tasks in order
        assertThat(f.get("single.threads")).matches("\\[pool-\\d+-thread-1 virtual]");
        assertThat(f).containsEntry("single.inOrder", "true");
        // a custom factory: its names, its uncaught-exception handler, its context class loader
        assertThat(f).containsEntry("custom.threads", "[http-worker-1 virtual, http-worker-2 virtual]")
                .containsEntry("custom.loader", "the-factory's-loader")
                .containsEntry("custom.handlerCalled", "true");
        assertThat(f.get("custom.caught")).matches("http-worker-\\d virtual: boom");
        // a subclass's hooks run on the worker, which is the virtual thread
        assertThat(f.get("hooks.calls")).matches("\\[before on (pool-\\d+-thread-1) virtual current true, task on \\1 virtual, "
                + "after on \\1 virtual, terminated]");
        // a bounded queue still fills and AbortPolicy still refuses; the MBean counts it
        assertThat(f).containsEntry("abort.third", "rejected").containsEntry("abort.queued", "1")
                .containsEntry("abort.mbean.rejected", "1").containsEntry("abort.mbean.queued", "1")
                .containsEntry("abort.mbean.active", "1");
        // CallerRunsPolicy runs the refused task on the caller
        assertThat(f).containsEntry("callerruns.ranOn", "main platform");
        // shutdownNow interrupts the running virtual workers
        assertThat(f).containsEntry("shutdownnow.neverRan", "0").containsEntry("shutdownnow.terminated", "true")
                .containsEntry("shutdownnow.outcomes", "[interrupted on pool-K-thread-K virtual]");
        assertThat(f).containsEntry("invokeall.sum", "285").containsEntry("invokeall.virtual", "[true]");
        // left alone: a factory's Thread subclass, a ScheduledThreadPoolExecutor's timer threads
        assertThat(f).containsEntry("subclass.thread", "special-worker platform true")
                .containsEntry("scheduled.thread", "pool-K-thread-K platform");
    }

    @Test
    void whatAFactoryBuildsAroundTheTaskAndItsThreadGroupStay() throws Exception {
        try (ChildJvm app = ChildJvm.app("", PoolsApp.class, "wrapped", "group", "platformfactory", "started")) {
            Map<String, String> f = app.facts();
            // the factory's own Runnable around the Worker runs, on the virtual worker
            assertThat(f).containsEntry("wrapped.task", "wrapped-1 virtual")
                    .containsEntry("wrapped.log", "[wrapper on wrapped-1 virtual]");
            // a ThreadGroup subclass's uncaughtException is called, as on a platform thread of that group
            assertThat(f).containsEntry("group.handlerCalled", "true").containsEntry("group.caught", "grouped-1 virtual: boom");
            // Thread.ofPlatform().factory() is the JDK's public API: the application's pool is converted
            assertThat(f).containsEntry("platformfactory.thread", "plat-1 virtual");
            // a thread the factory started itself is not converted: the executor refuses it, as without the agent
            assertThat(f).containsEntry("started.outcome", "refused IllegalThreadStateException");
        }
    }

    @Test
    void anApplicationThatResizesAPoolUnderConcurrencyNKeepsWorking() throws Exception {
        try (ChildJvm app = ChildJvm.app("concurrency=50", PoolsApp.class, "resize")) {
            Map<String, String> f = app.facts();
            // setMaximumPoolSize(3) below the raised core (50) no longer throws, and the bound stays
            assertThat(f).containsEntry("resize.error", "none").containsEntry("resize.together", "50")
                    .containsEntry("resize.max", "50").containsEntry("resize.belowCore", "refused");
        }
    }

    @Test
    void droppedPoolsLeaveNoMBeanAndOneLinePerShape() throws Exception {
        try (ChildJvm app = ChildJvm.app("", PoolsApp.class, "churn")) {
            Map<String, String> f = app.facts();
            assertThat(f).containsEntry("churn.registeredAfterUse", "true").containsEntry("churn.left", "0");
            // 200 pools named pool-K-thread-N: one line
            assertThat(app.stderr().lines().filter(l -> l.matches("weft agent: pool-\\d+-thread-N .*")).count()).isEqualTo(1);
        }
    }

    @Test
    void aSecondJavaagentOfTheAgentIsIgnoredWithOneLine() throws Exception {
        try (ChildJvm app = ChildJvm.start(ChildJvm.java(), "", List.of("-javaagent:" + ChildJvm.agentJar() + "=verbose"),
                ChildJvm.testClasses(), PoolsApp.class.getName(), List.of("fixed"))) {
            Map<String, String> f = app.facts();
            assertThat(f.get("fixed.threads")).contains("virtual").doesNotContain("platform");
            assertThat(app.stderr().lines().filter(l -> l.startsWith("weft agent: already active")).toList())
                    .containsExactly("weft agent: already active; this second -javaagent (options 'verbose') is ignored");
            assertThat(app.stderr()).doesNotContain("weft agent: transforming");
        }
    }

    @Test
    void withoutTheAgentTheSameApplicationRunsOnPlatformThreads() throws Exception {
        // The control: the facts above are the agent's doing, not the application's.
        try (ChildJvm app = ChildJvm.start(ChildJvm.java(), null, List.of(), ChildJvm.testClasses(),
                PoolsApp.class.getName(), List.of("fixed", "custom", "hooks"))) {
            Map<String, String> f = app.facts();
            assertThat(f.get("fixed.threads")).matches("\\[pool-(\\d+)-thread-1 platform, pool-\\1-thread-2 platform, "
                    + "pool-\\1-thread-3 platform]");
            assertThat(f).containsEntry("fixed.mbean", "false")
                    .containsEntry("custom.threads", "[http-worker-1 platform, http-worker-2 platform]");
        }
    }

    @Test
    void aPoolOfNonDaemonThreadsKeepsTheJvmAliveUntilItIsShutDown() throws Exception {
        try (ChildJvm app = ChildJvm.app("", KeepAliveApp.class)) {
            // the keep-alive thread does not hold main's context class loader (an app's, kept from unloading)
            assertThat(app.awaitLine("keepalive loader")).isEqualTo("keepalive loader null");
            // main has returned; the pool's worker is a virtual (daemon) thread, and the JVM is still here
            assertThat(app.awaitLine("main ended")).isEqualTo("main ended; task on virtual daemon=true");
            app.send("go");
            assertThat(app.awaitLine("task finished")).isEqualTo("task finished after go");
            // the task shut its pool down: the last non-daemon worker is gone, and so is the JVM
            assertThat(app.exit()).isZero();
        }
    }

    @Test
    void excludeLeavesAPoolOnPlatformThreads() throws Exception {
        try (ChildJvm app = ChildJvm.app("exclude=batch-*,verbose", PoolsApp.class, "excluded")) {
            Map<String, String> f = app.facts();
            assertThat(f).containsEntry("excluded.batch", "batch-K platform").containsEntry("excluded.api", "api-K virtual");
            assertThat(app.stderr()).contains("weft agent: left on platform threads: batch-N (java.util.concurrent.ThreadPoolExecutor): "
                    + "exclude=batch-*");
        }
    }

    @Test
    void concurrencyLetsAPoolRunMoreTasksAtOnceButASingleThreadPoolKeepsItsOrder() throws Exception {
        try (ChildJvm app = ChildJvm.app("concurrency=50", PoolsApp.class, "concurrency")) {
            Map<String, String> f = app.facts();
            // 50 tasks that each wait for all 50 to start: a pool of 2 could never finish them
            assertThat(f).containsEntry("concurrency.together", "50").containsEntry("concurrency.poolSize", "50")
                    .containsEntry("concurrency.max", "50").containsEntry("concurrency.core", "50")
                    .containsEntry("concurrency.singleMostAtOnce", "1");
            assertThat(app.stderr()).containsPattern("pool-\\d+-thread-N \\(java.util.concurrent.ThreadPoolExecutor\\): virtual "
                    + "threads, 50 tasks at once \\(concurrency=50; was 2\\)");
        }
    }

    @Test
    void aJfrEventPerPoolCarriesItsFigures() throws Exception {
        try (ChildJvm app = ChildJvm.app("", PoolsApp.class, "jfr")) {
            Map<String, String> f = app.facts();
            assertThat(f).containsEntry("jfr.seen", "true")
                    .containsEntry("jfr.event", "pool=recorded-N active=1 queued=1 poolSize=1 max=1");
        }
    }

    @Test
    void aBadOptionLeavesTheApplicationAsItWasWithOneLine() throws Exception {
        try (ChildJvm app = ChildJvm.app("concurrency=lots", PoolsApp.class, "fixed")) {
            Map<String, String> f = app.facts();
            assertThat(f.get("fixed.threads")).contains("platform").doesNotContain("virtual");
            assertThat(app.stderr().lines().filter(l -> l.startsWith("weft agent:")).toList()).containsExactly(
                    "weft agent: not active: concurrency=lots is not a whole number; options (comma-separated): "
                            + "concurrency=N (1..1000000), exclude=GLOB (repeatable), verbose, pinned[=on|off], "
                            + "pinned_threshold=Nms|Ns (0ms..60s), threads=CLASSGLOB (repeatable); the application runs unchanged");
        }
    }

    @Test
    void jdk17IsRefusedWithOneLineAndTheApplicationRuns() throws Exception {
        Path java17 = jdk17();
        Assumptions.assumeTrue(java17 != null, "no JDK 17 under /usr/lib/jvm: the refusal on an old JDK is not tested here");
        Path classes = Files.createTempDirectory("weft-agent-jdk17-app");
        Path source = classes.resolve("Jdk17App.java");
        try (var in = AgentIT.class.getResourceAsStream("/Jdk17App.java.txt")) {
            Files.write(source, in.readAllBytes());
        }
        assertThat(ToolProvider.getSystemJavaCompiler().run(null, null, null, "--release", "17", "-d", classes.toString(),
                source.toString())).isZero();
        try (ChildJvm app = ChildJvm.start(java17.toString(), "concurrency=100", List.of(), classes.toString(), "Jdk17App",
                List.of())) {
            assertThat(app.exit()).isZero();
            app.drained();
            assertThat(app.stdout()).containsExactly("app ran on pool-1-thread-1 java 17");
            assertThat(app.stderr().lines().toList()).containsExactly("weft agent: not active: this JVM is Java 17; the agent "
                    + "needs JDK 25 or newer (JEP 491, in 24: before it, synchronized pins a virtual thread's carrier; its "
                    + "classes are of release 25); the application runs unchanged");
        }
    }

    private static Path jdk17() throws IOException {
        Path jvms = Path.of("/usr/lib/jvm");
        if (!Files.isDirectory(jvms)) {
            return null;
        }
        try (Stream<Path> s = Files.list(jvms)) {
            return s.filter(p -> p.getFileName().toString().contains("17"))
                    .map(p -> p.resolve("bin/java")).filter(Files::isExecutable).sorted().findFirst().orElse(null);
        }
    }

    @Test
    void underConcurrencyNConnectionPoolsSmallerThanNAreNamedOnce() throws Exception {
        try (ChildJvm app = ChildJvm.start(ChildJvm.java(), "concurrency=100", List.of(), ChildJvm.classpath(),
                ConnectionPoolsApp.class.getName(), List.of())) {
            app.facts();
            List<String> warnings = app.stderr().lines().filter(l -> l.startsWith("weft agent: warning:")).toList();
            assertThat(warnings).hasSize(2);
            assertThat(warnings.get(0)).matches("weft agent: warning: Apache HttpClient 5 PoolingHttpClientConnectionManager@\\p{XDigit}+ "
                    + "allows 5 connections per route, 25 in all \\(setDefaultMaxPerRoute, setMaxTotal\\), fewer than the 100 "
                    + "tasks a converted pool may now run at once: calls past it wait there for a connection");
            assertThat(warnings.get(1)).isEqualTo("weft agent: warning: HikariCP pool orders-db holds at most 10 connections "
                    + "(maximumPoolSize), fewer than the 100 tasks a converted pool may now run at once: calls past it wait "
                    + "there for a connection");
        }
        // at each pool's own bound nothing moved: no warning
        try (ChildJvm app = ChildJvm.start(ChildJvm.java(), "", List.of(), ChildJvm.classpath(),
                ConnectionPoolsApp.class.getName(), List.of())) {
            app.facts();
            assertThat(app.stderr()).doesNotContain("weft agent: warning");
        }
    }

    @Test
    void underConcurrencyNOkHttpDispatchersBelowNAreNamedOncePerDistinctLimits() throws Exception {
        // four asynchronous calls, one per client built per call, and a synchronous one: all answered 200
        String okHttpStatuses = java.util.Collections.nCopies(5 + OkHttpApp.PER_REQUEST, "200").toString();
        try (UpstreamServer sim = UpstreamServer.start(UpstreamConfig.local())) {
            String url = sim.url("/okhttp");
            try (ChildJvm app = ChildJvm.start(ChildJvm.java(), "concurrency=1000", List.of(), ChildJvm.classpath(),
                    OkHttpApp.class.getName(), List.of(url))) {
                Map<String, String> f = app.facts();
                assertThat(f.get("okhttp.statuses")).isEqualTo(okHttpStatuses);
                // the default limits (two clients sharing a dispatcher, three asynchronous calls, then a dispatcher per
                // call) once; the raised one not at all
                List<String> warnings = app.stderr().lines().filter(l -> l.startsWith("weft agent: warning:")).toList();
                assertThat(warnings).as(app.stderr()).singleElement().asString().matches("weft agent: warning: OkHttp "
                        + "Dispatcher@\\p{XDigit}+ \\(and any other with these limits\\) runs at most 64 asynchronous calls at once, 5 per host \\(setMaxRequests, "
                        + "setMaxRequestsPerHost\\), fewer than the 1000 tasks a converted pool may now run at once: calls "
                        + "past it wait there in its queue of ready calls");
            }
            // without concurrency=N the pools keep their bounds: nothing moved, nothing said
            try (ChildJvm app = ChildJvm.start(ChildJvm.java(), "", List.of(), ChildJvm.classpath(),
                    OkHttpApp.class.getName(), List.of(url))) {
                assertThat(app.facts().get("okhttp.statuses")).isEqualTo(okHttpStatuses);
                assertThat(app.stderr()).doesNotContain("weft agent: warning").doesNotContain("internal error");
            }
        }
    }
}
