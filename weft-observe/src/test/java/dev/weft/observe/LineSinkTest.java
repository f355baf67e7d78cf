package dev.weft.observe;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

class LineSinkTest {
    @TempDir
    Path dir;

    @Test
    void writesEveryLineInOrderToAFile() throws Exception {
        Path f = dir.resolve("logs/access.log");
        try (LineSink s = LineSink.open(LineSink.Target.parse(f.toString()), 100, "t")) {
            for (int i = 0; i < 50; i++) {
                assertThat(s.offer(("line " + i).getBytes(StandardCharsets.UTF_8))).isTrue();
            }
        }
        var lines = Files.readAllLines(f);
        assertThat(lines).hasSize(50);
        assertThat(lines.getFirst()).isEqualTo("line 0");
        assertThat(lines.getLast()).isEqualTo("line 49");
    }

    /** A stalled target: offer never blocks; what does not fit is dropped and counted. */
    @Test
    void aFullBufferDropsAndCountsInsteadOfBlocking() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        ByteArrayOutputStream got = new ByteArrayOutputStream();
        OutputStream stalled = new OutputStream() {
            @Override
            public void write(int b) throws IOException {
                write(new byte[] {(byte) b}, 0, 1);
            }

            @Override
            public void write(byte[] b, int off, int len) throws IOException {
                try {
                    release.await(60, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    throw new IOException(e);
                }
                got.write(b, off, len);
            }
        };
        LineSink s = LineSink.to(stalled, 10);
        int accepted = 0;
        for (int i = 0; i < 1000; i++) {
            if (s.offer(new byte[100])) {
                accepted++;
            }
        }
        // at most the buffer plus the batch the writer took before it stalled
        assertThat(accepted).isLessThan(1000);
        assertThat(s.dropped()).isEqualTo(1000 - accepted);
        release.countDown();
        s.close();
        assertThat(s.written()).isEqualTo(accepted);
        assertThat(got.size()).isEqualTo(accepted * 101);
    }

    @Test
    void offIsNoTarget() {
        assertThat(LineSink.Target.parse(" off ")).isNull();
        assertThat(LineSink.Target.parse("stdout").spec()).isEqualTo("stdout");
    }
}
