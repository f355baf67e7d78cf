package dev.weft.agent;

import dev.weft.agent.apps.PinnedApp;
import dev.weft.agent.apps.PoolsApp;
import dev.weft.doctor.Doctor;
import dev.weft.doctor.Report;
import dev.weft.doctor.ReportText;
import dev.weft.json.Json;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** weft doctor attached (attach API, the JDK's local management agent) to a child JVM with and without the agent. */
class DoctorIT {
    private static final Doctor.Options BRIEF = Doctor.Options.DEFAULT.withWindow(Duration.ofSeconds(1)).withCensus(false);

    @Test
    void showsTheConvertedPoolByNameWithItsFigures() throws Exception {
        try (ChildJvm app = ChildJvm.app("", PoolsApp.class, "doctor")) {
            app.awaitLine("doctor.ready=");
            assertThat(app.stdout()).contains("doctor.fifth=rejected");
            Report r = Doctor.examine(app.process.pid(), BRIEF, null);
            String text = ReportText.render(r);
            // pinned 0, not -1: the doctor started the agent's count (startPinnedCount) at its window's start
            assertThat(r.agentPools()).as(text).containsExactly(new Report.AgentPool("orders-N",
                    "java.util.concurrent.ThreadPoolExecutor", 2, 2, 1, 0, 1, 2, 2, 2));
            assertThat(text).contains("weft agent's pools (virtual threads; dev.weft.agent MBeans): 1")
                    .containsPattern("orders-N +2 +2 +1 +0 +1 +2 +2  java\\.util\\.concurrent\\.ThreadPoolExecutor");
            assertThat(Json.MAPPER.writeValueAsString(r)).contains("\"agentPools\":[{\"name\":\"orders-N\","
                    + "\"executorClass\":\"java.util.concurrent.ThreadPoolExecutor\",\"active\":2,\"queued\":2,"
                    + "\"rejected\":1,\"pinned\":0,\"completed\":1,\"poolSize\":2,\"maximumPoolSize\":2,\"originalMaximumPoolSize\":2}]");
        }
    }

    @Test
    void concurrencyShowsTheNewBoundAndTheOldOne() throws Exception {
        try (ChildJvm app = ChildJvm.app("concurrency=50", PoolsApp.class, "doctor")) {
            app.awaitLine("doctor.ready=");
            Report r = Doctor.examine(app.process.pid(), BRIEF, null);
            String text = ReportText.render(r);
            // concurrency=50 on a fixed pool raises core and max: all five tasks run, nothing queued or refused
            assertThat(r.agentPools()).as(text).singleElement().satisfies(p -> {
                assertThat(p.name()).isEqualTo("orders-N");
                assertThat(p.maximumPoolSize()).isEqualTo(50);
                assertThat(p.originalMaximumPoolSize()).isEqualTo(2);
                assertThat(p.rejected()).isZero();
            });
            assertThat(text).containsPattern("orders-N .* 50 \\(was 2\\)");
        }
    }

    @Test
    void showsEachPoolsPinnedWorkers() throws Exception {
        // pinned: counted from the JVM's start, so early-N's pin (before anything asked) is in too
        try (ChildJvm app = ChildJvm.app("pinned", PinnedApp.class, "doctor")) {
            app.awaitLine("doctor.ready=");
            Report r = Doctor.examine(app.process.pid(), BRIEF, null);
            String text = ReportText.render(r);
            assertThat(r.agentPools()).as(text).extracting(Report.AgentPool::name)
                    .containsExactly("calm-N", "early-N", "pinning-N");
            assertThat(r.agentPools()).as(text).allSatisfy(p -> {
                if (p.name().equals("calm-N")) {
                    assertThat(p.pinned()).isZero();
                } else {
                    assertThat(p.pinned()).isPositive();
                }
            });
            assertThat(text).contains("rejected  pinned   completed").containsPattern("calm-N +0 +0 +0 +0 +2 ");
        }
    }

    @Test
    void aJvmWithoutTheAgentShowsNoPools() throws Exception {
        try (ChildJvm app = ChildJvm.app(null, PoolsApp.class, "doctor")) {
            app.awaitLine("doctor.ready=");
            Report r = Doctor.examine(app.process.pid(), BRIEF, null);
            String text = ReportText.render(r);
            assertThat(r.agentPools()).as(text).isEmpty();
            assertThat(text).doesNotContain("weft agent").doesNotContain("dev.weft.agent");
        }
    }
}
