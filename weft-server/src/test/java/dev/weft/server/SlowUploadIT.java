package dev.weft.server;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A streamed HTTP/1.1 upload ({@link ServerRequest#bodyStream()}) that trickles, each run within body_timeout, fails
 * once it has waited longer than body_timeout in all at under min_body_rate (408), and its connection closes; one at
 * a fair rate is read whole. Raw bytes over loopback.
 */
class SlowUploadIT {
    private static HttpServer server;
    private static int port;

    @BeforeAll
    static void start() throws IOException {
        ServerLimits limits = ServerLimits.builder().bodyTimeout(Duration.ofSeconds(1)).minBodyRate(1024)
                .idleTimeout(Duration.ofSeconds(30)).build();
        HttpHandler handler = r -> {
            long n = 0;
            try {
                byte[] run;
                while ((run = r.bodyStream().next()) != null) {
                    n += run.length;
                }
            } catch (dev.weft.http.HttpCodecException e) {
                return ServerResponse.json(e.status(), "{\"error\":\"" + e.getMessage() + "\"}");
            } catch (IOException | InterruptedException e) {
                return ServerResponse.json(400, "{\"error\":\"" + e.getMessage() + "\"}");
            }
            return ServerResponse.json(200, "{\"bytes\":" + n + "}");
        };
        server = HttpServer.builder(handler).limits(limits).streamedBodies(head -> true).start();
        port = server.addresses().getFirst().getPort();
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    /** Sends {@code chunks} chunks of {@code size} bytes, {@code pauseMillis} apart (stopping once answered). */
    private static String upload(int chunks, int size, long pauseMillis) throws Exception {
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setSoTimeout(10_000);
            OutputStream out = s.getOutputStream();
            InputStream in = s.getInputStream();
            out.write("POST /u HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            byte[] data = new byte[size];
            try {
                for (int i = 0; i < chunks; i++) {
                    out.write((Integer.toHexString(size) + "\r\n").getBytes(StandardCharsets.US_ASCII));
                    out.write(data);
                    out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
                    out.flush();
                    if (in.available() > 0) {
                        break; // answered already
                    }
                    Thread.sleep(pauseMillis);
                }
                out.write("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                out.flush();
            } catch (IOException closed) {
                // the server answered and closed first
            }
            ByteArrayOutputStream got = new ByteArrayOutputStream();
            byte[] buf = new byte[4096];
            int n;
            try {
                while ((n = in.read(buf)) > 0) {
                    got.write(buf, 0, n);
                    if (got.toString(StandardCharsets.ISO_8859_1).contains("}")) {
                        break;
                    }
                }
            } catch (IOException reset) {
                // what came before the reset is the answer
            }
            return got.toString(StandardCharsets.ISO_8859_1);
        }
    }

    @Test
    void aTrickleUnderTheRateFailsOnceItHasWaitedBodyTimeoutAndTheConnectionCloses() throws Exception {
        long t0 = System.nanoTime();
        // 10 bytes every 300 ms: each run well within body_timeout (1 s), about 33 bytes a second in all
        String answer = upload(30, 10, 300);
        assertThat(answer).startsWith("HTTP/1.1 408 ").contains("min_body_rate")
                .containsIgnoringCase("connection: close");
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).as("not the whole trickle (9 s)")
                .isLessThan(Duration.ofSeconds(6));
    }

    @Test
    void anUploadAtAFairRateIsReadWhole() throws Exception {
        // 4 KiB every 300 ms: about 13 KiB a second, over the rate, for longer than body_timeout
        String answer = upload(8, 4096, 300);
        assertThat(answer).startsWith("HTTP/1.1 200 ").contains("{\"bytes\":32768}");
    }
}
