package dev.weft.server;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The server's HTTP/1.1 conformance, over raw sockets against the real {@link HttpServer}: each case is the
 * bytes a client sends, the status it must get, and whether the connection must stay open (a second request
 * on it is answered) or be closed (the next read sees the end of the stream). The rejected cases are the
 * ones that let a request be smuggled past a proxy that frames it differently, and the ones RFC 9112 says a
 * server MUST refuse.
 */
class ServerConformanceIT {
    private static final int MAX_HEAD = 4096;
    private static final long MAX_BODY = 64 * 1024;
    private static HttpServer server;
    private static int port;
    /** The same server with the front door ({@link Door}): every case must get the same answer through it. */
    private static HttpServer doorServer;
    private static int doorPort;

    enum Conn { OPEN, CLOSED }

    @BeforeAll
    static void start() throws IOException {
        ServerLimits limits = ServerLimits.builder().maxConcurrent(100).maxHeadBytes(MAX_HEAD).maxBodyBytes(MAX_BODY)
                .idleTimeout(Duration.ofSeconds(30)).maxConnections(100).drainTimeout(Duration.ofSeconds(1)).build();
        HttpHandler echo = r -> ServerResponse.json(200, "{\"method\":\"" + r.method() + "\",\"path\":\"" + r.path()
                + "\",\"body\":" + r.body().length + "}");
        server = HttpServer.builder(echo).limits(limits).start();
        port = server.addresses().getFirst().getPort();
        doorServer = HttpServer.builder(echo).limits(limits).admission(DoorIT.admission(Map.of(), 0, Duration.ZERO))
                .start();
        doorPort = doorServer.addresses().getFirst().getPort();
    }

    @AfterAll
    static void stop() {
        server.close();
        doorServer.close();
    }

    private static Arguments ok(String name, String request, String expectBodyPart, Conn conn) {
        return Arguments.of(name, request, 200, expectBodyPart, conn);
    }

    private static Arguments bad(String name, String request, int status) {
        return Arguments.of(name, request, status, "\"error\"", Conn.CLOSED);
    }

    private static final String H = "Host: x\r\n";

    static Stream<Arguments> cases() {
        return Stream.of(
                // ---- accepted --------------------------------------------------------------------------
                ok("plain GET", "GET /ok HTTP/1.1\r\n" + H + "\r\n", "\"path\":\"/ok\"", Conn.OPEN),
                ok("Content-Length body", "POST /p HTTP/1.1\r\n" + H + "Content-Length: 5\r\n\r\nhello", "\"body\":5", Conn.OPEN),
                ok("Content-Length 0", "POST /p HTTP/1.1\r\n" + H + "Content-Length: 0\r\n\r\n", "\"body\":0", Conn.OPEN),
                ok("two equal Content-Length fields", "POST /p HTTP/1.1\r\n" + H
                        + "Content-Length: 5\r\nContent-Length: 5\r\n\r\nhello", "\"body\":5", Conn.OPEN),
                ok("chunked with extension and trailer", "POST /p HTTP/1.1\r\n" + H
                        + "Transfer-Encoding: chunked\r\n\r\n5;name=\"v\"\r\nhello\r\n3 ;x\r\nabc\r\n0\r\nT: 1\r\n\r\n",
                        "\"body\":8", Conn.OPEN),
                ok("chunked in any case, HTAB before it", "POST /p HTTP/1.1\r\n" + H
                        + "Transfer-Encoding:\tChunked\r\n\r\nA\r\n0123456789\r\n0\r\n\r\n", "\"body\":10", Conn.OPEN),
                ok("empty lines before the request line", "\r\n\r\nGET /lead HTTP/1.1\r\n" + H + "\r\n", "/lead", Conn.OPEN),
                ok("absolute-form target", "GET http://x/abs?q=1 HTTP/1.1\r\n" + H + "\r\n", "\"path\":\"/abs\"", Conn.OPEN),
                ok("HTTP/1.0 without Host closes", "GET /old HTTP/1.0\r\n\r\n", "/old", Conn.CLOSED),
                ok("HTTP/1.0 keep-alive", "GET /old HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", "/old", Conn.OPEN),
                ok("Connection: close", "GET /c HTTP/1.1\r\n" + H + "Connection: close\r\n\r\n", "/c", Conn.CLOSED),
                ok("OPTIONS *", "OPTIONS * HTTP/1.1\r\n" + H + "\r\n", "\"method\":\"OPTIONS\"", Conn.OPEN),
                ok("obs-text and HTAB in a value", "GET /t HTTP/1.1\r\n" + H + "X: a\tb\u00e9\u00ff\r\n\r\n", "/t", Conn.OPEN),
                ok("Host with port and IPv6 literal", "GET /h HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n", "/h", Conn.OPEN),
                ok("empty header value", "GET /e HTTP/1.1\r\n" + H + "X-Empty:\r\n\r\n", "/e", Conn.OPEN),

                // ---- framing: Content-Length ---------------------------------------------------------
                bad("two different Content-Length values", "POST /p HTTP/1.1\r\n" + H
                        + "Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello!", 400),
                bad("Content-Length as a list", "POST /p HTTP/1.1\r\n" + H + "Content-Length: 5, 5\r\n\r\nhello", 400),
                bad("space before the colon", "POST /p HTTP/1.1\r\n" + H + "Content-Length : 5\r\n\r\nhello", 400),
                bad("Content-Length with a sign", "POST /p HTTP/1.1\r\n" + H + "Content-Length: +5\r\n\r\nhello", 400),
                bad("negative Content-Length", "POST /p HTTP/1.1\r\n" + H + "Content-Length: -1\r\n\r\n", 400),
                bad("hex Content-Length", "POST /p HTTP/1.1\r\n" + H + "Content-Length: 0x5\r\n\r\nhello", 400),
                bad("Content-Length with inner space", "POST /p HTTP/1.1\r\n" + H + "Content-Length: 1 0\r\n\r\n", 400),
                bad("empty Content-Length", "POST /p HTTP/1.1\r\n" + H + "Content-Length:\r\n\r\n", 400),
                bad("Content-Length over the limit", "POST /p HTTP/1.1\r\n" + H + "Content-Length: 70000\r\n\r\n", 413),
                bad("Content-Length of 20 digits", "POST /p HTTP/1.1\r\n" + H
                        + "Content-Length: 99999999999999999999\r\n\r\n", 413),

                // ---- framing: Transfer-Encoding ------------------------------------------------------
                bad("Transfer-Encoding and Content-Length", "POST /p HTTP/1.1\r\n" + H
                        + "Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400),
                bad("Content-Length then Transfer-Encoding, smuggled request", "POST /p HTTP/1.1\r\n" + H
                        + "Transfer-Encoding: chunked\r\nContent-Length: 4\r\n\r\n5c\r\nGPOST / HTTP/1.1\r\n\r\n0\r\n\r\n", 400),
                bad("xchunked", "POST /p HTTP/1.1\r\n" + H + "Transfer-Encoding: xchunked\r\n\r\n0\r\n\r\n", 501),
                bad("gzip alone", "POST /p HTTP/1.1\r\n" + H + "Transfer-Encoding: gzip\r\n\r\n", 501),
                bad("gzip, chunked", "POST /p HTTP/1.1\r\n" + H + "Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", 501),
                bad("chunked not last", "POST /p HTTP/1.1\r\n" + H + "Transfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n", 400),
                bad("chunked twice in one field", "POST /p HTTP/1.1\r\n" + H
                        + "Transfer-Encoding: chunked, chunked\r\n\r\n0\r\n\r\n", 400),
                bad("chunked twice in two fields", "POST /p HTTP/1.1\r\n" + H
                        + "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400),
                bad("empty coding in the list", "POST /p HTTP/1.1\r\n" + H + "Transfer-Encoding: chunked,\r\n\r\n0\r\n\r\n", 400),
                bad("Transfer-Encoding in HTTP/1.0", "POST /p HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400),
                bad("space before the colon of Transfer-Encoding", "POST /p HTTP/1.1\r\n" + H
                        + "Transfer-Encoding : chunked\r\n\r\n0\r\n\r\n", 400),

                // ---- chunks --------------------------------------------------------------------------
                bad("chunk size with a sign", chunked("+5\r\nhello\r\n0\r\n\r\n"), 400),
                bad("chunk size with 0x", chunked("0x5\r\nhello\r\n0\r\n\r\n"), 400),
                bad("chunk size with a leading space", chunked(" 5\r\nhello\r\n0\r\n\r\n"), 400),
                bad("chunk size with a trailing space", chunked("5 \r\nhello\r\n0\r\n\r\n"), 400),
                bad("negative chunk size", chunked("-1\r\n\r\n"), 400),
                bad("chunk size that overflows", chunked("10000000000000005\r\nhello\r\n0\r\n\r\n"), 400),
                bad("empty chunk size line", chunked("\r\nhello\r\n0\r\n\r\n"), 400),
                bad("chunk data not followed by CRLF", chunked("5\r\nhelloXX0\r\n\r\n"), 400),
                bad("chunk data followed by a bare LF", chunked("5\r\nhello\n0\r\n\r\n"), 400),
                bad("chunk size line ending in a bare LF", chunked("5\nhello\r\n0\r\n\r\n"), 400),
                bad("control character in a chunk extension", chunked("5;a\u0001\r\nhello\r\n0\r\n\r\n"), 400),
                bad("chunked body over the limit", chunked("10000\r\n" + "x".repeat(0x10000) + "\r\n1\r\ny\r\n0\r\n\r\n"), 413),
                bad("trailer with obs-fold", chunked("0\r\nT: 1\r\n 2\r\n\r\n"), 400),

                // ---- field lines ---------------------------------------------------------------------
                bad("obs-fold", "GET /f HTTP/1.1\r\n" + H + "X: a\r\n b\r\n\r\n", 400),
                bad("first field line starts with a space", "GET /f HTTP/1.1\r\n Host: x\r\n\r\n", 400),
                bad("NUL in a value", "GET /f HTTP/1.1\r\n" + H + "X: a\u0000b\r\n\r\n", 400),
                bad("bare CR in a value", "GET /f HTTP/1.1\r\n" + H + "X: a\rb\r\n\r\n", 400),
                bad("DEL in a value", "GET /f HTTP/1.1\r\n" + H + "X: a\u007fb\r\n\r\n", 400),
                bad("bare LF ending a field line", "GET /f HTTP/1.1\r\nHost: x\nX: 1\r\n\r\n", 400),
                bad("bare LF ending the head", "GET /f HTTP/1.1\r\nHost: x\r\n\n", 400),
                bad("'@' in a field name", "GET /f HTTP/1.1\r\n" + H + "X@Y: 1\r\n\r\n", 400),
                bad("space in a field name", "GET /f HTTP/1.1\r\n" + H + "X Y: 1\r\n\r\n", 400),
                bad("empty field name", "GET /f HTTP/1.1\r\n" + H + ": 1\r\n\r\n", 400),
                bad("field line without a colon", "GET /f HTTP/1.1\r\n" + H + "NoColon\r\n\r\n", 400),
                bad("no Host in HTTP/1.1", "GET /f HTTP/1.1\r\nX: 1\r\n\r\n", 400),
                bad("two Host fields", "GET /f HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400),
                bad("Host with a space", "GET /f HTTP/1.1\r\nHost: a b\r\n\r\n", 400),
                bad("Host with userinfo", "GET /f HTTP/1.1\r\nHost: u@a\r\n\r\n", 400),
                bad("Host with a slash", "GET /f HTTP/1.1\r\nHost: a/b\r\n\r\n", 400),
                bad("head over the limit", "GET /f HTTP/1.1\r\n" + H + "X: " + "y".repeat(MAX_HEAD) + "\r\n\r\n", 431),
                bad("too many fields", "GET /f HTTP/1.1\r\n" + H + "X: 1\r\n".repeat(100) + "\r\n", 431),

                // ---- request line --------------------------------------------------------------------
                bad("HTTP/1.1x", "GET /r HTTP/1.1x\r\n" + H + "\r\n", 400),
                bad("lower-case version", "GET /r http/1.1\r\n" + H + "\r\n", 400),
                bad("HTTP/2.0", "GET /r HTTP/2.0\r\n" + H + "\r\n", 505),
                bad("HTTP/0.9 style", "GET /r\r\n\r\n", 400),
                bad("three spaces", "GET /r x HTTP/1.1\r\n" + H + "\r\n", 400),
                bad("two spaces after the method", "GET  /r HTTP/1.1\r\n" + H + "\r\n", 400),
                bad("trailing space", "GET /r HTTP/1.1 \r\n" + H + "\r\n", 400),
                bad("tab as separator", "GET\t/r HTTP/1.1\r\n" + H + "\r\n", 400),
                bad("control character in the target", "GET /r\u0001 HTTP/1.1\r\n" + H + "\r\n", 400),
                bad("NUL in the target", "GET /r\u0000x HTTP/1.1\r\n" + H + "\r\n", 400),
                bad("non-ASCII in the target", "GET /r\u00e9 HTTP/1.1\r\n" + H + "\r\n", 400),
                bad("fragment in the target", "GET /r#frag HTTP/1.1\r\n" + H + "\r\n", 400),
                bad("method not a token", "G(T /r HTTP/1.1\r\n" + H + "\r\n", 400),
                bad("'*' for GET", "GET * HTTP/1.1\r\n" + H + "\r\n", 400),
                bad("authority-form", "CONNECT x:443 HTTP/1.1\r\n" + H + "\r\n", 400),
                bad("request line ending in a bare LF", "GET /r HTTP/1.1\n" + H + "\r\n", 400),
                bad("request line over the limit", "GET /" + "r".repeat(MAX_HEAD) + " HTTP/1.1\r\n" + H + "\r\n", 414));
    }

    private static String chunked(String body) {
        return "POST /p HTTP/1.1\r\n" + H + "Transfer-Encoding: chunked\r\n\r\n" + body;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void answersAndKeepsOrClosesTheConnection(String name, String request, int status, String bodyPart, Conn conn)
            throws IOException {
        check(port, name, request, status, bodyPart, conn);
    }

    @ParameterizedTest(name = "door: {0}")
    @MethodSource("cases")
    void answersTheSameThroughTheFrontDoor(String name, String request, int status, String bodyPart, Conn conn)
            throws IOException {
        check(doorPort, name, request, status, bodyPart, conn);
    }

    private static void check(int port, String name, String request, int status, String bodyPart, Conn conn)
            throws IOException {
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
            s.setSoTimeout(5000);
            OutputStream out = s.getOutputStream();
            InputStream in = s.getInputStream();
            out.write(request.getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
            Answer a = Answer.read(in);
            assertThat(a.status).as("status for: %s\n%s", name, a.text).isEqualTo(status);
            assertThat(a.body).as("body for: %s", name).contains(bodyPart);
            if (conn == Conn.CLOSED) {
                assertThat(endOfStream(in)).as("connection closed after: %s", name).isTrue();
            } else {
                out.write(("GET /next HTTP/1.1\r\n" + H + "\r\n").getBytes(StandardCharsets.ISO_8859_1));
                out.flush();
                Answer next = Answer.read(in);
                assertThat(next.status).as("a second request on the connection after: %s", name).isEqualTo(200);
                assertThat(next.body).contains("/next");
            }
        }
    }

    static boolean endOfStream(InputStream in) throws IOException {
        try {
            return in.read() < 0;
        } catch (SocketTimeoutException e) {
            return false;
        } catch (IOException reset) {
            return true;
        }
    }

    /** One answer read by hand (status line, headers, Content-Length body). */
    record Answer(int status, String text, String body) {
        static Answer read(InputStream in) throws IOException {
            ByteArrayOutputStream head = new ByteArrayOutputStream();
            int state = 0;
            while (state < 4) {
                int c = in.read();
                if (c < 0) {
                    throw new IOException("connection closed before an answer; got '" + head + "'");
                }
                head.write(c);
                state = (c == '\r' && (state == 0 || state == 2)) || (c == '\n' && (state == 1 || state == 3))
                        ? state + 1 : 0;
            }
            String text = head.toString(StandardCharsets.ISO_8859_1);
            int length = 0;
            for (String line : text.split("\r\n")) {
                if (line.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
                    length = Integer.parseInt(line.substring(15).strip());
                }
            }
            String body = new String(in.readNBytes(length), StandardCharsets.UTF_8);
            return new Answer(Integer.parseInt(text.substring(9, 12)), text, body);
        }
    }
}
