package dev.weft.http;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Request bodies: read back exactly at every size around the buffer's growth step, and a body declared large but
 * not sent allocates about what arrived, not what was declared (a peer must not make the server hold 1 MiB per
 * connection with a head and no body).
 */
class Http1BodyTest {
    private static final int MAX = 1024 * 1024;

    private static Body read(byte[] message) throws IOException {
        Http1Input in = new Http1Input(new ByteArrayInputStream(message), 256);
        Http1Request head = Http1.readRequestHead(in, 4096, 20);
        return Http1.readBody(in, head.framing(), MAX, true);
    }

    private static byte[] bytes(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    private static byte[] withLength(byte[] body) {
        ByteArrayOutputStream m = new ByteArrayOutputStream();
        m.writeBytes(("POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: " + body.length + "\r\n\r\n")
                .getBytes(StandardCharsets.ISO_8859_1));
        m.writeBytes(body);
        return m.toByteArray();
    }

    private static byte[] chunked(byte[] body, int chunk) {
        ByteArrayOutputStream m = new ByteArrayOutputStream();
        m.writeBytes("POST /p HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
        for (int i = 0; i < body.length; i += chunk) {
            int n = Math.min(chunk, body.length - i);
            m.writeBytes((Integer.toHexString(n) + "\r\n").getBytes(StandardCharsets.ISO_8859_1));
            m.write(body, i, n);
            m.writeBytes("\r\n".getBytes(StandardCharsets.ISO_8859_1));
        }
        m.writeBytes("0\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
        return m.toByteArray();
    }

    @Test
    void bodiesOfEverySizeAroundTheGrowthStepReadBackExactly() throws IOException {
        int step = Http1.BODY_STEP;
        for (int n : new int[] {0, 1, step - 1, step, step + 1, 3 * step + 7, 200_000, MAX}) {
            byte[] body = bytes(n, n);
            assertThat(read(withLength(body)).bytes()).as("Content-Length: %d", n).isEqualTo(body);
            for (int chunk : new int[] {1000, step, 100_000, MAX}) {
                if (n > 0 && n / chunk < 300) {
                    assertThat(read(chunked(body, chunk)).bytes()).as("%d bytes in chunks of %d", n, chunk)
                            .isEqualTo(body);
                }
            }
        }
    }

    @Test
    void aBodyDeclaredLargeButNotSentAllocatesAboutWhatArrived() {
        if (!(ManagementFactory.getThreadMXBean() instanceof com.sun.management.ThreadMXBean mx)
                || !mx.isThreadAllocatedMemorySupported() || !mx.isThreadAllocatedMemoryEnabled()) {
            Assumptions.abort("this JVM does not count the bytes a thread allocates: the allocation is not checked");
            return;
        }
        byte[] sent = bytes(100, 1);
        byte[] length = ("POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: " + MAX + "\r\n\r\n" + new String(sent,
                StandardCharsets.ISO_8859_1)).getBytes(StandardCharsets.ISO_8859_1);
        byte[] chunk = ("POST /p HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" + Integer.toHexString(MAX)
                + "\r\n" + new String(sent, StandardCharsets.ISO_8859_1)).getBytes(StandardCharsets.ISO_8859_1);
        for (byte[] message : new byte[][] {length, chunk}) {
            long before = mx.getCurrentThreadAllocatedBytes();
            assertThatThrownBy(() -> read(message)).isInstanceOf(EOFException.class);
            long allocated = mx.getCurrentThreadAllocatedBytes() - before;
            // before the buffer grew as bytes arrived, this was the declared 1 MiB and more; what is left is the
            // first step's buffer, the exception and its stack trace, and the classes loaded on the first run
            assertThat(allocated).as("bytes allocated reading a 1 MiB body of which 100 bytes came")
                    .isLessThan(MAX / 4);
        }
    }
}
