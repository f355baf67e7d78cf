package dev.weft.doctor;

import com.sun.management.HotSpotDiagnosticMXBean;
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

    @Override
    public void startRecording(long periodMillis) {
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
