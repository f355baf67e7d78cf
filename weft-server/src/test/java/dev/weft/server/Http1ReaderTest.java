package dev.weft.server;

import dev.weft.http.Http1Request;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

/** The reader's buffer is smaller than many heads and bodies: they must still come through whole. */
class Http1ReaderTest {
    /** Hands out at most {@code max} bytes per read, as a socket does. */
    private static InputStream trickle(byte[] data, int max) {
        return new ByteArrayInputStream(data) {
            @Override
            public int read(byte[] b, int off, int len) {
                return super.read(b, off, Math.min(len, max));
            }
        };
    }

    private static byte[] body(int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) ('a' + i % 26);
        }
        return b;
    }

    @Test
    void headsAndBodiesLargerThanTheBufferArriveWholeWithPipelinedRequestsAfterThem() throws Exception {
        String longValue = "v".repeat(3 * Http1Reader.BUFFER_BYTES);
        byte[] big = body(100_000);
        byte[] chunkA = body(5_000);
        byte[] chunkB = body(3);
        ByteArrayOutputStream wire = new ByteArrayOutputStream();
        wire.writeBytes(("POST /one?x=1 HTTP/1.1\r\nHost: h\r\nX-Long: " + longValue + "\r\nContent-Length: " + big.length
                + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        wire.writeBytes(big);
        wire.writeBytes("POST /two HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        wire.writeBytes(Integer.toHexString(chunkA.length).getBytes(StandardCharsets.US_ASCII));
        wire.writeBytes("\r\n".getBytes(StandardCharsets.US_ASCII));
        wire.writeBytes(chunkA);
        wire.writeBytes("\r\n3\r\n".getBytes(StandardCharsets.US_ASCII));
        wire.writeBytes(chunkB);
        wire.writeBytes("\r\n0\r\n\r\nGET /three HTTP/1.1\r\nHost: h\r\n\r\n".getBytes(StandardCharsets.US_ASCII));

        for (int perRead : new int[] {1, 700, Http1Reader.BUFFER_BYTES, 1 << 20}) {
            Http1Reader r = new Http1Reader(trickle(wire.toByteArray(), perRead), 64 * 1024);
            Http1Request one = r.readHead();
            assertThat(one.head().path()).isEqualTo("/one");
            assertThat(one.head().query()).isEqualTo("x=1");
            assertThat(one.head().header("x-long")).isEqualTo(longValue);
            assertThat(r.readBody(one, 1 << 20, true).bytes()).as("%d bytes per read", perRead).isEqualTo(big);

            Http1Request two = r.readHead();
            assertThat(two.head().path()).isEqualTo("/two");
            ByteArrayOutputStream both = new ByteArrayOutputStream();
            both.writeBytes(chunkA);
            both.writeBytes(chunkB);
            assertThat(r.readBody(two, 1 << 20, true).bytes()).as("%d bytes per read", perRead)
                    .isEqualTo(both.toByteArray());

            assertThat(r.readHead().head().path()).isEqualTo("/three");
            assertThat(r.readHead()).as("end of stream between requests").isNull();
        }
    }
}
