package dev.weft.server.http2;

import dev.weft.http.h2.Http2Error;
import dev.weft.http.h2.Http2Frame;
import dev.weft.http.h2.Http2FrameReader;
import dev.weft.server.HttpServer;
import dev.weft.server.ServerResponse;
import dev.weft.server.admission.FixedAdmission;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The HTTP/2 door against hostile peers, over real sockets: each row of the table is what a peer sends; each must
 * end in GOAWAY (with the code named) and a closed connection, counted under its kind in {@link Http2Metrics}, with
 * no handler thread left running and no admission place held. Beside it: a stream over
 * {@code max_concurrent_streams} is refused (REFUSED_STREAM, the connection goes on), a stream the client resets
 * interrupts its handler and frees its place, and a drain sends GOAWAY NO_ERROR and still answers the streams taken.
 */
class Http2HostileIT {
    private static final Duration WAIT = Duration.ofSeconds(15);
    private static final int BIG = 16 * 1024 * 1024;
    private static final AtomicInteger active = new AtomicInteger();
    private static HttpServer server;
    private static InetSocketAddress address;

    @BeforeAll
    static void start() throws IOException {
        server = server(Http2Limits.DEFAULT.withWriteTimeout(Duration.ofSeconds(1)));
        address = server.addresses().getFirst();
    }

    static HttpServer server(Http2Limits http2) throws IOException {
        return HttpServer.builder(r -> switch (r.path()) {
                    case "/block" -> {
                        active.incrementAndGet();
                        try {
                            Thread.sleep(Duration.ofMinutes(1)); // until the stream is reset (interrupted)
                        } finally {
                            active.decrementAndGet();
                        }
                        yield ServerResponse.json(200, "{}");
                    }
                    case "/slow" -> {
                        Thread.sleep(300);
                        yield ServerResponse.json(200, "{\"slow\":true}");
                    }
                    case "/big" -> new ServerResponse(200, dev.weft.http.Headers.EMPTY, new byte[BIG]);
                    case "/bad-field" -> new ServerResponse(200, dev.weft.http.Headers.of("x-bad", "snow \u2603"),
                            new byte[0]);
                    default -> ServerResponse.json(200, "{\"body\":" + r.body().length + "}");
                }).admission(new FixedAdmission(10_000, Duration.ofMillis(100))).http2(http2).start();
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    @FunctionalInterface
    interface Attack {
        void send(RawH2 c) throws IOException;
    }

    static Arguments row(String name, Http2Metrics.Hostile kind, Http2Error goAway, Attack attack) {
        return Arguments.of(name, kind, goAway, attack);
    }

    static byte[] get(String path) {
        return RawH2.request("GET", path);
    }

    static Stream<Arguments> attacks() {
        return Stream.of(
                row("rapid reset (CVE-2023-44487): open a stream and reset it, again and again",
                        Http2Metrics.Hostile.RAPID_RESET, Http2Error.ENHANCE_YOUR_CALM, c -> {
                            for (int id = 1; id < 4000; id += 2) {
                                c.headers(id, true, get("/block"));
                                c.rst(id, Http2Error.CANCEL.code());
                                if (id % 64 == 1) {
                                    c.flush();
                                }
                            }
                        }),
                row("CONTINUATION flood: a header block that never ends, in 1-byte frames",
                        Http2Metrics.Hostile.CONTINUATION_FLOOD, Http2Error.ENHANCE_YOUR_CALM, c -> {
                            c.frame(Http2Frame.TYPE_HEADERS, 0, 1, get("/"));
                            for (int i = 0; i < 10_000; i++) {
                                c.frame(Http2Frame.TYPE_CONTINUATION, 0, 1, new byte[]{(byte) 0x82});
                            }
                        }),
                row("CONTINUATION flood: a header block past max_header_list_size in full frames",
                        Http2Metrics.Hostile.CONTINUATION_FLOOD, Http2Error.ENHANCE_YOUR_CALM, c -> {
                            c.frame(Http2Frame.TYPE_HEADERS, 0, 1, get("/"));
                            for (int i = 0; i < 64; i++) {
                                c.frame(Http2Frame.TYPE_CONTINUATION, 0, 1, new byte[16_384]);
                            }
                        }),
                row("SETTINGS flood", Http2Metrics.Hostile.SETTINGS_FLOOD, Http2Error.ENHANCE_YOUR_CALM, c -> {
                    for (int i = 0; i < 2000; i++) {
                        c.settings(List.of(new Http2Frame.Setting(Http2FrameReader.SETTINGS_ENABLE_PUSH, 0)));
                    }
                }),
                row("PING flood", Http2Metrics.Hostile.PING_FLOOD, Http2Error.ENHANCE_YOUR_CALM, c -> {
                    for (int i = 0; i < 2000; i++) {
                        c.frame(Http2Frame.TYPE_PING, 0, 0, new byte[8]);
                    }
                }),
                row("empty DATA flood", Http2Metrics.Hostile.EMPTY_DATA_FLOOD, Http2Error.ENHANCE_YOUR_CALM, c -> {
                    c.headers(1, false, RawH2.request("POST", "/"));
                    for (int i = 0; i < 2000; i++) {
                        c.frame(Http2Frame.TYPE_DATA, 0, 1, new byte[0]);
                    }
                }),
                row("PRIORITY flood", Http2Metrics.Hostile.PRIORITY_FLOOD, Http2Error.ENHANCE_YOUR_CALM, c -> {
                    for (int i = 0; i < 2000; i++) {
                        c.frame(Http2Frame.TYPE_PRIORITY, 0, 3 + 2 * i, new byte[]{0, 0, 0, 1, 16});
                    }
                }),
                row("HPACK bomb: one 4 KB field in the dynamic table, referenced 1,000 times",
                        Http2Metrics.Hostile.HPACK, Http2Error.COMPRESSION_ERROR, c -> {
                            ByteArrayOutputStream b = new ByteArrayOutputStream();
                            b.writeBytes(get("/"));
                            RawH2.indexedLiteral(b, "x-bomb", "a".repeat(4000));
                            for (int i = 0; i < 1000; i++) {
                                b.write(0x80 | 62); // indexed: the newest dynamic entry
                            }
                            c.headers(1, true, b.toByteArray());
                        }),
                row("slow reader: a window held at zero", Http2Metrics.Hostile.SLOW_READER, null, c -> {
                    c.settings(List.of(new Http2Frame.Setting(Http2FrameReader.SETTINGS_INITIAL_WINDOW_SIZE, 0)));
                    c.headers(1, true, get("/big"));
                }),
                row("WINDOW_UPDATE flood: +1 increments, each waking the writers", Http2Metrics.Hostile.WINDOW_UPDATE_FLOOD,
                        Http2Error.ENHANCE_YOUR_CALM, c -> {
                            for (int i = 0; i < 5000; i++) {
                                c.frame(Http2Frame.TYPE_WINDOW_UPDATE, 0, 0, new byte[]{0, 0, 0, 1});
                            }
                        }),
                row("WINDOW_UPDATE flood of large increments: ten times the small ones' bound",
                        Http2Metrics.Hostile.WINDOW_UPDATE_FLOOD, Http2Error.ENHANCE_YOUR_CALM, c -> {
                            for (int i = 0; i < 12_000; i++) { // +16 KiB each: 12,000 of them stay under 2^31-1
                                c.frame(Http2Frame.TYPE_WINDOW_UPDATE, 0, 0, new byte[]{0, 0, 0x40, 0});
                            }
                        }),
                row("extension frame flood (ignored frames cost a read each)", Http2Metrics.Hostile.UNKNOWN_FRAME_FLOOD,
                        Http2Error.ENHANCE_YOUR_CALM, c -> {
                            for (int i = 0; i < 2000; i++) {
                                c.frame(0x20, 0, 0, new byte[8]);
                            }
                        }),
                row("DATA on a stream the client had ended", Http2Metrics.Hostile.PROTOCOL, Http2Error.STREAM_CLOSED, c -> {
                    c.headers(1, true, get("/block"));
                    c.frame(Http2Frame.TYPE_DATA, 0, 1, new byte[16]);
                }),
                row("HEADERS on a stream id lower than one opened, never used (RFC 9113 5.1.1)",
                        Http2Metrics.Hostile.PROTOCOL, Http2Error.PROTOCOL_ERROR, c -> {
                            c.headers(5, true, get("/block"));
                            c.headers(3, true, get("/"));
                        }),
                row("HEADERS again on a stream the client ended while its handler runs", Http2Metrics.Hostile.PROTOCOL,
                        Http2Error.STREAM_CLOSED, c -> {
                            c.headers(1, true, get("/block"));
                            c.headers(3, true, get("/block"));
                            c.headers(1, true, get("/"));
                        }),
                row("a window increment taking the connection's window over 2^31-1", Http2Metrics.Hostile.PROTOCOL,
                        Http2Error.FLOW_CONTROL_ERROR,
                        c -> c.frame(Http2Frame.TYPE_WINDOW_UPDATE, 0, 0, new byte[]{0x7f, -1, -1, -1})),
                row("a frame over SETTINGS_MAX_FRAME_SIZE", Http2Metrics.Hostile.PROTOCOL, Http2Error.FRAME_SIZE_ERROR,
                        c -> c.frame(Http2Frame.TYPE_DATA, 0, 1, new byte[16_385])));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("attacks")
    void endsInGoAwayAndAClosedConnectionWithNothingLeftRunning(String name, Http2Metrics.Hostile kind,
                                                                   Http2Error goAway, Attack attack) throws Exception {
        long before = server.http2Metrics().hostile(kind);
        try (RawH2 c = RawH2.open(address)) {
            try {
                attack.send(c);
                c.flush();
            } catch (IOException closedMidAttack) {
                // the server closed the connection before the attack was all sent: what it should do
            }
            List<Object> seen = c.awaitClose(WAIT);
            if (goAway != null) {
                assertThat(seen).as("GOAWAY %s before the close", goAway).anySatisfy(f -> {
                    assertThat(f).isInstanceOf(Http2Frame.GoAway.class);
                    assertThat(((Http2Frame.GoAway) f).error()).isEqualTo(goAway);
                });
            }
        }
        assertThat(server.http2Metrics().hostile(kind)).as("counted as %s", kind).isEqualTo(before + 1);
        awaitTrue(() -> active.get() == 0 && server.inFlight() == 0 && server.http2Metrics().openConnections() == 0,
                "no handler left running, no admission place held, the connection's reader ended");
    }

    @Test
    void aPeerThatReadsNothingIsClosedAfterTheWriteTimeout() throws Exception {
        long before = server.writeTimeouts() + server.http2Metrics().hostile(Http2Metrics.Hostile.SLOW_READER);
        try (RawH2 c = new RawH2(address, false)) { // never reads: the socket's buffers fill
            c.raw(Http2FrameReader.PREFACE);
            c.settings(List.of(new Http2Frame.Setting(Http2FrameReader.SETTINGS_INITIAL_WINDOW_SIZE, Integer.MAX_VALUE)));
            c.frame(Http2Frame.TYPE_WINDOW_UPDATE, 0, 0, new byte[]{0x7f, -1, 0, 0});
            c.headers(1, true, get("/big"));
            c.flush();
            awaitTrue(() -> server.writeTimeouts() + server.http2Metrics().hostile(Http2Metrics.Hostile.SLOW_READER) > before,
                    "the stuck answer was given up");
            // the admission place is given back before the answer is written: what must end is the stream's thread
            // and the connection (while this client still holds its socket open)
            awaitTrue(() -> streamThreads() == 0 && server.http2Metrics().openConnections() == 0,
                    "the stream's thread ended and the connection closed");
        }
        awaitTrue(() -> server.inFlight() == 0, "no admission place held");
    }

    /**
     * Live threads of HTTP/2 streams, by the server's own count: an in-process thread dump taken again and again
     * while virtual threads come and go crashed JDK 25.0.3 once (docs/journal/round-29.md).
     */
    static long streamThreads() {
        return server.http2Metrics().streamThreadsRunning();
    }

    @Test
    void aWindowOpenedAByteAtATimeDoesNotHoldTheAnswerPastTheWriteTimeout() throws Exception {
        long before = server.http2Metrics().hostile(Http2Metrics.Hostile.SLOW_READER);
        try (RawH2 c = new RawH2(address, true)) {
            c.raw(Http2FrameReader.PREFACE);
            c.settings(List.of(new Http2Frame.Setting(Http2FrameReader.SETTINGS_INITIAL_WINDOW_SIZE, 0)));
            c.headers(1, true, get("/big"));
            c.flush();
            // +1 byte on the stream and the connection well within each write_timeout (1 s), for up to 10 s
            long until = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            try {
                while (!c.closed() && System.nanoTime() - until < 0) {
                    c.frame(Http2Frame.TYPE_WINDOW_UPDATE, 0, 1, new byte[]{0, 0, 0, 1});
                    c.frame(Http2Frame.TYPE_WINDOW_UPDATE, 0, 0, new byte[]{0, 0, 0, 1});
                    c.flush();
                    c.awaitClosed(Duration.ofMillis(300));
                }
            } catch (IOException closed) {
                // the server closed the connection: what it should do
            }
            assertThat(c.closed()).as("closed while the peer still opened its window a byte at a time").isTrue();
        }
        assertThat(server.http2Metrics().hostile(Http2Metrics.Hostile.SLOW_READER)).isEqualTo(before + 1);
        awaitTrue(() -> streamThreads() == 0 && server.http2Metrics().openConnections() == 0,
                "the stream's thread ended and the connection closed");
    }

    @Test
    void headersAloneWithALargeContentLengthTakeNoBodyBuffer() throws Exception {
        int streams = 200;
        java.lang.management.MemoryMXBean memory = java.lang.management.ManagementFactory.getMemoryMXBean();
        System.gc();
        long baseline = memory.getHeapMemoryUsage().getUsed();
        long started = server.http2Metrics().streams();
        try (RawH2 c = RawH2.open(address)) {
            for (int i = 0; i < streams; i++) { // each announces max_body (1 MiB) and sends none of it
                c.headers(1 + 2 * i, false, RawH2.request("POST", "/", "content-length", "1048576"));
            }
            c.flush();
            awaitTrue(() -> server.http2Metrics().streams() - started == streams, "every stream started");
            // the streams' threads run at once; sampled for a second, the heap must never hold their announced bodies
            long most = 0;
            for (long until = System.nanoTime() + 1_000_000_000L; System.nanoTime() - until < 0; ) {
                System.gc();
                most = Math.max(most, memory.getHeapMemoryUsage().getUsed() - baseline);
            }
            assertThat(most).as("heap grown by %d streams that sent HEADERS only", streams)
                    .isLessThan(streams * 1024L * 1024 / 4);
        }
        awaitTrue(() -> server.http2Metrics().openConnections() == 0 && server.inFlight() == 0, "all ended");
    }

    @Test
    void aPostWithContentLengthZeroEndedOnItsHeadersIsAnswered() throws Exception {
        try (RawH2 c = RawH2.open(address)) { // what Go's client sends for an empty POST
            c.headers(1, true, RawH2.request("POST", "/", "content-length", "0"));
            c.flush();
            Http2Frame.Headers answer = c.await(Http2Frame.Headers.class, Duration.ofSeconds(5));
            assertThat(answer).as("answered well before body_timeout").isNotNull();
            assertThat(answer.streamId()).isEqualTo(1);
        }
    }

    @Test
    void dataOverContentLengthGivesTheConnectionWindowBack() throws Exception {
        try (RawH2 c = RawH2.open(address)) {
            // 80 streams x 16 KiB over their content-length of 1: more than the connection's whole window (1 MiB)
            for (int i = 0; i < 80; i++) {
                int id = 1 + 2 * i;
                c.headers(id, false, RawH2.request("POST", "/", "content-length", "1"));
                c.frame(Http2Frame.TYPE_DATA, 0, id, new byte[16_384]);
                c.flush();
                Http2Frame.RstStream reset = c.await(Http2Frame.RstStream.class, WAIT);
                assertThat(reset).as("stream %d reset", id).isNotNull();
                assertThat(reset.error()).isEqualTo(Http2Error.PROTOCOL_ERROR);
            }
            c.headers(161, false, RawH2.request("POST", "/", "content-length", "16384"));
            c.frame(Http2Frame.TYPE_DATA, Http2Frame.FLAG_END_STREAM, 161, new byte[16_384]);
            c.flush();
            Http2Frame.Headers answer = c.await(Http2Frame.Headers.class, WAIT);
            assertThat(answer).as("a body within the window is still taken").isNotNull();
            assertThat(answer.streamId()).isEqualTo(161);
        }
    }

    @Test
    void aFieldTheAnswerCannotCarryCostsThatStreamOnly() throws Exception {
        try (RawH2 c = RawH2.open(address)) {
            c.headers(1, true, get("/bad-field"));
            c.flush();
            Http2Frame.Headers answer = c.await(Http2Frame.Headers.class, WAIT);
            assertThat(answer).as("an answer on the stream").isNotNull();
            assertThat(answer.streamId()).isEqualTo(1);
            c.headers(3, true, get("/"));
            c.flush();
            Http2Frame.Headers next = c.await(Http2Frame.Headers.class, WAIT);
            assertThat(next).as("the connection goes on").isNotNull();
            assertThat(next.streamId()).isEqualTo(3);
        }
    }

    static Stream<Arguments> malformed() {
        return Stream.of(
                Arguments.of("transfer-encoding", RawH2.request("POST", "/", "transfer-encoding", "chunked")),
                Arguments.of("upgrade", RawH2.request("GET", "/", "upgrade", "h2c")),
                Arguments.of("keep-alive", RawH2.request("GET", "/", "keep-alive", "timeout=5")),
                Arguments.of("proxy-connection", RawH2.request("GET", "/", "proxy-connection", "keep-alive")),
                Arguments.of("connection", RawH2.request("GET", "/", "connection", "close")),
                Arguments.of("host other than :authority", RawH2.request("GET", "/", "host", "evil.example")),
                Arguments.of("two host fields", RawH2.request("GET", "/", "host", "127.0.0.1", "host", "127.0.0.1")),
                Arguments.of("a host character no host name has", RawH2.request("GET", "/", "host", "a\"b")),
                Arguments.of(":path without '/'", RawH2.request("GET", "index.html")),
                Arguments.of(":path '*' for GET", RawH2.request("GET", "*")),
                Arguments.of(":path with '#'", RawH2.request("GET", "/a#b")),
                Arguments.of(":path with a space", RawH2.request("GET", "/a b")),
                Arguments.of(":method not a token", RawH2.request("GE T", "/")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("malformed")
    void aRequestTheHttp11CodecWouldRefuseIsAStreamError(String name, byte[] block) throws Exception {
        try (RawH2 c = RawH2.open(address)) {
            c.headers(1, true, block);
            c.flush();
            Http2Frame.RstStream reset = c.await(Http2Frame.RstStream.class, WAIT);
            assertThat(reset).as("RST_STREAM, never the handler's answer").isNotNull();
            assertThat(reset.streamId()).isEqualTo(1);
            assertThat(reset.error()).isEqualTo(Http2Error.PROTOCOL_ERROR);
            c.headers(3, true, get("/"));
            c.flush();
            Http2Frame.Headers next = c.await(Http2Frame.Headers.class, WAIT);
            assertThat(next).as("the connection goes on").isNotNull();
            assertThat(next.streamId()).as("stream 1 got no answer").isEqualTo(3);
        }
    }

    @Test
    void anInvalidPrefaceAfterThePrefaceLineGetsGoAway() throws Exception {
        try (RawH2 c = new RawH2(address, true)) {
            c.raw("PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            c.flush();
            List<Object> seen = c.awaitClose(WAIT);
            assertThat(seen).anySatisfy(f -> assertThat(f).isInstanceOfSatisfying(Http2Frame.GoAway.class,
                    g -> assertThat(g.error()).isEqualTo(Http2Error.PROTOCOL_ERROR)));
        }
    }

    /**
     * An h2c-only listener ({@code http2.h2c_only}) answers HTTP/1.1 bytes GOAWAY PROTOCOL_ERROR, never an HTTP/1.1
     * answer, and at once: a request shorter than the 24-byte preface must not wait for the idle timeout (60 s).
     */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(strings = {"GET / HTTP/1.0\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: a\r\n\r\n", "INVALID CONNECTION PREFACE\r\n\r\n", "PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n"})
    void anH2cOnlyListenerAnswersAnythingButThePrefaceGoAwayAtOnce(String first) throws Exception {
        try (HttpServer s = server(Http2Limits.DEFAULT.withH2cOnly(true));
             RawH2 c = new RawH2(s.addresses().getFirst(), true)) {
            c.raw(first.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            c.flush();
            List<Object> seen = c.awaitClose(Duration.ofSeconds(5));
            assertThat(seen).anySatisfy(f -> assertThat(f).isInstanceOfSatisfying(Http2Frame.GoAway.class,
                    g -> assertThat(g.error()).isEqualTo(Http2Error.PROTOCOL_ERROR)));
        }
    }

    @Test
    void anH2cOnlyListenerServesHttp2() throws Exception {
        try (HttpServer s = server(Http2Limits.DEFAULT.withH2cOnly(true));
             RawH2 c = RawH2.open(s.addresses().getFirst())) {
            c.headers(1, true, get("/"));
            c.flush();
            Http2Frame.Headers answer = c.await(Http2Frame.Headers.class, WAIT);
            assertThat(answer).as("an answer on stream 1").isNotNull();
            assertThat(answer.streamId()).isEqualTo(1);
        }
    }

    @Test
    void aStreamOverMaxConcurrentStreamsIsRefusedAndTheConnectionGoesOn() throws Exception {
        try (HttpServer s = server(Http2Limits.DEFAULT.withMaxConcurrentStreams(2));
             RawH2 c = RawH2.open(s.addresses().getFirst())) {
            c.headers(1, true, get("/block"));
            c.headers(3, true, get("/block"));
            c.headers(5, true, get("/block"));
            c.flush();
            Http2Frame.RstStream refused = c.await(Http2Frame.RstStream.class, WAIT);
            assertThat(refused).isNotNull();
            assertThat(refused.streamId()).isEqualTo(5);
            assertThat(refused.error()).isEqualTo(Http2Error.REFUSED_STREAM);
            assertThat(s.http2Metrics().refusedStreams()).isEqualTo(1);
            c.rst(1, Http2Error.CANCEL.code());
            c.rst(3, Http2Error.CANCEL.code());
            c.flush();
            awaitTrue(() -> active.get() == 0 && s.inFlight() == 0, "the reset streams' handlers ended");
            c.headers(7, true, get("/"));
            c.flush();
            Http2Frame.Headers answer = c.await(Http2Frame.Headers.class, WAIT);
            assertThat(answer).as("a new stream is served once places are free").isNotNull();
            assertThat(answer.streamId()).isEqualTo(7);
        }
    }

    @Test
    void refusedStreamsDoNotCountAsRapidReset() throws Exception {
        try (HttpServer s = server(Http2Limits.DEFAULT.withMaxConcurrentStreams(1));
             RawH2 c = RawH2.open(s.addresses().getFirst())) {
            c.headers(1, true, get("/block"));
            int refused = 2 * Http2Limits.DEFAULT.resetsPerSecond(); // within a second, twice resets_per_second
            for (int i = 1; i <= refused; i++) {
                c.headers(1 + 2 * i, true, get("/"));
            }
            c.frame(Http2Frame.TYPE_PING, 0, 0, new byte[8]);
            c.flush();
            assertThat(c.await(Http2Frame.Ping.class, WAIT)).as("the connection goes on").isNotNull();
            assertThat(s.http2Metrics().refusedStreams()).isEqualTo(refused);
            assertThat(s.http2Metrics().hostile(Http2Metrics.Hostile.RAPID_RESET)).isZero();
            c.rst(1, Http2Error.CANCEL.code());
            c.flush();
            awaitTrue(() -> active.get() == 0 && s.inFlight() == 0, "the reset stream's handler ended");
        }
    }

    @Test
    void aStreamResetByTheClientInterruptsItsHandlerAndFreesItsPlace() throws Exception {
        long resets = server.http2Metrics().resetByPeer();
        try (RawH2 c = RawH2.open(address)) {
            c.headers(1, true, get("/block"));
            c.flush();
            awaitTrue(() -> active.get() == 1 && server.inFlight() == 1, "the handler runs");
            c.rst(1, Http2Error.CANCEL.code());
            c.flush();
            awaitTrue(() -> active.get() == 0 && server.inFlight() == 0, "the handler was interrupted, its place freed");
            assertThat(server.http2Metrics().resetByPeer()).isEqualTo(resets + 1);
            c.frame(Http2Frame.TYPE_PING, 0, 0, new byte[8]);
            c.flush();
            assertThat(c.await(Http2Frame.Ping.class, WAIT)).as("the connection goes on").isNotNull();
        }
    }

    @Test
    void aDrainSendsGoAwayAndStillAnswersTheStreamsTaken() throws Exception {
        HttpServer s = server(Http2Limits.DEFAULT);
        try (RawH2 c = RawH2.open(s.addresses().getFirst())) {
            c.headers(1, true, get("/slow"));
            c.flush();
            awaitTrue(() -> s.inFlight() == 1, "the request runs");
            Thread drain = Thread.ofVirtual().start(() -> s.drain(Duration.ofSeconds(10)));
            List<Object> seen = c.awaitClose(WAIT);
            drain.join();
            int goAway = -1;
            int answer = -1;
            for (int i = 0; i < seen.size(); i++) {
                if (seen.get(i) instanceof Http2Frame.GoAway g && goAway < 0) {
                    assertThat(g.error()).isEqualTo(Http2Error.NO_ERROR);
                    assertThat(g.lastStreamId()).isEqualTo(1);
                    goAway = i;
                }
                if (seen.get(i) instanceof Http2Frame.Data d && d.streamId() == 1 && d.endStream()) {
                    answer = i;
                }
            }
            assertThat(goAway).as("GOAWAY in %s", seen).isNotNegative();
            assertThat(answer).as("stream 1 answered after GOAWAY, in %s", seen).isGreaterThan(goAway);
        } finally {
            s.close();
        }
    }

    @Test
    void aConnectionThatTurnsHttp2AfterADrainBeganGetsGoAway() throws Exception {
        HttpServer s = server(Http2Limits.DEFAULT);
        Thread drain = null;
        try (RawH2 busy = RawH2.open(s.addresses().getFirst());
             RawH2 late = new RawH2(s.addresses().getFirst(), true)) { // connected, not yet a word of HTTP/2
            busy.headers(1, true, get("/block"));
            busy.flush();
            awaitTrue(() -> s.inFlight() == 1, "a request holds the drain open");
            drain = Thread.ofVirtual().start(() -> s.drain(Duration.ofSeconds(10)));
            awaitTrue(s::draining, "the drain began");
            late.raw(Http2FrameReader.PREFACE);
            late.settings(List.of());
            late.flush();
            Http2Frame.GoAway g = late.await(Http2Frame.GoAway.class, Duration.ofSeconds(5));
            assertThat(g).as("GOAWAY to a connection served after goAwayAll()").isNotNull();
            assertThat(g.error()).isEqualTo(Http2Error.NO_ERROR);
            assertThat(g.lastStreamId()).as("it took no stream").isZero();
            busy.rst(1, Http2Error.CANCEL.code());
            busy.flush();
        } finally {
            if (drain != null) {
                drain.join();
            }
            s.close();
        }
    }

    static void awaitTrue(BooleanSupplier condition, String what) {
        try {
            org.awaitility.Awaitility.await(what).atMost(WAIT).pollInterval(Duration.ofMillis(10))
                    .until(condition::getAsBoolean);
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            throw new AssertionError("not within " + WAIT + ": " + what + " (handlers running " + active.get()
                    + ", in flight " + server.inFlight() + ")", e);
        }
    }
}
