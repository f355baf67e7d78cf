package dev.weft.observe;

import java.io.BufferedOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Lines (an access log's) written off the caller's thread through a bounded buffer: {@link #offer} never
 * blocks; when the buffer is full the line is dropped and counted ({@link #dropped()}), so a slow disk or a
 * stalled terminal costs log lines, never request latency. One writer thread drains the buffer in batches
 * and flushes when it is empty. Once woken by a line it lets more gather for {@value #LINGER_MILLIS} ms before it
 * writes: woken and flushing for each line, the writer cost an access-logged 503 more than the rest of its work
 * (docs/design/observability.md).
 */
public final class LineSink implements AutoCloseable {
    /** Lines held for the writer before new ones are dropped. */
    public static final int DEFAULT_CAPACITY = 8192;
    /** How long the writer lets lines gather after the first one wakes it. */
    static final int LINGER_MILLIS = 2;

    /** Where lines go: {@code stdout}, {@code stderr} or a file (appended to, created when missing). */
    public record Target(String spec) {
        public Target {
            if (spec == null || spec.isBlank()) {
                throw new IllegalArgumentException("expected stdout, stderr, off or a file path");
            }
        }

        /** {@code stdout}, {@code stderr}, a path, or {@code off} (null: no log). */
        public static Target parse(String text) {
            String t = text.strip();
            return t.equals("off") ? null : new Target(t);
        }

        OutputStream open() throws IOException {
            return switch (spec) {
                case "stdout" -> new FileOutputStream(FileDescriptor.out);
                case "stderr" -> new FileOutputStream(FileDescriptor.err);
                default -> {
                    Path p = Path.of(spec);
                    if (p.getParent() != null) {
                        Files.createDirectories(p.getParent());
                    }
                    yield Files.newOutputStream(p, StandardOpenOption.CREATE, StandardOpenOption.APPEND,
                            StandardOpenOption.WRITE);
                }
            };
        }

        @Override
        public String toString() {
            return spec;
        }
    }

    private static final byte[] STOP = new byte[0];

    private final ArrayBlockingQueue<byte[]> queue;
    private final OutputStream out;
    private final boolean closeOut;
    private final AtomicLong dropped = new AtomicLong();
    private final AtomicLong written = new AtomicLong();
    private final Thread writer;
    private volatile boolean closed;

    private LineSink(OutputStream out, boolean closeOut, int capacity, String name) {
        this.queue = new ArrayBlockingQueue<>(capacity);
        this.out = new BufferedOutputStream(out, 64 * 1024);
        this.closeOut = closeOut;
        this.writer = Thread.ofPlatform().daemon().name(name).start(this::drain);
    }

    /** Opens {@code target} with a buffer of {@code capacity} lines. */
    public static LineSink open(Target target, int capacity, String threadName) throws IOException {
        boolean std = target.spec().equals("stdout") || target.spec().equals("stderr");
        return new LineSink(target.open(), !std, capacity, threadName);
    }

    /** For tests: lines to {@code out}. */
    public static LineSink to(OutputStream out, int capacity) {
        return new LineSink(out, false, capacity, "weft-line-sink");
    }

    /**
     * Queues one line (a newline is added); never blocks.
     *
     * @return false when the line was dropped (buffer full, or closed)
     */
    public boolean offer(byte[] line) {
        if (closed || !queue.offer(line)) {
            dropped.incrementAndGet();
            return false;
        }
        return true;
    }

    /** Lines dropped because the buffer was full. */
    public long dropped() {
        return dropped.get();
    }

    /** Lines written. */
    public long written() {
        return written.get();
    }

    private void drain() {
        List<byte[]> batch = new ArrayList<>(4096);
        try {
            while (true) {
                byte[] first = queue.poll(1, TimeUnit.SECONDS);
                if (first == null) {
                    continue;
                }
                batch.add(first);
                if (first != STOP && queue.size() < 255) {
                    Thread.sleep(LINGER_MILLIS); // more lines come in one write, and offers find nobody to wake
                }
                queue.drainTo(batch, 4095);
                for (byte[] line : batch) {
                    if (line == STOP) {
                        out.flush();
                        return;
                    }
                    out.write(line);
                    out.write('\n');
                    written.incrementAndGet();
                }
                batch.clear();
                if (queue.isEmpty()) {
                    out.flush();
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException e) {
            // the target is gone (a closed pipe, a full disk): every later line counts as dropped
            closed = true;
            System.getLogger("weft.access").log(System.Logger.Level.WARNING, "access log stopped: " + e);
        }
    }

    /** Writes what is buffered (waiting up to 5 s), then stops. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            if (queue.offer(STOP, 5, TimeUnit.SECONDS)) {
                writer.join(5000);
            } else {
                writer.interrupt();
            }
            if (closeOut) {
                out.close();
            } else {
                out.flush();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException ignored) {
            // nothing more to write to
        }
    }
}
