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

    /** A stream that hands out at most {@code step} bytes a read, as a socket hands out what has come. */
    private static java.io.InputStream dribble(String s, int step) {
        ByteArrayInputStream in = new ByteArrayInputStream(s.getBytes(StandardCharsets.ISO_8859_1));
        return new java.io.InputStream() {
            @Override
            public int read() {
                return in.read();
            }

            @Override
            public int read(byte[] b, int off, int len) {
                return in.read(b, off, Math.min(len, step));
            }
        };
    }

    private static java.util.List<String> runs(String body, Framing framing, int step, int maxRun) throws IOException {
        Http1.BodyRuns runs = new Http1.BodyRuns(new Http1Input(dribble(body, step), 4), framing, maxRun);
        java.util.List<String> out = new java.util.ArrayList<>();
        byte[] run;
        while ((run = runs.next()) != null) {
            out.add(new String(run, StandardCharsets.ISO_8859_1));
        }
        return out;
    }

    /**
     * A body read run by run hands over what each read gave, never more than asked, never across a chunk's end (so an
     * event the server flushed in a chunk is passed on whole when it came whole), and keeps a chunked body's trailers.
     */
    @Test
    void aBodyReadRunByRunHandsOverWhatCameChunkByChunk() throws IOException {
        assertThat(runs("5\r\nhello\r\n3\r\nabc\r\n0\r\n\r\n", Framing.CHUNKED, 100, 64)).containsExactly("hello", "abc");
        assertThat(runs("5\r\nhello\r\n3\r\nabc\r\n0\r\n\r\n", Framing.CHUNKED, 100, 4)).containsExactly("hell", "o", "abc");
        assertThat(runs("hello world", Framing.length(11), 4, 64)).containsExactly("hell", "o wo", "rld");
        assertThat(runs("hello world", Framing.UNTIL_CLOSE, 100, 5)).containsExactly("hello", " worl", "d");
        assertThat(runs("", Framing.NONE, 100, 5)).isEmpty();
        assertThat(runs("hello", Framing.length(0), 100, 5)).isEmpty();
        Http1Input in = new Http1Input(dribble("1;ext=a\r\nx\r\n0\r\nX-Sum: 1\r\nX-Two: 2\r\n\r\nNEXT", 3), 4);
        Http1.BodyRuns r = new Http1.BodyRuns(in, Framing.CHUNKED, 64);
        assertThat(r.trailers()).as("none before the end").isEqualTo(Headers.EMPTY);
        assertThat(new String(r.next(), StandardCharsets.ISO_8859_1)).isEqualTo("x");
        assertThat(r.ended()).isFalse();
        assertThat(r.next()).isNull();
        assertThat(r.ended()).isTrue();
        assertThat(r.trailers()).isEqualTo(Headers.of("X-Sum", "1", "X-Two", "2"));
        byte[] next = new byte[4];
        in.readFully(next, 0, 4, "next");
        assertThat(new String(next, StandardCharsets.ISO_8859_1)).as("what follows the body is left unread").isEqualTo("NEXT");
    }

    /** Malformed framing fails a body read run by run as it fails one read whole: the same 400s, EOF mid-body. */
    @Test
    void aBodyReadRunByRunRefusesWhatTheWholeReaderRefuses() {
        String[][] table = {
                {"5\r\nhelloXX0\r\n\r\n", "chunk data not followed by CRLF"},
                {"g\r\nx\r\n0\r\n\r\n", "does not start with a hex digit"},
                {"1 x\r\na\r\n0\r\n\r\n", "other than ';' extensions"},
                {"10000000000000000\r\n", "more than 15 hex digits"},
                {"1;a=\u0001\r\nx\r\n0\r\n\r\n", "control character in a chunk extension"},
                {"1\r\nx\r\n0\r\nbad field\r\n\r\n", ""},
                {"1;" + "a".repeat(4000) + "\r\nx\r\n" + ("1;" + "a".repeat(4000) + "\r\nx\r\n").repeat(5), "far larger"},
        };
        for (String[] row : table) {
            assertThatThrownBy(() -> runs(row[0], Framing.CHUNKED, 5, 64)).as(row[0].substring(0, Math.min(20, row[0].length())))
                    .isInstanceOf(HttpCodecException.class).hasMessageContaining(row[1])
                    .satisfies(e -> assertThat(((HttpCodecException) e).status()).isEqualTo(400));
        }
        assertThatThrownBy(() -> runs("5\r\nhel", Framing.CHUNKED, 5, 64)).isInstanceOf(EOFException.class);
        assertThatThrownBy(() -> runs("hel", Framing.length(5), 5, 64)).isInstanceOf(EOFException.class);
        assertThatThrownBy(() -> new Http1.BodyRuns(new Http1Input(dribble("", 1), 4), Framing.NONE, 0))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
