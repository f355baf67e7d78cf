package dev.weft.client;

import dev.weft.os.Descriptors;
import dev.weft.core.OncePer;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * Outbound connects that failed because the process is out of file descriptors (EMFILE), for one transport:
 * each such call fails at once with {@code no-descriptors} (the gateway's own shortage: never counted against
 * the backend), and while it lasts one line a second says so with the numbers.
 */
final class DescriptorShortage {
    /** The connect failed for lack of a descriptor; {@link Exchange} turns it into {@link Reason#NO_DESCRIPTORS}. */
    static final class NoDescriptorsException extends java.io.IOException {
        NoDescriptorsException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /**
     * Loaded with this class, at the transport's start: when it is first needed the process has no descriptor
     * left, and loading a class from a directory of class files takes one (a NoClassDefFoundError in the
     * connector would leave its call waiting until its deadline).
     */
    @SuppressWarnings("unused")
    private static final Class<?> PRELOADED = NoDescriptorsException.class;

    private final Consumer<String> log;
    private final AtomicLong total = new AtomicLong();
    private final AtomicLong sinceReport = new AtomicLong();
    private final OncePer report = new OncePer(Duration.ofSeconds(1));

    DescriptorShortage(Consumer<String> log) {
        this.log = log;
    }

    /** Counts one failed connect to {@code destination}; logs when the last line is a second old or more. */
    NoDescriptorsException failed(String destination, java.io.IOException cause) {
        total.incrementAndGet();
        sinceReport.incrementAndGet();
        if (report.due()) {
            long n = sinceReport.getAndSet(0);
            long open = Descriptors.open();
            log.accept("out of file descriptors opening a connection to " + destination + " (" + cause.getMessage()
                    + "): limit " + Descriptors.limit() + ", open " + (open < 0 ? "unknown" : String.valueOf(open))
                    + "; " + n + " connects failed no-descriptors in the last second (" + total.get()
                    + " in all); their calls fail at once and do not count against the backend");
        }
        return new NoDescriptorsException("out of file descriptors opening a connection to " + destination
                + " (the process's open-file limit, " + Descriptors.limit() + "; " + cause.getMessage() + ")", cause);
    }
}
