package dev.weft.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import dev.weft.gateway.config.GatewayConfigLoader;
import dev.weft.gateway.server.Gateway;
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
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Uploads through a {@code proxy:} route stream to the backend as they come (docs/gateway.md, Proxy routes), over
 * HTTP/1.1 (chunked and with Content-Length) and HTTP/2, within the route's {@code max_body} (a gRPC content-type does
 * not lift it), a backend's early answer stands, and an event stream answered while the upload comes keeps its write
 * deadline; against real backends over loopback: a JDK HttpServer that digests what it reads, raw sockets that answer
 * before the body ends, and one that streams events at once.
 */
class ProxyUploadIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private HttpServer digest;
    /** Bytes the digest backend has read so far, over all requests. */
    private final AtomicLong received = new AtomicLong();
    /** Requests whose body the digest backend read whole. */
    private final AtomicInteger whole = new AtomicInteger();
    private final AtomicInteger earlyAnswers = new AtomicInteger();
    private ServerSocket early;
    private ServerSocket events;
    private Gateway gw;

    @TempDir
    Path dir;

    @BeforeEach
    void start() throws Exception {
        digest = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        digest.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        digest.createContext("/", ex -> {
            MessageDigest sha;
            try {
                sha = MessageDigest.getInstance("SHA-256");
            } catch (java.security.NoSuchAlgorithmException e) {
                throw new IllegalStateException(e);
            }
            long n = 0;
            try (InputStream in = ex.getRequestBody()) {
                byte[] buf = new byte[8192];
                int r;
                while ((r = in.read(buf)) > 0) {
                    sha.update(buf, 0, r);
                    n += r;
                    received.addAndGet(r);
                }
            } catch (IOException cut) {
                ex.close();
                return; // a body cut short: never read as whole
            }
            whole.incrementAndGet();
            String te = ex.getRequestHeaders().getFirst("Transfer-Encoding");
            String cl = ex.getRequestHeaders().getFirst("Content-Length");
            String expect = ex.getRequestHeaders().getFirst("Expect");
            byte[] body = JSON.writeValueAsBytes(java.util.Map.of("bytes", n,
                    "sha256", HexFormat.of().formatHex(sha.digest()),
                    "transfer_encoding", te == null ? "" : te, "content_length", cl == null ? "" : cl,
                    "expect", expect == null ? "" : expect));
            ex.getResponseHeaders().add("Content-Type", "application/json");
            ex.sendResponseHeaders(200, body.length);
            ex.getResponseBody().write(body);
            ex.close();
        });
        digest.start();
        early = rawBackend(this::answerFirst);
        events = rawBackend(ProxyUploadIT::eventsAtOnce);
        Path f = dir.resolve("gw.yaml");
        Files.writeString(f, """
                http2: { upgrade: true }
                limits: { max_body_bytes: 8MiB, idle_timeout: 2s, body_timeout: 4s }
                routes:
                  - prefix: /up/
                    proxy: "DIGEST/"
                    max_body: 8MiB
                    timeout: 20s
                  - prefix: /small/
                    proxy: "DIGEST/"
                    max_body: 1MiB
                    timeout: 20s
                  - prefix: /early/
                    proxy: "EARLY/"
                    max_body: 8MiB
                    timeout: 20s
                  - prefix: /events/
                    proxy: "EVENTS/"
                    max_body: 8MiB
                    timeout: 4s
                """.replace("DIGEST/", "http://127.0.0.1:" + digest.getAddress().getPort() + "/")
                .replace("EARLY/", "http://127.0.0.1:" + early.getLocalPort() + "/")
                .replace("EVENTS/", "http://127.0.0.1:" + events.getLocalPort() + "/"));
        gw = Gateway.start(GatewayConfigLoader.load(f), new InetSocketAddress("127.0.0.1", 0), null, line -> { });
    }

    /** A backend on loopback that serves each connection it accepts with {@code serve}, on a thread of its own. */
    private static ServerSocket rawBackend(java.util.function.Consumer<Socket> serve) throws IOException {
        ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread.ofVirtual().start(() -> {
            while (!server.isClosed()) {
                try {
                    Socket s = server.accept();
                    Thread.ofVirtual().start(() -> serve.accept(s));
                } catch (IOException e) {
                    return;
                }
            }
        });
        return server;
    }

    /** Reads a head, then streams events as fast as they are taken while another thread drops the request's body. */
    private static void eventsAtOnce(Socket s) {
        try (s) {
            InputStream in = s.getInputStream();
            readHead(in);
            Thread.ofVirtual().start(() -> {
                try {
                    in.transferTo(OutputStream.nullOutputStream());
                } catch (IOException e) {
                    // gone
                }
            });
            OutputStream out = s.getOutputStream();
            out.write("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
                    .getBytes(StandardCharsets.US_ASCII));
            byte[] event = ("data: " + "x".repeat(16 * 1024 - 8) + "\n\n").getBytes(StandardCharsets.US_ASCII);
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (System.nanoTime() - until < 0) {
                out.write((Integer.toHexString(event.length) + "\r\n").getBytes(StandardCharsets.US_ASCII));
                out.write(event);
                out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
                out.flush();
            }
        } catch (IOException e) {
            // the gateway went away
        }
    }

    /** A message's head up to its blank line, as text; EOFException when the stream ends first. */
    private static String readHead(InputStream in) throws IOException {
        ByteArrayOutputStream h = new ByteArrayOutputStream();
        int state = 0;
        while (state < 4) {
            int c = in.read();
            if (c < 0) {
                throw new java.io.EOFException("closed before the head ended: " + h);
            }
            h.write(c);
            state = (c == '\r' && (state == 0 || state == 2)) || (c == '\n' && (state == 1 || state == 3))
                    ? state + 1 : 0;
        }
        return h.toString(StandardCharsets.ISO_8859_1);
    }

    /**
     * Reads a head, answers 401 at once without reading the body, and closes: with the body still coming, at once
     * (the kernel resets the connection) every other time, else a moment later.
     */
    private void answerFirst(Socket s) {
        try (s) {
            readHead(s.getInputStream());
            s.getOutputStream().write(("HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\n"
                    + "Content-Length: 16\r\nConnection: close\r\n\r\n{\"who\":\"nobody\"}").getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().flush();
            if (earlyAnswers.incrementAndGet() % 2 == 0) {
                Thread.sleep(300);
            }
        } catch (IOException | InterruptedException e) {
            // the gateway went away
        }
    }

    @AfterEach
    void stop() throws IOException {
        if (gw != null) {
            gw.close();
        }
        digest.stop(0);
        early.close();
        events.close();
    }

    private Socket connect() throws IOException {
        Socket s = new Socket("127.0.0.1", gw.address().getPort());
        s.setSoTimeout(15_000);
        return s;
    }

    private static byte[] random(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    private static String sha(byte[] b) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b));
    }

    private static void chunks(OutputStream out, byte[] data, int from, int to) throws IOException {
        for (int p = from; p < to; p += 32 * 1024) {
            int n = Math.min(32 * 1024, to - p);
            out.write((Integer.toHexString(n) + "\r\n").getBytes(StandardCharsets.US_ASCII));
            out.write(data, p, n);
            out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
        }
        out.flush();
    }

    /** The whole body in chunks and the last chunk; the gateway may answer and close before the last bytes go. */
    private static void uploadAll(OutputStream out, byte[] data) {
        try {
            chunks(out, data, 0, data.length);
            out.write("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
        } catch (IOException closed) {
            // answered and closed first: the answer is read next
        }
    }

    /** One answer with Content-Length: status line, head (lower-cased names) and body, as text. */
    record Answer(int status, String head, String body) {
        JsonNode json() throws IOException {
            return JSON.readTree(body);
        }
    }

    private static Answer read(InputStream in) throws IOException {
        String head = readHead(in);
        int length = 0;
        for (String line : head.split("\r\n")) {
            if (line.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
                length = Integer.parseInt(line.substring(15).strip());
            }
        }
        return new Answer(Integer.parseInt(head.substring(9, 12)), head.toLowerCase(Locale.ROOT),
                new String(in.readNBytes(length), StandardCharsets.UTF_8));
    }

    @Test
    void aChunkedUploadReachesTheBackendBeforeItsEndAndTheConnectionCarriesOn() throws Exception {
        byte[] data = random(2 << 20, 1);
        try (Socket s = connect()) {
            OutputStream out = s.getOutputStream();
            out.write("POST /up/a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Type: application/octet-stream\r\n\r\n"
                    .getBytes(StandardCharsets.US_ASCII));
            chunks(out, data, 0, 1 << 20);
            // held whole, the body's first half would never reach the backend before its second half is sent
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (received.get() < 1 << 20 && System.nanoTime() - until < 0) {
                Thread.sleep(10);
            }
            assertThat(received.get()).as("the backend read the first half while the client held the second")
                    .isGreaterThanOrEqualTo(1 << 20);
            chunks(out, data, 1 << 20, data.length);
            out.write("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            Answer a = read(s.getInputStream());
            assertThat(a.status()).as(a.toString()).isEqualTo(200);
            assertThat(a.json().get("bytes").asLong()).isEqualTo(data.length);
            assertThat(a.json().get("sha256").asText()).isEqualTo(sha(data));
            assertThat(a.json().get("transfer_encoding").asText()).isEqualTo("chunked");
            assertThat(a.head()).doesNotContain("connection: close");
            // the body was read to its end: the connection takes the next request
            out.write("POST /up/b HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            Answer next = read(s.getInputStream());
            assertThat(next.status()).as(next.toString()).isEqualTo(200);
            assertThat(next.json().get("bytes").asLong()).isEqualTo(5);
        }
    }

    @Test
    void aClientThatWaitsForAHundredGetsItAndTheBackendIsNotAskedForOne() throws Exception {
        byte[] data = random(2 << 20, 8);
        try (Socket s = connect()) {
            OutputStream out = s.getOutputStream();
            out.write("PUT /up/a HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nTransfer-Encoding: chunked\r\n\r\n"
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            String interim = "HTTP/1.1 100 Continue\r\n\r\n";
            s.setSoTimeout(5000); // curl would send after 1 s of its own: a 100 comes before that or not at all
            assertThat(new String(s.getInputStream().readNBytes(interim.length()), StandardCharsets.ISO_8859_1))
                    .isEqualTo(interim);
            s.setSoTimeout(15_000);
            uploadAll(out, data);
            Answer a = read(s.getInputStream());
            assertThat(a.status()).as(a.toString()).isEqualTo(200);
            assertThat(a.json().get("bytes").asLong()).isEqualTo(data.length);
            assertThat(a.json().get("expect").asText()).as("met by the gateway, not relayed").isEmpty();
        }
    }

    @Test
    void aClientThatWaitsForAHundredIsAnsweredAtOnceWhenTheHeadDecides() throws Exception {
        for (String[] c : new String[][] {{"/nowhere/a", "404"}, {"/small/a", "413"}}) {
            try (Socket s = connect()) {
                s.getOutputStream().write(("POST " + c[0] + " HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
                        + "Content-Length: 2000000\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                s.getOutputStream().flush();
                Answer a = read(s.getInputStream());
                assertThat(a.status()).as("%s: %s", c[0], a).isEqualTo(Integer.parseInt(c[1]));
                assertThat(a.head()).as(c[0]).contains("connection: close");
            }
        }
        assertThat(received.get()).isZero();
    }

    @Test
    void anUploadWithContentLengthKeepsItsLengthToTheBackend() throws Exception {
        byte[] data = random(3 << 20, 2);
        try (HttpClient c = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()) {
            HttpResponse<String> r = c.send(HttpRequest.newBuilder(URI.create(gw.url() + "/up/x"))
                    .timeout(Duration.ofSeconds(20)).PUT(HttpRequest.BodyPublishers.ofByteArray(data)).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            JsonNode j = JSON.readTree(r.body());
            assertThat(j.get("bytes").asLong()).isEqualTo(data.length);
            assertThat(j.get("sha256").asText()).isEqualTo(sha(data));
            assertThat(j.get("content_length").asText()).isEqualTo(Integer.toString(data.length));
            assertThat(j.get("transfer_encoding").asText()).isEmpty();
        }
    }

    @Test
    void anHttp2UploadOfNoLengthStreamsToAnHttp1Backend() throws Exception {
        byte[] data = random(2 << 20, 3);
        try (HttpClient c = HttpClient.newBuilder().version(HttpClient.Version.HTTP_2).build()) {
            HttpResponse<String> warm = c.send(HttpRequest.newBuilder(URI.create(gw.url() + "/up/warm")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(warm.version()).as("upgraded to h2c").isEqualTo(HttpClient.Version.HTTP_2);
            HttpResponse<String> r = c.send(HttpRequest.newBuilder(URI.create(gw.url() + "/up/x"))
                    .timeout(Duration.ofSeconds(20)).POST(HttpRequest.BodyPublishers.ofInputStream(
                            () -> new java.io.ByteArrayInputStream(data))).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(r.version()).isEqualTo(HttpClient.Version.HTTP_2);
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            JsonNode j = JSON.readTree(r.body());
            assertThat(j.get("bytes").asLong()).isEqualTo(data.length);
            assertThat(j.get("sha256").asText()).isEqualTo(sha(data));
            assertThat(j.get("transfer_encoding").asText()).isEqualTo("chunked");
        }
    }

    @Test
    void anHttp2UploadThatTricklesUnderMinBodyRateIs408AndTheConnectionGoesOn() throws Exception {
        // 10 bytes every 500 ms (20 bytes a second, 20 s in all): each DATA frame within body_timeout (4 s), and
        // under min_body_rate (1 KiB a second by default) once it has waited 4 s; before, only the route's timeout
        // (20 s) bounded it, over HTTP/2
        java.io.InputStream trickle = new java.io.InputStream() {
            private int sent;

            @Override
            public int read() {
                throw new UnsupportedOperationException();
            }

            @Override
            public int read(byte[] b, int off, int len) throws java.io.IOException {
                if (sent >= 400) {
                    return -1;
                }
                try {
                    Thread.sleep(500);
                } catch (InterruptedException e) {
                    throw new java.io.InterruptedIOException();
                }
                int n = Math.min(len, 10);
                sent += n;
                return n;
            }
        };
        try (HttpClient c = HttpClient.newBuilder().version(HttpClient.Version.HTTP_2).build()) {
            HttpResponse<String> warm = c.send(HttpRequest.newBuilder(URI.create(gw.url() + "/up/warm")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(warm.version()).as("upgraded to h2c").isEqualTo(HttpClient.Version.HTTP_2);
            long t0 = System.nanoTime();
            HttpResponse<String> r = c.send(HttpRequest.newBuilder(URI.create(gw.url() + "/up/slow"))
                    .timeout(Duration.ofSeconds(30)).POST(HttpRequest.BodyPublishers.ofInputStream(() -> trickle))
                    .build(), HttpResponse.BodyHandlers.ofString());
            assertThat(r.version()).isEqualTo(HttpClient.Version.HTTP_2);
            assertThat(r.statusCode()).as(r.body()).isEqualTo(408);
            assertThat(r.body()).contains("min_body_rate").contains("\"route\"");
            assertThat(Duration.ofNanos(System.nanoTime() - t0)).as("not the route's timeout (20 s)")
                    .isLessThan(Duration.ofSeconds(12));
            HttpResponse<String> after = c.send(HttpRequest.newBuilder(URI.create(gw.url() + "/up/after")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(after.statusCode()).as("the connection's next stream").isEqualTo(200);
            assertThat(after.version()).isEqualTo(HttpClient.Version.HTTP_2);
        }
    }

    @Test
    void aChunkedUploadOverMaxBodyIs413AndTheBackendNeverReadsAWholeBody() throws Exception {
        byte[] data = random(2 << 20, 4);
        try (Socket s = connect()) {
            OutputStream out = s.getOutputStream();
            out.write("POST /small/a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                    .getBytes(StandardCharsets.US_ASCII));
            uploadAll(out, data);
            Answer a = read(s.getInputStream());
            assertThat(a.status()).as(a.toString()).isEqualTo(413);
            assertThat(a.json().get("route").asText()).isEqualTo("* /small/");
            assertThat(a.json().get("error").asText()).contains("max_body");
            assertThat(a.head()).contains("connection: close");
        }
        Thread.sleep(300);
        assertThat(whole.get()).as("a part of the upload never reads as the whole").isZero();
    }

    @Test
    void aDeclaredLengthOverMaxBodyIs413BeforeTheBackendIsCalled() throws Exception {
        try (Socket s = connect()) {
            OutputStream out = s.getOutputStream();
            out.write("POST /small/a HTTP/1.1\r\nHost: x\r\nContent-Length: 5242880\r\n\r\n"
                    .getBytes(StandardCharsets.US_ASCII));
            out.write(new byte[64 * 1024]);
            out.flush();
            Answer a = read(s.getInputStream()); // answered with most of the body still to come
            assertThat(a.status()).as(a.toString()).isEqualTo(413);
            assertThat(a.json().get("route").asText()).isEqualTo("* /small/");
            assertThat(a.head()).contains("connection: close");
        }
        assertThat(received.get()).as("the backend was not called").isZero();
    }

    @Test
    void theBackendsAnswerBeforeTheUploadEndsReachesTheClient() throws Exception {
        // half of the backend's closes come while the gateway still sends the body (a reset): the answer stands
        for (int i = 0; i < 20; i++) {
            try (Socket s = connect()) {
                OutputStream out = s.getOutputStream();
                out.write("POST /early/a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                        .getBytes(StandardCharsets.US_ASCII));
                Thread writer = Thread.ofVirtual().start(() -> {
                    try {
                        chunks(out, random(2 << 20, 5), 0, 2 << 20); // and never the end
                    } catch (IOException closed) {
                        // the gateway closed after its answer
                    }
                });
                long t0 = System.nanoTime();
                Answer a = read(s.getInputStream());
                assertThat(a.status()).as("run %d: %s", i, a).isEqualTo(401);
                assertThat(a.body()).isEqualTo("{\"who\":\"nobody\"}");
                assertThat(a.head()).as("the rest of the body cannot be told from a next request")
                        .contains("connection: close");
                assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(10));
                writer.join(5000);
            }
        }
    }

    @Test
    void aGrpcContentTypeGetsNoUploadPastMaxBodyOverEitherProtocol() throws Exception {
        // the route's destination is plain HTTP/1.1: saying gRPC must not lift max_body
        byte[] data = random(3 << 20, 6);
        try (Socket s = connect()) {
            OutputStream out = s.getOutputStream();
            out.write("POST /small/a HTTP/1.1\r\nHost: x\r\nContent-Type: application/grpc\r\nTransfer-Encoding: chunked\r\n\r\n"
                    .getBytes(StandardCharsets.US_ASCII));
            uploadAll(out, data);
            assertThat(read(s.getInputStream()).status()).isEqualTo(413);
        }
        Thread.sleep(300);
        assertThat(whole.get()).as("no body over max_body was read whole").isZero();
        byte[] big = random(12 << 20, 7);
        try (HttpClient c = HttpClient.newBuilder().version(HttpClient.Version.HTTP_2).build()) {
            c.send(HttpRequest.newBuilder(URI.create(gw.url() + "/small/warm")).build(), HttpResponse.BodyHandlers.ofString());
            whole.set(0); // the warm-up's empty body
            HttpResponse<String> r = c.send(HttpRequest.newBuilder(URI.create(gw.url() + "/small/x"))
                    .header("Content-Type", "application/grpc").timeout(Duration.ofSeconds(20))
                    .POST(HttpRequest.BodyPublishers.ofInputStream(() -> new java.io.ByteArrayInputStream(big)))
                    .build(), HttpResponse.BodyHandlers.ofString());
            assertThat(r.version()).isEqualTo(HttpClient.Version.HTTP_2);
            assertThat(r.statusCode()).as(r.body()).isEqualTo(413);
        }
        Thread.sleep(300);
        assertThat(whole.get()).as("no body over max_body was read whole").isZero();
    }

    @Test
    void aClientThatTakesNoneOfAStreamedAnswerIsClosedAfterItsUploadEnds() throws Exception {
        // the upload's last read must not clear the write deadline of the event stream the client does not take
        try (Socket s = new Socket()) {
            s.setReceiveBufferSize(4096);
            s.connect(gw.address());
            OutputStream out = s.getOutputStream();
            out.write(("POST /events/a HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n"
                    + "Transfer-Encoding: chunked\r\n\r\na\r\n0123456789\r\n").getBytes(StandardCharsets.US_ASCII));
            out.flush();
            Thread.sleep(1000); // the gateway's write blocks meanwhile: this client reads nothing
            out.write("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(12); // idle_timeout is 2 s
            String m = "";
            while (System.nanoTime() - until < 0) {
                m = metric("weft_gateway_connections_write_timeouts_total");
                if (!m.equals("0.0")) {
                    break;
                }
                Thread.sleep(100);
            }
            assertThat(m).as("closed for taking nothing for idle_timeout").isEqualTo("1.0");
        }
    }

    private String metric(String name) throws Exception {
        try (HttpClient c = HttpClient.newHttpClient()) {
            for (String l : c.send(HttpRequest.newBuilder(URI.create(gw.url() + "/-/metrics")).build(),
                    HttpResponse.BodyHandlers.ofString()).body().split("\n")) {
                if (l.startsWith(name + " ")) {
                    return l.substring(name.length() + 1).strip();
                }
            }
        }
        return "absent";
    }

    @Test
    void aMalformedChunkIs400AndTheBackendNeverReadsAWholeBody() throws Exception {
        try (Socket s = connect()) {
            OutputStream out = s.getOutputStream();
            out.write("POST /up/a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\nzz\r\n"
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            Answer a = read(s.getInputStream());
            assertThat(a.status()).as(a.toString()).isEqualTo(400);
            assertThat(a.head()).contains("connection: close");
        }
        Thread.sleep(300);
        assertThat(whole.get()).isZero();
    }
}
