package dev.weft.agent;

import dev.weft.agent.apps.PoolsApp;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The OpenTelemetry Java agent (which instruments ThreadPoolExecutor too, to carry context into tasks)
 * attached before and after weft-agent: in both orders the pools run on virtual threads named by their
 * factories and keep their hooks, rejection and shutdownNow. Exporters off: nothing leaves the machine.
 */
class OpenTelemetryAgentIT {
    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void bothOrdersWork(boolean openTelemetryFirst) throws Exception {
        String weft = "-javaagent:" + ChildJvm.agentJar();
        String otel = "-javaagent:" + ChildJvm.otelAgentJar();
        List<String> flags = new ArrayList<>(openTelemetryFirst ? List.of(otel, weft) : List.of(weft, otel));
        flags.addAll(List.of("-Dotel.traces.exporter=none", "-Dotel.metrics.exporter=none", "-Dotel.logs.exporter=none"));
        try (ChildJvm app = ChildJvm.start(ChildJvm.java(), null, flags, ChildJvm.testClasses(), PoolsApp.class.getName(),
                List.of("fixed", "custom", "hooks", "abort", "shutdownnow", "scheduled"))) {
            Map<String, String> f = app.facts();
            assertThat(f.get("fixed.threads")).as(app.stderr()).matches("\\[pool-(\\d+)-thread-1 virtual, pool-\\1-thread-2 virtual, "
                    + "pool-\\1-thread-3 virtual]");
            assertThat(f).containsEntry("custom.threads", "[http-worker-1 virtual, http-worker-2 virtual]")
                    .containsEntry("custom.loader", "the-factory's-loader")
                    .containsEntry("abort.third", "rejected").containsEntry("abort.mbean.rejected", "1")
                    .containsEntry("shutdownnow.outcomes", "[interrupted on pool-K-thread-K virtual]")
                    .containsEntry("scheduled.thread", "pool-K-thread-K platform");
            assertThat(f.get("hooks.calls")).matches("\\[before on (pool-\\d+-thread-1) virtual current true, task on \\1 virtual, "
                    + "after on \\1 virtual, terminated]");
            assertThat(app.stderr()).contains("opentelemetry-javaagent - version: ") // it is there, and active
                    .doesNotContain("could not").doesNotContain("internal error");
        }
    }
}
