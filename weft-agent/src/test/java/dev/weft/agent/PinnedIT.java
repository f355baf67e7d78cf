package dev.weft.agent;

import dev.weft.agent.apps.NoJfrApp;
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
 * initializer, one of {@code calm-N} inside {@code synchronized}), from an MBean's
 * {@code startPinnedCount} operation (reading {@code Pinned} starts nothing), or from the JVM's start with the
 * agent's {@code pinned} option.
 */
class PinnedIT {
    @Test
    void countedPerPoolSinceFirstAsked() throws Exception {
        try (ChildJvm app = ChildJvm.app("", PinnedApp.class)) {
            Map<String, String> f = app.facts();
            assertThat(f).containsEntry("early.thread", "early-1 virtual slept >=100ms")
                    .containsEntry("pinning.thread", "pinning-1 virtual slept >=100ms")
                    .containsEntry("calm.thread", "calm-1 virtual");
            // reading (as every JMX scraper does) starts nothing: -1, and no JFR recording runs
            assertThat(f).containsEntry("asked.early", "-1").containsEntry("asked.pinning", "-1")
                    .containsEntry("asked.calm", "-1").containsEntry("recordings.asked", "0");
            // the operation starts the one count of every pool, from 0
            assertThat(f).containsEntry("started", "true").containsEntry("recordings.started", "1")
                    .containsEntry("counting.early", "0").containsEntry("counting.pinning", "0").containsEntry("counting.calm", "0");
            // it was created on the agent's own thread: JFR's threads keep not the asking thread's context class loader
            assertThat(f).containsEntry("jfr.threads.marker", "[]");
            assertThat(Long.parseLong(f.get("pinned.pinning"))).as(f.toString()).isPositive();
            // early-N pinned before the count started, calm-N never: JFR delivers in order, so after pinning-N's event
            // an earlier one of early-N would have been counted too
            assertThat(f).containsEntry("pinned.early", "0").containsEntry("pinned.calm", "0");
            assertThat(app.stderr()).doesNotContain("internal error").doesNotContain("not counted");
            // JFR ends every recording at the JVM's exit (PinnedApp's hook waits for the agent's reader): no news
            assertThat(app.stderr()).doesNotContain("Pinned reads -1");
        }
    }

    @Test
    void pinnedOffNeverCountsNorStartsARecording() throws Exception {
        try (ChildJvm app = ChildJvm.app("pinned=off", PinnedApp.class)) {
            Map<String, String> f = app.facts();
            assertThat(f).containsEntry("pinning.thread", "pinning-1 virtual slept >=100ms");
            assertThat(f).containsEntry("started", "false").containsEntry("recordings.started", "0")
                    .containsEntry("counting.pinning", "-1").containsEntry("pinned.pinning", "-1")
                    .containsEntry("pinned.calm", "-1");
            assertThat(app.stderr()).doesNotContain("internal error").doesNotContain("Pinned reads -1");
        }
    }

    @Test
    void withoutTheJfrModuleThePoolsAreConvertedAndPinnedReadsMinusOne() throws Exception {
        try (ChildJvm app = ChildJvm.start(ChildJvm.java(), "pinned",
                List.of("--limit-modules", "java.base,java.instrument,java.management"), ChildJvm.testClasses(),
                NoJfrApp.class.getName(), List.of())) {
            Map<String, String> f = app.facts();
            assertThat(f).containsEntry("jfr.module", "false").containsEntry("task", "plain-1 virtual")
                    .containsEntry("pinned", "-1").containsEntry("started", "false").containsEntry("terminated", "true");
            // one line says why, once (the pinned option's start; the operation's later call says nothing more)
            assertThat(app.stderr().lines().filter(l -> l.startsWith("weft agent: pinned virtual threads are not counted: "
                    + "no JFR recording stream (java.lang.NoClassDefFoundError: jdk/jfr/")).count()).as(app.stderr()).isOne();
            assertThat(app.stderr()).doesNotContain("internal error");
        }
    }

    @Test
    void aStoppedRecordingReadsMinusOneAgain() throws Exception {
        try (ChildJvm app = ChildJvm.app("pinned", PinnedApp.class, "stop")) {
            assertThat(Long.parseLong(app.awaitLine("pinned.pinning=").substring("pinned.pinning=".length()))).isPositive();
            app.awaitLine("stop.ready=");
            Path jcmd = Path.of(ChildJvm.java()).resolveSibling("jcmd");
            String pid = Long.toString(app.process.pid());
            String check = run(jcmd.toString(), pid, "JFR.check");
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("Recording (\\d+): name=Recording Stream").matcher(check);
            assertThat(m.find()).as(check).isTrue();
            run(jcmd.toString(), pid, "JFR.stop", "name=" + m.group(1));
            app.send("stopped");
            Map<String, String> f = app.facts();
            // the count froze: it no longer reads as valid, and it stays off
            assertThat(f).containsEntry("stopped.pinning", "-1").containsEntry("stopped.started", "false");
            assertThat(app.stderr()).contains("Pinned reads -1 from now on").doesNotContain("internal error");
        }
    }

    private static String run(String... command) throws Exception {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertThat(p.waitFor()).as(out).isZero();
        return out;
    }

    @Test
    void anotherRecordingAtALowerThresholdDoesNotInflateTheCount(@TempDir Path dir) throws Exception {
        Path jfr = dir.resolve("zero.jfr");
        // a recording of every pin however short: JFR then hands the agent's stream those too
        Map<String, String> f = beside(jfr, "pinned");
        List<RecordedEvent> pins = pinsOf(jfr, "pinning-1");
        // the recording saw BriefPin's pin under 20 ms; the agent counted only those of 20 ms or longer
        assertThat(pins).as(pins.toString()).anySatisfy(e -> assertThat(e.getDuration()).isLessThan(java.time.Duration.ofMillis(20)));
        long long20 = pins.stream().filter(e -> e.getDuration().compareTo(java.time.Duration.ofMillis(20)) >= 0).count();
        assertThat(long20).as(pins.toString()).isPositive();
        assertThat(f).as(pins.toString()).containsEntry("pinned.pinning", Long.toString(long20));
    }

    @Test
    void aLowerThresholdCountsShorterPins(@TempDir Path dir) throws Exception {
        Path jfr = dir.resolve("one.jfr");
        Map<String, String> f = beside(jfr, "pinned,pinned_threshold=1ms", "-Dpinned.expect=2");
        List<RecordedEvent> pins = pinsOf(jfr, "pinning-1");
        long atLeast1ms = pins.stream().filter(e -> e.getDuration().compareTo(java.time.Duration.ofMillis(1)) >= 0).count();
        long atLeast20ms = pins.stream().filter(e -> e.getDuration().compareTo(java.time.Duration.ofMillis(20)) >= 0).count();
        // BriefPin's 2 ms pin is counted now: more than the 20 ms threshold would have counted
        assertThat(atLeast1ms).as(pins.toString()).isGreaterThan(atLeast20ms);
        assertThat(f).as(pins.toString()).containsEntry("pinned.pinning", Long.toString(atLeast1ms));
    }

    /** {@link PinnedApp} with the agent's options, beside the JDK's own recording of every pin (threshold 0 ms). */
    private static Map<String, String> beside(Path jfr, String agentOptions, String... flags) throws Exception {
        List<String> jvm = new java.util.ArrayList<>(List.of(flags));
        jvm.add("-XX:StartFlightRecording:filename=" + jfr + ",dumponexit=true,jdk.VirtualThreadPinned#threshold=0ms");
        try (ChildJvm app = ChildJvm.start(ChildJvm.java(), agentOptions, jvm, ChildJvm.testClasses(),
                PinnedApp.class.getName(), List.of())) {
            Map<String, String> f = app.facts();
            assertThat(app.stderr()).doesNotContain("internal error").doesNotContain("not counted");
            return f;
        }
    }

    /** The recording's jdk.VirtualThreadPinned events of one thread. */
    private static List<RecordedEvent> pinsOf(Path jfr, String thread) throws Exception {
        return RecordingFile.readAllEvents(jfr).stream()
                .filter(e -> e.getEventType().getName().equals("jdk.VirtualThreadPinned"))
                .filter(e -> e.getThread() != null && thread.equals(e.getThread().getJavaName())).toList();
    }

    @Test
    void thePinnedOptionCountsFromTheStartAndAgreesWithTheJdksOwnRecording(@TempDir Path dir) throws Exception {
        Path jfr = dir.resolve("app.jfr");
        Map<String, String> f;
        try (ChildJvm app = ChildJvm.start(ChildJvm.java(), "pinned",
                List.of("-XX:StartFlightRecording:filename=" + jfr + ",dumponexit=true"), ChildJvm.testClasses(),
                PinnedApp.class.getName(), List.of())) {
            f = app.facts();
            assertThat(app.stderr()).doesNotContain("internal error").doesNotContain("not counted")
                    .doesNotContain("Pinned reads -1");
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
