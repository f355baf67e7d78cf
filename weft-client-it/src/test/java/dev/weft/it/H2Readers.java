package dev.weft.it;

import com.sun.management.HotSpotDiagnosticMXBean;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * weft-client's HTTP/2 reader threads alive now in this JVM, seen from outside the client: they are virtual threads
 * named {@code weft-h2-<destination>}, which {@code Thread.getAllStackTraces()} does not list but the JDK's JSON
 * thread dump does.
 */
final class H2Readers {
    private static final Pattern READER = Pattern.compile("\"name\": ?\"weft-h2-");

    private H2Readers() {
    }

    static int running() {
        try {
            Path dir = Files.createTempDirectory("weft-threads");
            Path dump = dir.resolve("threads.json");
            try {
                ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class).dumpThreads(dump.toString(),
                        HotSpotDiagnosticMXBean.ThreadDumpFormat.JSON);
                Matcher m = READER.matcher(Files.readString(dump));
                int n = 0;
                while (m.find()) {
                    n++;
                }
                return n;
            } finally {
                Files.deleteIfExists(dump);
                Files.delete(dir);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
