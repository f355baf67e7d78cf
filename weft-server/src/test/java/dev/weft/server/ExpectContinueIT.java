package dev.weft.server;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A client that says {@code Expect: 100-continue} waits for a {@code 100 Continue} before it sends its body (RFC 9110
 * section 10.1.1): the server says it as it starts to read the body, held or streamed, and never before a refusal it
 * can give from the head alone (its own 413, or the handler's when {@code expectedBodies} says the body is not
 * wanted); an HTTP/1.0 client is not sent one. Raw bytes over loopback.
 */
class ExpectContinueIT {
    private static HttpServer server;
    private static int port;

    @BeforeAll
    static void start() throws IOException {
        ServerLimits limits = ServerLimits.builder().maxBodyBytes(1024).idleTimeout(Duration.ofSeconds(30)).build();
        HttpHandler handler = r -> {
            if (r.bodyStream() == null) {
                return ServerResponse.json(200, "{\"held\":" + r.body().length + "}");
            }
            long n = 0;
            try {
                byte[] run;
                while ((run = r.bodyStream().next()) != null) {
                    n += run.length;
                }
            } catch (IOException | InterruptedException e) {
                return ServerResponse.json(400, "{\"error\":\"" + e.getMessage() + "\"}");
            }
            return ServerResponse.json(200, "{\"streamed\":" + n + "}");
        };
        HttpHandler routed = r -> r.path().startsWith("/nowhere")
                ? ServerResponse.json(404, "{\"error\":\"no route\"}") : handler.handle(r);
        server = HttpServer.builder(routed).limits(limits)
                .streamedBodies(head -> head.path().startsWith("/stream"))
                .expectedBodies(head -> !head.path().startsWith("/nowhere")).start();
        port = server.addresses().getFirst().getPort();
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    /** What arrives within {@code millis} (until the peer is silent that long), as text. */
    private static String readFor(InputStream in, Socket s, int millis) throws IOException {
        s.setSoTimeout(millis);
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        byte[] buf = new byte[4096];
        try {
            int n;
            while ((n = in.read(buf)) > 0) {
                b.write(buf, 0, n);
            }
        } catch (SocketTimeoutException quiet) {
            // nothing more for now
        }
        return b.toString(StandardCharsets.ISO_8859_1);
    }

    private static void expectContinueThenAnswer(String path, String framing, String body, String answer)
            throws IOException {
        try (Socket s = new Socket("127.0.0.1", port)) {
            OutputStream out = s.getOutputStream();
            InputStream in = s.getInputStream();
            out.write(("POST " + path + " HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n" + framing + "\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            assertThat(readFor(in, s, 2000)).as("the 100 before any byte of the body")
                    .isEqualTo("HTTP/1.1 100 Continue\r\n\r\n");
            out.write(body.getBytes(StandardCharsets.US_ASCII));
            out.flush();
            String rest = readFor(in, s, 2000);
            assertThat(rest).startsWith("HTTP/1.1 200 ").endsWith(answer);
        }
    }

    @Test
    void aHeldBodyGetsTheHundredBeforeItIsRead() throws IOException {
        expectContinueThenAnswer("/held", "Content-Length: 5\r\n", "hello", "{\"held\":5}");
    }

    @Test
    void aStreamedBodyGetsTheHundredWhenTheHandlerFirstReadsIt() throws IOException {
        expectContinueThenAnswer("/stream", "Transfer-Encoding: chunked\r\n", "5\r\nhello\r\n0\r\n\r\n",
                "{\"streamed\":5}");
    }

    @Test
    void aLengthOverTheLimitIsRefusedWithoutAHundred() throws IOException {
        for (String path : new String[] {"/held", "/stream"}) {
            try (Socket s = new Socket("127.0.0.1", port)) {
                s.getOutputStream().write(("POST " + path + " HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
                        + "Content-Length: 5000\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                s.getOutputStream().flush();
                assertThat(readFor(s.getInputStream(), s, 2000)).as(path).startsWith("HTTP/1.1 413 ")
                        .doesNotContain("100 Continue");
            }
        }
    }

    @Test
    void aBodyTheHandlerWillNotWantIsNotAskedForAndTheAnswerClosesTheConnection() throws IOException {
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.getOutputStream().write(("POST /nowhere HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
                    + "Content-Length: 500\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().flush();
            String answer = readFor(s.getInputStream(), s, 2000);
            assertThat(answer).startsWith("HTTP/1.1 404 ").doesNotContain("100 Continue")
                    .containsIgnoringCase("connection: close");
        }
    }

    @Test
    void anHttp10ClientIsNotSentAHundred() throws IOException {
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.getOutputStream().write("POST /held HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\nhello"
                    .getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().flush();
            assertThat(readFor(s.getInputStream(), s, 2000)).startsWith("HTTP/1.1 200 ").endsWith("{\"held\":5}");
        }
    }

    @Test
    void aRequestWithoutABodyIsNotSentAHundred() throws IOException {
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.getOutputStream().write("GET /held HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n\r\n"
                    .getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().flush();
            assertThat(readFor(s.getInputStream(), s, 2000)).startsWith("HTTP/1.1 200 ").endsWith("{\"held\":0}");
        }
    }
}
