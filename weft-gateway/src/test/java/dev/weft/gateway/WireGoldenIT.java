package dev.weft.gateway;

import dev.weft.devtools.Golden;
import dev.weft.gateway.config.GatewayConfigLoader;
import dev.weft.gateway.server.Gateway;
import dev.weft.upstream.UpstreamConfig;
import dev.weft.upstream.UpstreamServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.TreeSet;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The gateway's part of the compatibility contract, held by golden files under {@code src/test/resources/golden/}
 * (see {@link Golden} for how to regenerate them, and why a change to one is a compatibility decision): the bytes of
 * a few exchanges on the wire (a client's request and the gateway's answer; the request the gateway sends a backend;
 * weft upstream's answer), and the names of the metrics {@code /-/metrics} serves. Volatile values (the date, trace
 * and span ids, ports) are replaced by placeholders.
 */
class WireGoldenIT {
    private UpstreamServer sim;
    private Gateway gw;
    private ServerSocket backend;
    /** Each request the recording backend read, as bytes on the wire. */
    private final BlockingQueue<String> received = new LinkedBlockingQueue<>();

    @TempDir
    Path dir;

    @BeforeEach
    void start() throws Exception {
        sim = UpstreamServer.start(UpstreamConfig.local());
        backend = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread.ofVirtual().start(this::acceptBackend);
        Path f = dir.resolve("gw.yaml");
        Files.writeString(f, """
                routes:
                  - get: /one/{id}
                    forward_headers: [x-request-id]
                    calls:
                      a: { url: "SIM/a/{path.id}" }
                      b: { url: "SIM/b?items=2", needs: [a] }
                  - post: /rec/{id}
                    forward_headers: [x-request-id]
                    calls:
                      r:
                        method: POST
                        url: "REC/r/{path.id}"
                        headers: { x-user: "{header.x-user}" }
                        body: { id: "{path.id}", note: "for {header.x-user}" }
                  - get: /fails
                    calls:
                      f: { url: "SIM/f?status=503" }
                """.replace("SIM", sim.url()).replace("REC", "http://127.0.0.1:" + backend.getLocalPort()));
        gw = Gateway.start(GatewayConfigLoader.load(f), new InetSocketAddress("127.0.0.1", 0), null, line -> { });
    }

    @AfterEach
    void stop() throws IOException {
        if (gw != null) {
            gw.close();
        }
        backend.close();
        sim.close();
    }

    /** The recording backend: reads each request whole, records its bytes, answers with fixed bytes. */
    private void acceptBackend() {
        while (!backend.isClosed()) {
            try {
                Socket s = backend.accept();
                Thread.ofVirtual().start(() -> {
                    try (s) {
                        InputStream in = s.getInputStream();
                        OutputStream out = s.getOutputStream();
                        for (byte[] req = readMessage(in); req != null; req = readMessage(in)) {
                            received.add(new String(req, StandardCharsets.ISO_8859_1));
                            out.write(("HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nX-Backend: rec\r\n"
                                    + "Content-Length: 27\r\n\r\n{\"stored\":true,\"items\":[1]}").getBytes(StandardCharsets.US_ASCII));
                            out.flush();
                        }
                    } catch (IOException ignored) {
                        // the gateway closed its connection
                    }
                });
            } catch (IOException closed) {
                return;
            }
        }
    }

    /**
     * One HTTP/1.1 message read whole from {@code in} (head, then a body of Content-Length bytes or chunked), or null
     * at the end of the stream before its first byte.
     */
    static byte[] readMessage(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int matched = 0;
        while (matched < 4) {
            int b = in.read();
            if (b < 0) {
                if (head.size() == 0) {
                    return null;
                }
                throw new IOException("the stream ended inside a head: " + head);
            }
            head.write(b);
            matched = (b == "\r\n\r\n".charAt(matched)) ? matched + 1 : (b == '\r' ? 1 : 0);
        }
        String h = head.toString(StandardCharsets.ISO_8859_1);
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        all.write(head.toByteArray());
        String lower = h.toLowerCase(Locale.ROOT);
        int cl = lower.indexOf("\r\ncontent-length:");
        if (cl >= 0) {
            int end = lower.indexOf("\r\n", cl + 2);
            int n = Integer.parseInt(h.substring(cl + "\r\ncontent-length:".length(), end).strip());
            all.write(in.readNBytes(n));
        } else if (lower.contains("\r\ntransfer-encoding: chunked")) {
            ByteArrayOutputStream line = new ByteArrayOutputStream();
            while (true) {
                line.reset();
                for (int b = in.read(); b != '\n'; b = in.read()) {
                    if (b < 0) {
                        throw new IOException("the stream ended inside a chunk size");
                    }
                    line.write(b);
                }
                all.write(line.toByteArray());
                all.write('\n');
                int size = Integer.parseInt(line.toString(StandardCharsets.ISO_8859_1).strip(), 16);
                all.write(in.readNBytes(size + 2)); // the chunk and its CRLF (after the last, the empty trailer's)
                if (size == 0) {
                    break;
                }
            }
        }
        return all.toByteArray();
    }

    /** Sends {@code request} on a new connection to {@code at} and returns the answer's bytes, read whole. */
    private static String exchange(InetSocketAddress at, String request) throws IOException {
        try (Socket s = new Socket()) {
            s.connect(at, 10_000);
            s.setSoTimeout(30_000);
            s.getOutputStream().write(request.getBytes(StandardCharsets.ISO_8859_1));
            byte[] answer = readMessage(s.getInputStream());
            assertThat(answer).as("an answer to " + request).isNotNull();
            return new String(answer, StandardCharsets.ISO_8859_1);
        }
    }

    /** {@code text} with its volatile values replaced: dates, trace and span ids, the ports of this run. */
    private String normalized(String text) {
        return text
                .replaceAll("(?im)^(date: ).*$", "$1<DATE>")
                .replaceAll("00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]", "00-<TRACE>-<SPAN>-<FLAGS>")
                .replaceAll("\"trace_id\": ?\"[0-9a-f]{32}\"", "\"trace_id\":\"<TRACE>\"")
                .replace(":" + sim.addresses().getFirst().getPort(), ":<SIM_PORT>")
                .replace(":" + backend.getLocalPort(), ":<BACKEND_PORT>")
                .replace(":" + gw.address().getPort(), ":<GATEWAY_PORT>");
    }

    private static String shown(String request, String answer) {
        return ">>> request\n" + request.replace("\r\n", "\\r\\n\n") + "\n<<< answer\n" + answer.replace("\r\n", "\\r\\n\n")
                + "\n";
    }

    @Test
    void theBytesOfAFewExchangesAreAsRecorded() throws Exception {
        String one = "GET /one/42 HTTP/1.1\r\nHost: gw\r\nX-Request-Id: r-1\r\n\r\n";
        String oneAnswer = exchange(gw.address(), one);
        assertThat(oneAnswer).startsWith("HTTP/1.1 200 ");
        Golden.check("wire/gateway-get.txt", normalized(shown(one, oneAnswer)));

        String body = "{\"ignored\":1}";
        String rec = "POST /rec/7 HTTP/1.1\r\nHost: gw\r\nX-Request-Id: r-2\r\nX-User: ann\r\nContent-Type: "
                + "application/json\r\nContent-Length: " + body.length() + "\r\n\r\n" + body;
        String recAnswer = exchange(gw.address(), rec);
        String sent = received.poll(30, TimeUnit.SECONDS);
        assertThat(sent).as("the backend's request").isNotNull();
        Golden.check("wire/gateway-post.txt", normalized(shown(rec, recAnswer)));
        Golden.check("wire/gateway-to-backend.txt", normalized(">>> what the gateway sent the backend\n"
                + sent.replace("\r\n", "\\r\\n\n") + "\n"));

        String fails = "GET /fails HTTP/1.1\r\nHost: gw\r\n\r\n";
        Golden.check("wire/gateway-call-failed.txt", normalized(shown(fails, exchange(gw.address(), fails))));
        String none = "GET /nowhere HTTP/1.1\r\nHost: gw\r\n\r\n";
        Golden.check("wire/gateway-no-route.txt", normalized(shown(none, exchange(gw.address(), none))));
        String bad = "GET /one/1 HTTP/1.1\r\nHost: gw\r\nBad Header: x\r\n\r\n";
        Golden.check("wire/gateway-bad-request.txt", normalized(shown(bad, exchange(gw.address(), bad))));

        String simGet = "GET /b/1?bytes=64 HTTP/1.1\r\nHost: sim\r\n\r\n";
        Golden.check("wire/upstream-get.txt", normalized(shown(simGet, exchange(sim.addresses().getFirst(), simGet))));
        String simStatus = "GET /x?status=429 HTTP/1.1\r\nHost: sim\r\n\r\n";
        Golden.check("wire/upstream-status.txt", normalized(shown(simStatus, exchange(sim.addresses().getFirst(), simStatus))));
    }

    @Test
    void theMetricNamesAreAsRecorded() throws Exception {
        for (String path : List.of("/one/1", "/fails", "/nowhere")) {
            exchange(gw.address(), "GET " + path + " HTTP/1.1\r\nHost: gw\r\n\r\n");
        }
        String scrape = exchange(gw.address(), "GET /-/metrics HTTP/1.1\r\nHost: gw\r\n\r\n");
        TreeSet<String> names = new TreeSet<>();
        for (String line : scrape.split("\n")) {
            if (line.startsWith("# TYPE ")) {
                names.add(line.substring("# TYPE ".length()).strip());
            }
        }
        // which jvm_gc_* series exist depends on the JVM's collector and on whether it has run yet
        names.removeIf(n -> n.startsWith("jvm_gc_"));
        assertThat(names).as(scrape).hasSizeGreaterThan(20);
        Golden.check("metrics/gateway-metric-names.txt", String.join("\n", names) + "\n");
    }
}
