package dev.weft.lab;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/** A one-line description of the machine a benchmark ran on. */
public final class Machine {
    private Machine() {
    }

    public static String describe() {
        String cpu = "unknown CPU";
        try {
            for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
                if (line.startsWith("model name")) {
                    cpu = line.substring(line.indexOf(':') + 1).strip();
                    break;
                }
            }
        } catch (IOException | RuntimeException ignored) {
            // not Linux
        }
        long memBytes = -1;
        if (java.lang.management.ManagementFactory.getOperatingSystemMXBean()
                instanceof com.sun.management.OperatingSystemMXBean os) {
            memBytes = os.getTotalMemorySize();
        }
        return String.format(Locale.ROOT, "%d cores (%s), %.1f GiB RAM, %s %s %s, JDK %s",
                CpuPin.online(), cpu, memBytes / (1024.0 * 1024 * 1024),
                System.getProperty("os.name"), System.getProperty("os.version"), System.getProperty("os.arch"),
                Runtime.version());
    }
}
