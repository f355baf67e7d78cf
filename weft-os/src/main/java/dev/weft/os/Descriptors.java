package dev.weft.os;

import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;

/** The process's file descriptors: its open-file limit and how many are open (-1 where the platform does not say). */
public final class Descriptors {
    private Descriptors() {
    }

    /** The open-file limit of this process (RLIMIT_NOFILE as the JVM runs with it), or -1. */
    public static long limit() {
        OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        return os instanceof com.sun.management.UnixOperatingSystemMXBean u ? u.getMaxFileDescriptorCount() : -1;
    }

    /**
     * Descriptors open now, or -1: also when there is no descriptor left to count them with (the JDK lists
     * /proc/self/fd, which takes one, and throws an InternalError when it cannot).
     */
    public static long open() {
        OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        try {
            return os instanceof com.sun.management.UnixOperatingSystemMXBean u ? u.getOpenFileDescriptorCount() : -1;
        } catch (InternalError e) {
            return -1;
        }
    }

    /** Whether {@code e} says the process (or the system) ran out of file descriptors. */
    public static boolean exhausted(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            String m = t.getMessage();
            if (m != null && (m.contains("Too many open files") || m.contains("too many open files"))) {
                return true;
            }
        }
        return false;
    }
}
