package dev.weft.server.http2;

import dev.weft.http.h2.Http2Frame;
import dev.weft.server.HttpHandler;
import dev.weft.server.HttpServer;
import dev.weft.server.ServerLimits;
import dev.weft.server.ServerResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A streamed HTTP/2 upload ({@code ServerRequest#bodyStream()}) is bound as an HTTP/1.1 one is (SlowUploadIT): each
 * run within body_timeout, and once its reader has waited longer than that in all, at least min_body_rate; else the
 * handler's read fails with a 408 and the stream ends, while the connection's other streams go on. Raw frames over
 * loopback (h2c with prior knowledge).
 */
class SlowUploadH2IT {
    private static HttpServer server;
    private static InetSocketAddress address;

    @BeforeAll
    static void start() throws IOException {
        ServerLimits limits = ServerLimits.builder().bodyTimeout(Duration.ofSeconds(1)).minBodyRate(1024)
                .idleTimeout(Duration.ofSeconds(30)).build();
        HttpHandler handler = r -> {
            if (r.method().equals("GET")) {
                return ServerResponse.json(200, "{\"get\":true}");
            }
            if (r.path().equals("/stall")) { // takes none of its body: it holds its bytes, and the connection's window
                Thread.sleep(Duration.ofMinutes(1)); // until its stream is reset (interrupted)
                return ServerResponse.json(200, "{}");
            }
            long n = 0;
            try {
                byte[] run;
                while ((run = r.bodyStream().next()) != null) {
                    n += run.length;
                }
            } catch (dev.weft.http.HttpCodecException e) {
                return ServerResponse.json(e.status(), "{\"status\":" + e.status() + ",\"error\":\"" + e.getMessage()
                        + "\"}");
            } catch (IOException | InterruptedException e) {
                return ServerResponse.json(400, "{\"status\":400,\"error\":\"" + e.getMessage() + "\"}");
            }
            return ServerResponse.json(200, "{\"status\":200,\"bytes\":" + n + "}");
        };
        server = HttpServer.builder(handler).limits(limits).streamedBodies(head -> true).start();
        address = server.addresses().getFirst();
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    /**
     * Opens stream {@code id} with a POST and sends {@code chunks} DATA frames of {@code size} bytes, {@code pauseMillis}
     * apart, then END_STREAM (stopping once the stream is answered); returns the answer's body.
     */
    private static String upload(RawH2 c, int id, int chunks, int size, long pauseMillis) throws Exception {
        c.headers(id, false, RawH2.request("POST", "/u"));
        c.flush();
        for (int i = 0; i < chunks && !answered(c, id); i++) {
            c.frame(Http2Frame.TYPE_DATA, 0, id, new byte[size]);
            c.flush();
            Thread.sleep(pauseMillis);
        }
        if (!answered(c, id)) {
            c.frame(Http2Frame.TYPE_DATA, Http2Frame.FLAG_END_STREAM, id, new byte[0]);
            c.flush();
        }
        return body(c, id);
    }

    private static boolean answered(RawH2 c, int id) {
        return c.frames.stream().anyMatch(f -> f instanceof Http2Frame.Headers h && h.streamId() == id);
    }

    /** The DATA of stream {@code id} until its END_STREAM (within 10 s). */
    private static String body(RawH2 c, int id) throws InterruptedException {
        StringBuilder b = new StringBuilder();
        long until = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (System.nanoTime() - until < 0) {
            Http2Frame.Data d = c.await(Http2Frame.Data.class, Duration.ofNanos(Math.max(1, until - System.nanoTime())));
            if (d == null) {
                break;
            }
            if (d.streamId() == id) {
                b.append(new String(d.data(), StandardCharsets.UTF_8));
                if (d.endStream()) {
                    return b.toString();
                }
            }
        }
        throw new AssertionError("stream " + id + " not answered whole within 10 s; had: " + b);
    }

    @Test
    void aTrickleUnderTheRateFailsOnceItHasWaitedBodyTimeoutAndTheConnectionGoesOn() throws Exception {
        long timeoutsBefore = server.http2Metrics().bodyTimeouts();
        try (RawH2 c = RawH2.open(address)) {
            long t0 = System.nanoTime();
            // 10 bytes every 300 ms: each run well within body_timeout (1 s), about 33 bytes a second in all
            String answer = upload(c, 1, 30, 10, 300);
            assertThat(answer).contains("\"status\":408").contains("min_body_rate");
            assertThat(Duration.ofNanos(System.nanoTime() - t0)).as("not the whole trickle (9 s)")
                    .isLessThan(Duration.ofSeconds(6));
            c.headers(3, true, RawH2.request("GET", "/after"));
            c.flush();
            assertThat(body(c, 3)).as("the connection's next stream").contains("\"get\":true");
        }
        assertThat(server.http2Metrics().bodyTimeouts() - timeoutsBefore).isEqualTo(1);
    }

    @Test
    void aStreamedBodyWithNoByteForBodyTimeoutFails() throws Exception {
        try (RawH2 c = RawH2.open(address)) {
            long t0 = System.nanoTime();
            c.headers(1, false, RawH2.request("POST", "/u"));
            c.flush();
            String answer = body(c, 1); // before: no answer at all (the handler waited for ever)
            assertThat(answer).contains("\"status\":408").contains("body_timeout");
            assertThat(Duration.ofNanos(System.nanoTime() - t0)).isGreaterThanOrEqualTo(Duration.ofMillis(900));
        }
    }

    /**
     * Opens 17 streams whose handler takes nothing, 65,535 bytes on each of 16 (their whole window) and 16 on the
     * 17th: the connection's window (1 MiB) is spent, and the client may send no byte on any stream.
     */
    private static void spendTheConnectionsWindow(RawH2 c) throws IOException {
        for (int i = 0; i < 17; i++) {
            int id = 1 + 2 * i;
            c.headers(id, false, RawH2.request("POST", "/stall"));
            int left = i < 16 ? 65_535 : 16;
            while (left > 0) {
                int n = Math.min(left, 16_384);
                c.frame(Http2Frame.TYPE_DATA, 0, id, new byte[n]);
                left -= n;
            }
        }
    }

    @Test
    void aStreamHeldBackByTheConnectionsWindowIsNotTheSlowClient() throws Exception {
        try (RawH2 c = RawH2.open(address)) {
            spendTheConnectionsWindow(c);
            c.headers(35, false, RawH2.request("POST", "/u"));
            c.flush();
            Thread.sleep(1500); // over body_timeout (1 s): the client could send nothing on stream 35 meanwhile
            assertThat(answered(c, 35)).as("stream 35 answered (before: 408, no byte for body_timeout)").isFalse();
            c.frames.clear(); // the connection's first WINDOW_UPDATE among them
            for (int i = 0; i < 17; i++) {
                c.rst(1 + 2 * i, 0x8); // CANCEL: their bytes are given back to the connection's window
            }
            c.flush();
            Http2Frame.WindowUpdate more;
            do {
                more = c.await(Http2Frame.WindowUpdate.class, Duration.ofSeconds(5));
            } while (more != null && more.streamId() != 0);
            assertThat(more).as("the connection's window given back").isNotNull();
            c.frame(Http2Frame.TYPE_DATA, Http2Frame.FLAG_END_STREAM, 35, new byte[100]);
            c.flush();
            assertThat(body(c, 35)).contains("\"status\":200").contains("\"bytes\":100");
        }
    }

    @Test
    void aClientThatHoldsItsOwnWindowDownBuysOneBodyTimeoutAtMost() throws Exception {
        try (RawH2 c = RawH2.open(address)) {
            // the same spent window, kept so: the time it holds stream 35 back is excused up to one body_timeout
            spendTheConnectionsWindow(c);
            long t0 = System.nanoTime();
            c.headers(35, false, RawH2.request("POST", "/u"));
            c.flush();
            String answer = body(c, 35);
            Duration took = Duration.ofNanos(System.nanoTime() - t0);
            assertThat(answer).contains("\"status\":408").contains("body_timeout");
            assertThat(took).as("body_timeout, and as much again excused").isBetween(Duration.ofMillis(1900),
                    Duration.ofSeconds(4));
        }
    }

    @Test
    void anUploadAtAFairRateIsReadWhole() throws Exception {
        try (RawH2 c = RawH2.open(address)) {
            // 4 KiB every 300 ms: about 13 KiB a second, over the rate, for longer than body_timeout
            String answer = upload(c, 1, 8, 4096, 300);
            assertThat(answer).contains("\"status\":200").contains("\"bytes\":32768");
        }
    }
}
