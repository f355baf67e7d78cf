package dev.weft.agent;

import dev.weft.agent.apps.PinnedApp;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Pinned workers counted per pool ({@link PinnedApp}: a worker of {@code pinning-N} blocks inside a class
 * initializer, one of {@code calm-N} inside {@code synchronized}), from the first read of an MBean's
 * {@code Pinned} attribute, or from the JVM's start with the agent's {@code pinned} option.
 */
class PinnedIT {
    @Test
    void countedPerPoolSinceFirstAsked() throws Exception {
        try (ChildJvm app = ChildJvm.app("", PinnedApp.class)) {
            Map<String, String> f = app.facts();
            assertThat(f).containsEntry("early.thread", "early-1 virtual slept >=100ms")
                    .containsEntry("pinning.thread", "pinning-1 virtual slept >=100ms")
                    .containsEntry("calm.thread", "calm-1 virtual");
            // the first read starts the count: nothing before it
            assertThat(f).containsEntry("asked.early", "0").containsEntry("asked.pinning", "0").containsEntry("asked.calm", "0");
            assertThat(Long.parseLong(f.get("pinned.pinning"))).as(f.toString()).isPositive();
            // early-N pinned before anyone asked, calm-N never: JFR delivers in order, so after pinning-N's event
            // an earlier one of early-N would have been counted too
            assertThat(f).containsEntry("pinned.early", "0").containsEntry("pinned.calm", "0");
            assertThat(app.stderr()).doesNotContain("internal error").doesNotContain("not counted");
        }
    }

    @Test
    void thePinnedOptionCountsFromTheStartAndAgreesWithTheJdksOwnRecording(@TempDir Path dir) throws Exception {
        Path jfr = dir.resolve("app.jfr");
        Map<String, String> f;
        try (ChildJvm app = ChildJvm.start(ChildJvm.java(), "pinned",
                List.of("-XX:StartFlightRecording:filename=" + jfr + ",dumponexit=true"), ChildJvm.testClasses(),
                PinnedApp.class.getName(), List.of())) {
            f = app.facts();
            assertThat(app.stderr()).doesNotContain("internal error").doesNotContain("not counted");
        }
        assertThat(Long.parseLong(f.get("pinned.early"))).as(f.toString()).isPositive();
        assertThat(Long.parseLong(f.get("pinned.pinning"))).as(f.toString()).isPositive();
        assertThat(f).containsEntry("pinned.calm", "0");
        // the JDK's own recording (default settings: jdk.VirtualThreadPinned of 20 ms or longer) saw the same:
        // the class initializers' sleeps pinned their virtual threads, the sleep inside synchronized did not
        List<RecordedEvent> pins = RecordingFile.readAllEvents(jfr).stream()
                .filter(e -> e.getEventType().getName().equals("jdk.VirtualThreadPinned")).toList();
        assertThat(pins).as(pins.toString()).allSatisfy(e -> assertThat(e.getThread().isVirtual()).isTrue());
        assertThat(pins.stream().map(e -> e.getThread().getJavaName()).distinct().sorted().toList())
                .as(pins.toString()).containsExactly("early-1", "pinning-1");
    }
}
