package dev.weft.doctor;

import com.sun.management.HotSpotDiagnosticMXBean;
import dev.weft.os.Descriptors;
import jdk.jfr.Recording;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/** This JVM, for the {@code /-/threads} endpoints of Weft's own services: the same material, taken in-process. */
public final class ThisJvm implements ThreadSource {
    /**
     * File descriptors that must be free before a recording starts. JFR opens a chunk file in its repository
     * when a recording starts, and when it cannot (no descriptor left) it stops the whole JVM ("An irrecoverable
     * error in Jfr. Shutting down VM"): seen on the gateway out of descriptors under load, with the runaway
     * watch's recording. Reading the recording back takes two or three more; the rest is room for connections
     * that open between the check and the start.
     */
    static final int DESCRIPTOR_RESERVE = 32;

    /** Thrown instead of starting a recording while the process is short of file descriptors. */
    public static final class ShortOfDescriptors extends IOException {
        ShortOfDescriptors(String message) {
            super(message);
        }
    }

    private final HotSpotDiagnosticMXBean diagnostic = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
    private Recording recording;

    @Override
    public ThreadDump dump() throws IOException {
        Path file = Files.createTempFile("weft-threads-", ".json");
        Files.delete(file); // dumpThreads refuses to overwrite
        Instant taken = Instant.now();
        try {
            diagnostic.dumpThreads(file.toString(), HotSpotDiagnosticMXBean.ThreadDumpFormat.JSON);
            return ThreadDump.read(file, taken);
        } finally {
            Files.deleteIfExists(file);
        }
    }

    /**
     * Why a recording must not start now (fewer than {@link #DESCRIPTOR_RESERVE} descriptors free, or none left
     * to count them with), or null when it may.
     */
    public static String descriptorShortage() {
        return descriptorShortage(Descriptors.limit(), Descriptors.open());
    }

    static String descriptorShortage(long limit, long open) {
        if (limit <= 0) {
            return null; // the platform does not say
        }
        if (open >= 0 && limit - open >= DESCRIPTOR_RESERVE) {
            return null;
        }
        return (open < 0 ? "no file descriptor is free (the limit is " + limit + ")"
                : open + " of " + limit + " file descriptors are open")
                + "; JFR needs a few free and stops the JVM when it finds none";
    }

    /**
     * Starts and stops an empty recording once, while descriptors are free (else does nothing). JFR's first start
     * initializes the recorder before it opens its chunk file, 0.6 to 1 s on a loaded 2-core machine, and a process
     * that runs out of descriptors in between is stopped by JFR however many were free at the check before it;
     * later starts open only the chunk file (about 5 ms), right after {@link #startRecording}'s check.
     */
    public static void initializeRecorder() {
        if (RECORDER_STARTED.get() || descriptorShortage() != null) {
            return;
        }
        try (Recording r = new Recording()) {
            r.start();
            r.stop();
            RECORDER_STARTED.set(true); // once a JVM: every gateway started in it after the first skips this
        } catch (RuntimeException e) {
            // JFR is not available here: each recording reports its own failure
        }
    }

    private static final java.util.concurrent.atomic.AtomicBoolean RECORDER_STARTED =
            new java.util.concurrent.atomic.AtomicBoolean();

    /** @throws ShortOfDescriptors while {@link #descriptorShortage()} says so; nothing is started then */
    @Override
    public void startRecording(long periodMillis) throws ShortOfDescriptors {
        String shortage = descriptorShortage();
        if (shortage != null) {
            throw new ShortOfDescriptors("not recording: " + shortage);
        }
        recording = new Recording();
        recording.enable(Jfr.SAMPLE).withPeriod(Duration.ofMillis(periodMillis));
        recording.enable(Jfr.PINNED).withThreshold(Duration.ofMillis(20)).withStackTrace();
        recording.start();
    }

    @Override
    public Jfr.Recorded stopRecording() throws IOException {
        Recording r = recording;
        recording = null;
        if (r == null) {
            return new Jfr.Recorded(List.of(), List.of());
        }
        Path file = Files.createTempFile("weft-doctor-", ".jfr");
        try (r) {
            r.stop();
            r.dump(file);
            return Jfr.read(file);
        } finally {
            Files.deleteIfExists(file);
        }
    }

    @Override
    public int parallelism() {
        String p = System.getProperty("jdk.virtualThreadScheduler.parallelism");
        if (p != null) {
            try {
                return Integer.parseInt(p.strip());
            } catch (NumberFormatException ignored) {
                // the default then
            }
        }
        return Runtime.getRuntime().availableProcessors();
    }

    @Override
    public List<Report.AgentPool> agentPools() throws IOException {
        return AgentPools.read(ManagementFactory.getPlatformMBeanServer());
    }

    @Override
    public void startAgentPinnedCount() throws IOException {
        AgentPools.startPinnedCount(ManagementFactory.getPlatformMBeanServer());
    }

    @Override
    public String describe() {
        return "pid " + ProcessHandle.current().pid() + " (JDK " + Runtime.version() + ", this process)";
    }

    @Override
    public void close() {
        if (recording != null) {
            recording.close();
        }
    }
}
