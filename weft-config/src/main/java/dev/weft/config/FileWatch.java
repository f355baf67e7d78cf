package dev.weft.config;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Reload-on-change for a config file: a virtual thread that looks at the file's modification time and size
 * every {@code every} and runs {@code onChange} when either differs from what it saw last, until
 * {@code stopped} holds. The first look is taken before {@link #start} returns, so a change made once it
 * has returned is seen however soon it comes. A file that cannot be read (being replaced, deleted) is
 * skipped until it can.
 */
public final class FileWatch {
    private FileWatch() {
    }

    /**
     * Starts watching.
     *
     * @param name     the watching thread's name
     * @param file     the file, asked at every look (a reload may name another)
     * @param every    how often to look
     * @param stopped  the thread ends when this holds
     * @param onChange what a change runs, on the watching thread
     */
    public static void start(String name, Supplier<Path> file, Duration every, BooleanSupplier stopped,
                             Runnable onChange) {
        Object first = stamp(file);
        Thread.ofVirtual().name(name).start(() -> {
            Object last = first;
            while (!stopped.getAsBoolean()) {
                try {
                    Thread.sleep(every);
                } catch (InterruptedException e) {
                    return;
                }
                Object now = stamp(file);
                if (now != null && !now.equals(last)) {
                    last = now;
                    onChange.run();
                }
            }
        });
    }

    /** The file's modification time and size, or null when it cannot be read now. */
    private static Object stamp(Supplier<Path> file) {
        try {
            Path f = file.get();
            return Files.getLastModifiedTime(f).toMillis() + ":" + Files.size(f);
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }
}
