package dev.weft.http;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The codec's write side: a field that would split a message is refused in both directions, a valid head reads back
 * through {@link Http1}'s reader as written, and the response writer's bytes are those of the StringBuilder writer
 * it replaced (the wire is a compatibility contract).
 */
class Http1WriterTest {
    /** Raw fields each writer must refuse, and a fragment of the message that says why. */
    private static final List<List<String>> REFUSED = List.of(
            List.of("X-Evil", "a\r\nX-Injected: 1", "line break or NUL"),
            List.of("X-Evil", "a\nb", "line break or NUL"),
            List.of("X-Evil", "a\rb", "line break or NUL"),
            List.of("X-Evil", "a\0b", "line break or NUL"),
            List.of("X-Evil\r\nX-Injected", "1", "not a token"),
            List.of("Bad Name", "1", "not a token"),
            List.of("Name:", "1", "not a token"),
            List.of("N\u00e9", "1", "not a token"),
            List.of("(x)", "1", "not a token"),
            List.of("", "1", "empty name"));

    @Example
    void theResponseWriterRefusesAFieldThatWouldSplitTheAnswer() {
        for (List<String> c : REFUSED) {
            List<Map.Entry<String, String>> fields = List.of(Map.entry("Content-Type", "text/plain"),
                    Map.entry(c.get(0), c.get(1)));
            assertThatThrownBy(() -> Http1Writer.response(Status.of(200), Headers.of(fields), new byte[0], true)).as(c.toString())
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(c.get(2));
            assertThatThrownBy(() -> Http1Writer.responseHead(Status.of(200), Headers.of(fields), 10, false)).as(c.toString())
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(c.get(2));
        }
    }

    @Example
    void aChunkedAnswerRefusesAFieldThatWouldSplitItInItsHeadAndItsTrailers() {
        for (List<String> c : REFUSED) {
            Headers fields = Headers.of(List.of(Map.entry("Content-Type", "text/plain"), Map.entry(c.get(0), c.get(1))));
            assertThatThrownBy(() -> Http1Writer.chunkedResponseHead(Status.of(200), fields, true)).as(c.toString())
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(c.get(2));
            assertThatThrownBy(() -> Http1Writer.lastChunk(fields)).as(c.toString())
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(c.get(2));
        }
    }

    /**
     * A chunked answer, byte for byte: the handler's own framing fields are left out (a Content-Length beside the
     * chunked coding would frame the body twice), as are trailers no trailer section may carry; what the writer
     * writes, weft-http's reader reads back as the same body and trailers.
     */
    @Example
    void aChunkedAnswerFramesItsBodyOnceAndReadsBackWhole() throws IOException {
        Headers head = Headers.of("Content-Type", "text/event-stream", "Content-Length", "5", "Transfer-Encoding", "gzip",
                "Connection", "keep-alive", "X-A", "b");
        byte[] h = Http1Writer.chunkedResponseHead(Status.of(200), head, false);
        assertThat(new String(h, StandardCharsets.ISO_8859_1)).isEqualTo("HTTP/1.1 200 OK\r\nContent-Type: "
                + "text/event-stream\r\nX-A: b\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n");
        assertThat(new String(Http1Writer.chunkedResponseHead(Status.of(204), Headers.EMPTY, true),
                StandardCharsets.ISO_8859_1)).isEqualTo("HTTP/1.1 204 No Content\r\nTransfer-Encoding: chunked\r\n\r\n");
        byte[] big = new byte[70_000];
        java.util.Arrays.fill(big, (byte) 'x');
        Headers trailers = Headers.of("grpc-status", "0", "Content-Length", "9", "Trailer", "x", "content-type", "a/b",
                "Content-Encoding", "gzip", "Content-Range", "bytes 0-1/2", "Host", "h", "X-Sum", "abc");
        java.io.ByteArrayOutputStream all = new java.io.ByteArrayOutputStream();
        all.writeBytes(h);
        all.writeBytes(Http1Writer.chunk("data: 1\n\n".getBytes(StandardCharsets.US_ASCII)));
        all.writeBytes(Http1Writer.chunk(big));
        byte[] last = Http1Writer.lastChunk(trailers);
        assertThat(new String(last, StandardCharsets.ISO_8859_1)).isEqualTo("0\r\ngrpc-status: 0\r\nX-Sum: abc\r\n\r\n");
        all.writeBytes(last);
        Http1Input in = new Http1Input(new ByteArrayInputStream(all.toByteArray()), 64);
        Http1Response r = Http1.readResponseHead(in, false, 4096, 20);
        assertThat(r.framing()).isEqualTo(Framing.CHUNKED);
        Http1.BodyRuns runs = new Http1.BodyRuns(in, r.framing(), 1 << 20);
        java.io.ByteArrayOutputStream body = new java.io.ByteArrayOutputStream();
        byte[] run;
        while ((run = runs.next()) != null) {
            body.writeBytes(run);
        }
        assertThat(body.size()).isEqualTo(9 + big.length);
        assertThat(runs.trailers()).isEqualTo(Headers.of("grpc-status", "0", "X-Sum", "abc"));
        assertThat(in.hasBuffered()).as("nothing after the trailer section").isFalse();
        assertThatThrownBy(() -> Http1Writer.chunk(new byte[0])).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("empty chunk");
        assertThat(Http1Writer.lastChunk(Headers.EMPTY)).isEqualTo("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
    }

    @Example
    void theRequestWriterRefusesAFieldThatWouldSplitTheRequest() {
        for (List<String> c : REFUSED) {
            List<Map.Entry<String, String>> fields = List.of(Map.entry(c.get(0), c.get(1)));
            assertThatThrownBy(() -> Http1Writer.requestHead("GET", "/", "h", Headers.of(fields), "ua", -1)).as(c.toString())
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(c.get(2));
        }
    }

    /** The reason phrases are bytes on the wire: each one as it was, and {@code Status} for a code not named. */
    @Example
    void theReasonPhrasesAreTheOnesOnTheWire() {
        Map<Integer, String> phrases = new java.util.TreeMap<>(Map.ofEntries(Map.entry(200, "OK"),
                Map.entry(201, "Created"), Map.entry(202, "Accepted"), Map.entry(204, "No Content"),
                Map.entry(400, "Bad Request"), Map.entry(404, "Not Found"), Map.entry(405, "Method Not Allowed"),
                Map.entry(410, "Gone"), Map.entry(413, "Content Too Large"), Map.entry(414, "URI Too Long"),
                Map.entry(429, "Too Many Requests"), Map.entry(431, "Request Header Fields Too Large"),
                Map.entry(500, "Internal Server Error"), Map.entry(501, "Not Implemented"),
                Map.entry(502, "Bad Gateway"), Map.entry(503, "Service Unavailable"), Map.entry(504, "Gateway Timeout"),
                Map.entry(505, "HTTP Version Not Supported")));
        for (int code = 100; code <= 999; code++) {
            String phrase = phrases.getOrDefault(code, "Status");
            assertThat(Status.of(code).reason()).as("" + code).isEqualTo(phrase);
            assertThat(Status.of(code).code()).isEqualTo(code);
            assertThat(Http1Writer.responseHead(Status.of(code), Headers.EMPTY, 0, false)).as("" + code).startsWith(
                    ("HTTP/1.1 " + code + " " + phrase + "\r\n").getBytes(StandardCharsets.US_ASCII));
        }
        assertThat(Status.of(503)).isSameAs(Status.SERVICE_UNAVAILABLE);
    }

    @Example
    void methodsAreTokensWithWhatTheRfcSaysOfThem() {
        assertThat(Method.of("GET")).isSameAs(Method.GET);
        assertThat(Method.of("PURGE").name()).isEqualTo("PURGE");
        assertThat(Method.of("PURGE").isIdempotent()).isFalse();
        for (String bad : new String[] {"", "G ET", "GET\r\n", "(x)"}) {
            assertThatThrownBy(() -> Method.of(bad)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("not a token");
        }
        assertThat(List.of(Method.GET, Method.HEAD, Method.OPTIONS, Method.PUT, Method.DELETE, Method.TRACE))
                .allMatch(Method::isIdempotent);
        assertThat(List.of(Method.POST, Method.PATCH, Method.CONNECT)).noneMatch(Method::isIdempotent);
        assertThat(List.of(Method.POST, Method.PUT, Method.PATCH)).allMatch(Method::definesContent);
        assertThat(List.of(Method.GET, Method.HEAD, Method.DELETE, Method.OPTIONS)).noneMatch(Method::definesContent);
    }

    @Example
    void aStatusThatIsNotThreeDigitsIsRefused() {
        for (int status : new int[] {0, 99, 1000, -200}) {
            assertThatThrownBy(() -> Status.of(status))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not three digits");
        }
    }

    @Example
    void theRequestWriterWritesItsOwnFramingAndHostAndAUserAgentWhenNoneIsGiven() {
        List<Map.Entry<String, String>> fields = List.of(Map.entry("X-A", "1"), Map.entry("content-length", "99"),
                Map.entry("Host", "elsewhere"), Map.entry("Connection", "upgrade"), Map.entry("TE", "trailers"));
        assertThat(new String(Http1Writer.requestHead("POST", "/p?q=1", "h:8080", Headers.of(fields), "weft", -1),
                StandardCharsets.UTF_8)).isEqualTo(
                "POST /p?q=1 HTTP/1.1\r\nHost: h:8080\r\nX-A: 1\r\nUser-Agent: weft\r\nContent-Length: 0\r\n\r\n");
        assertThat(new String(Http1Writer.requestHead("GET", "/", "h", Headers.of("user-agent", "mine"),
                "weft", -1), StandardCharsets.UTF_8)).isEqualTo("GET / HTTP/1.1\r\nHost: h\r\nuser-agent: mine\r\n\r\n");
        assertThat(new String(Http1Writer.requestHead("PUT", "/", "h", Headers.EMPTY, "weft", 12), StandardCharsets.UTF_8))
                .isEqualTo("PUT / HTTP/1.1\r\nHost: h\r\nUser-Agent: weft\r\nContent-Length: 12\r\n\r\n");
    }

    @Example
    void aChunkedRequestHeadSaysTransferEncodingAndNoLengthWhateverTheFieldsSay() {
        List<Map.Entry<String, String>> fields = List.of(Map.entry("Content-Length", "5"),
                Map.entry("transfer-encoding", "gzip"), Map.entry("X-A", "1"));
        assertThat(new String(Http1Writer.requestHead("POST", "/u", "h", Headers.of(fields), "weft", Http1Writer.CHUNKED_BODY),
                StandardCharsets.UTF_8)).isEqualTo(
                "POST /u HTTP/1.1\r\nHost: h\r\nX-A: 1\r\nUser-Agent: weft\r\nTransfer-Encoding: chunked\r\n\r\n");
        List<Map.Entry<String, String>> utf8 = List.of(Map.entry("X-Name", "\u00e9"));
        assertThat(new String(Http1Writer.requestHead("PUT", "/", "h", Headers.of(utf8), "ua", Http1Writer.CHUNKED_BODY),
                StandardCharsets.UTF_8)).isEqualTo(
                "PUT / HTTP/1.1\r\nHost: h\r\nX-Name: \u00e9\r\nUser-Agent: ua\r\nTransfer-Encoding: chunked\r\n\r\n");
    }

    @Example
    void aRequestHeadIsUtf8AndAResponseHeadIsoLatin1AsBefore() {
        List<Map.Entry<String, String>> fields = List.of(Map.entry("X-Name", "J\u00e9r\u00f4me \u20ac"));
        assertThat(Http1Writer.requestHead("GET", "/", "h", Headers.of(fields), "ua", -1)).isEqualTo(
                "GET / HTTP/1.1\r\nHost: h\r\nX-Name: J\u00e9r\u00f4me \u20ac\r\nUser-Agent: ua\r\n\r\n"
                        .getBytes(StandardCharsets.UTF_8));
        assertThat(Http1Writer.responseHead(Status.of(200), Headers.of(fields), 0, true)).isEqualTo(
                "HTTP/1.1 200 OK\r\nX-Name: J\u00e9r\u00f4me ?\r\nContent-Length: 0\r\n\r\n"
                        .getBytes(StandardCharsets.ISO_8859_1));
    }

    @Example
    void aResponseHeadIsAsTheServerWroteItBefore() {
        assertThat(new String(Http1Writer.response(Status.of(429), Headers.of("Content-Type", "application/json", "Retry-After", "1"),
                "{}".getBytes(StandardCharsets.US_ASCII), false), StandardCharsets.ISO_8859_1))
                .isEqualTo("HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\nRetry-After: 1\r\n"
                        + "Content-Length: 2\r\nConnection: close\r\n\r\n{}");
        assertThat(new String(Http1Writer.responseHead(Status.of(299), Headers.of(List.of()), 1234567, true), StandardCharsets.ISO_8859_1))
                .isEqualTo("HTTP/1.1 299 Status\r\nContent-Length: 1234567\r\n\r\n");
    }

    /**
     * A char above U+00FF goes out as {@code ?} (as ISO-8859-1 encoding always wrote it), never as its low byte: U+010A
     * and U+010D would be LF and CR, a split answer. Also when it comes after fields a {@link Headers} already checked.
     */
    @Example
    void aCharAboveLatin1IsAQuestionMarkNeverItsLowByte() {
        Headers checked = Headers.of("Content-Type", "text/plain");
        assertThat(Http1Writer.responseHead(Status.of(200), checked, 0, true)).isNotEmpty();
        for (Headers h : List.of(Headers.of("X-A", "a\u010Ab\u010Dc"), checked.with("X-A", "a\u010Ab\u010Dc"))) {
            String written = new String(Http1Writer.responseHead(Status.of(200), h, 0, true), StandardCharsets.ISO_8859_1);
            assertThat(written).as(h.toString()).contains("X-A: a?b?c\r\n").doesNotContain("a\nb").doesNotContain("b\rc");
        }
    }

    /** A field that failed its check fails every time; one added to checked headers is checked too. */
    @Example
    void checkedHeadersStillRefuseAFieldAddedLaterOrRefusedBefore() {
        Headers bad = Headers.of("X-Evil", "a\r\nb");
        for (int i = 0; i < 2; i++) {
            assertThatThrownBy(() -> Http1Writer.responseHead(Status.of(200), bad, 0, true))
                    .isInstanceOf(IllegalArgumentException.class);
        }
        Headers good = Headers.of("Content-Type", "text/plain");
        Http1Writer.responseHead(Status.of(200), good, 0, true);
        assertThatThrownBy(() -> Http1Writer.responseHead(Status.of(200), good.with("X-Evil", "a\nb"), 0, true))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("X-Evil");
    }

    /** Names compare in any case, and go on the wire in the case they were given. */
    @Example
    void namesCompareInAnyCaseAndKeepTheirCase() {
        Headers h = Headers.of("X-Request-Id", "1", "x-request-id", "2", "Via", "a");
        assertThat(h.first("x-REQUEST-id")).isEqualTo("1");
        assertThat(h.joined("X-REQUEST-ID")).isEqualTo("1, 2");
        assertThat(h.without("X-REQUEST-ID").fields()).containsExactly(Map.entry("Via", "a"));
        assertThat(h.first("absent")).isNull();
        assertThat(new String(Http1Writer.responseHead(Status.of(200), h, 0, true), StandardCharsets.ISO_8859_1))
                .contains("\r\nX-Request-Id: 1\r\nx-request-id: 2\r\nVia: a\r\n");
    }

    /** Any valid answer (any status, any characters a value may hold, any length) is byte for byte the old writer's. */
    @Property(tries = 2000)
    void responseBytesAreTheOldWritersBytes(@ForAll @IntRange(min = 100, max = 999) int status,
                                            @ForAll("anyFields") List<Map.Entry<String, String>> fields,
                                            @ForAll @LongRange(min = 0, max = Long.MAX_VALUE) long length,
                                            @ForAll boolean keepAlive, @ForAll("bodies") byte[] body) {
        assertThat(Http1Writer.responseHead(Status.of(status), Headers.of(fields), length, keepAlive))
                .isEqualTo(oldHead(status, fields, length, keepAlive));
        byte[] head = oldHead(status, fields, body.length, keepAlive);
        byte[] all = new byte[head.length + body.length];
        System.arraycopy(head, 0, all, 0, head.length);
        System.arraycopy(body, 0, all, head.length, body.length);
        assertThat(Http1Writer.response(Status.of(status), Headers.of(fields), body, keepAlive)).isEqualTo(all);
    }

    /** A valid answer reads back through the codec's reader as it was written. */
    @Property(tries = 1000)
    void aWrittenResponseReadsBack(@ForAll @IntRange(min = 200, max = 999) int status,
                                   @ForAll("readableFields") List<Map.Entry<String, String>> fields,
                                   @ForAll("bodies") byte[] body, @ForAll boolean keepAlive) throws IOException {
        Http1Input in = new Http1Input(new ByteArrayInputStream(Http1Writer.response(Status.of(status), Headers.of(fields), body, keepAlive)), 64);
        Http1Response read = Http1.readResponseHead(in, false, 64 * 1024, Http1.MAX_RESPONSE_FIELDS);
        ResponseHead head = read.head();
        assertThat(head.status()).isEqualTo(status);
        boolean bodiless = status == 204 || status == 304;
        assertThat(read.framing()).isEqualTo(bodiless ? Framing.NONE : Framing.length(body.length));
        assertThat(read.keepAlive()).isEqualTo(keepAlive);
        List<Map.Entry<String, String>> expected = new ArrayList<>(fields);
        expected.add(Map.entry("Content-Length", Integer.toString(body.length)));
        if (!keepAlive) {
            expected.add(Map.entry("Connection", "close"));
        }
        assertThat(head.headers().fields()).isEqualTo(expected);
        if (!bodiless) {
            assertThat(Http1.readBody(in, read.framing(), body.length, true).bytes()).isEqualTo(body);
        }
    }

    /**
     * A valid request reads back through the codec's reader (names lower-cased by it) as it was written. ASCII values:
     * the request writer encodes UTF-8 (as the client always has), the reader takes octets as ISO-8859-1.
     */
    @Property(tries = 1000)
    void aWrittenRequestReadsBack(@ForAll("tokens") String method, @ForAll("targets") String target,
                                  @ForAll("asciiFields") List<Map.Entry<String, String>> fields,
                                  @ForAll @IntRange(min = -1, max = 100) int bodyLength) throws IOException {
        byte[] head = Http1Writer.requestHead(method, target, "example.org:8080", Headers.of(fields), "weft", bodyLength);
        Http1Input in = new Http1Input(new ByteArrayInputStream(head), 64);
        Http1Request read = Http1.readRequestHead(in, 64 * 1024, Http1.MAX_REQUEST_FIELDS);
        RequestHead r = read.head();
        assertThat(r.method()).isEqualTo(method);
        assertThat(r.target()).isEqualTo(target);
        assertThat(r.header("host")).isEqualTo("example.org:8080");
        assertThat(read.keepAlive()).isTrue();
        boolean bodied = bodyLength >= 0 || List.of("POST", "PUT", "PATCH").contains(method);
        assertThat(read.framing()).isEqualTo(bodied ? Framing.length(Math.max(0, bodyLength)) : Framing.NONE);
        List<Map.Entry<String, String>> sent = r.headers().fields().subList(1, 1 + fields.size());
        for (int i = 0; i < fields.size(); i++) {
            assertThat(sent.get(i)).isEqualTo(Map.entry(fields.get(i).getKey().toLowerCase(Locale.ROOT),
                    fields.get(i).getValue()));
        }
        assertThat(r.header("user-agent")).isEqualTo("weft");
        assertThat(in.hasBuffered()).isFalse();
    }

    /**
     * The request writer's bytes are those of the StringBuilder writer it replaced, for any head it accepts: ASCII
     * (written byte by byte) or not (UTF-8), with or without the fields it writes itself, any body length.
     */
    @Property(tries = 2000)
    void theRequestWriterWritesWhatTheStringWriterWrote(@ForAll("tokens") String method,
                                                        @ForAll("anyTargets") String target,
                                                        @ForAll("mixedFields") List<Map.Entry<String, String>> fields,
                                                        @ForAll("bodyLengths") long bodyLength) {
        Headers headers = Headers.of(fields);
        assertThat(Http1Writer.requestHead(method, target, "example.org:8080", headers, "weft/0.1", bodyLength))
                .isEqualTo(oldRequestHead(method, target, "example.org:8080", fields, "weft/0.1", bodyLength));
    }

    /** The request writer as the client had it, the reference for the bytes on the wire. */
    private static byte[] oldRequestHead(String method, String target, String host,
                                         List<Map.Entry<String, String>> fields, String userAgent, long bodyLength) {
        StringBuilder b = new StringBuilder(160);
        b.append(method).append(' ').append(target).append(" HTTP/1.1\r\nHost: ").append(host).append("\r\n");
        boolean hasUserAgent = false;
        for (Map.Entry<String, String> h : fields) {
            if (Http1Writer.isConnectionField(h.getKey())) {
                continue;
            }
            hasUserAgent |= h.getKey().equalsIgnoreCase("user-agent");
            b.append(h.getKey()).append(": ").append(h.getValue()).append("\r\n");
        }
        if (!hasUserAgent) {
            b.append("User-Agent: ").append(userAgent).append("\r\n");
        }
        if (bodyLength >= 0) {
            b.append("Content-Length: ").append(bodyLength).append("\r\n");
        } else if (Method.definesContent(method)) {
            b.append("Content-Length: 0\r\n");
        }
        b.append("\r\n");
        return b.toString().getBytes(StandardCharsets.UTF_8);
    }

    @Provide
    Arbitrary<String> anyTargets() {
        return Arbitraries.oneOf(targets(), Arbitraries.strings().all().ofMaxLength(12).map(s -> "/" + s));
    }

    @Provide
    Arbitrary<Long> bodyLengths() {
        return Arbitraries.oneOf(Arbitraries.just(-1L), Arbitraries.longs().between(0, 1000),
                Arbitraries.longs().between(0, Long.MAX_VALUE));
    }

    /** Names the writer skips or looks at among plain ones; ASCII values mostly, any valid value sometimes. */
    @Provide
    Arbitrary<List<Map.Entry<String, String>>> mixedFields() {
        Arbitrary<String> names = Arbitraries.oneOf(tokens(), Arbitraries.of("Host", "TE", "Connection",
                "user-agent", "User-Agent", "Content-Length", "transfer-encoding", "Keep-Alive", "Upgrade"));
        Arbitrary<String> ascii = Arbitraries.strings().withCharRange((char) 0x20, (char) 0x7e).ofMaxLength(20);
        Arbitrary<String> any = Arbitraries.strings().all().ofMaxLength(20)
                .map(v -> v.replace('\r', 'r').replace('\n', 'n').replace('\0', '0'));
        Arbitrary<String> values = Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(9, ascii), net.jqwik.api.Tuple.of(1, any));
        return Combinators.combine(names, values).as(Map::entry).list().ofMaxSize(8);
    }

    /** The response writer as weft-server had it, the reference for the bytes on the wire. */
    private static byte[] oldHead(int status, List<Map.Entry<String, String>> headers, long contentLength,
                                  boolean keepAlive) {
        StringBuilder sb = new StringBuilder(160);
        sb.append("HTTP/1.1 ").append(status).append(' ').append(Status.of(status).reason()).append("\r\n");
        for (Map.Entry<String, String> h : headers) {
            sb.append(h.getKey()).append(": ").append(h.getValue()).append("\r\n");
        }
        sb.append("Content-Length: ").append(contentLength).append("\r\n");
        if (!keepAlive) {
            sb.append("Connection: close\r\n");
        }
        sb.append("\r\n");
        return sb.toString().getBytes(StandardCharsets.ISO_8859_1);
    }

    // ---- generators ----------------------------------------------------------------------------------

    private static final String TCHARS = "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

    @Provide
    Arbitrary<String> tokens() {
        return Arbitraries.strings().withChars(TCHARS.toCharArray()).ofMinLength(1).ofMaxLength(12);
    }

    @Provide
    Arbitrary<String> targets() {
        return Arbitraries.strings().withCharRange((char) 0x21, (char) 0x7e).excludeChars('#').ofMaxLength(30)
                .map(s -> "/" + s);
    }

    @Provide
    Arbitrary<byte[]> bodies() {
        return Arbitraries.bytes().array(byte[].class).ofMaxSize(40);
    }

    /** Names the reader treats as framing or connection fields would change the message; the writers own those. */
    private Arbitrary<String> plainNames() {
        return tokens().filter(n -> !Http1Writer.isConnectionField(n) && !n.equalsIgnoreCase("user-agent"));
    }

    /** Fields the reader takes back unchanged: visible characters, inner spaces and tabs, obs-text. */
    @Provide
    Arbitrary<List<Map.Entry<String, String>>> readableFields() {
        Arbitrary<String> values = Arbitraries.strings().withCharRange((char) 0x20, (char) 0x7e)
                .withCharRange((char) 0x80, (char) 0xff).withChars('\t').ofMaxLength(20)
                .map(v -> v.replaceAll("^[ \t]+|[ \t]+$", "")); // the reader drops a value's surrounding SP and HTAB
        return Combinators.combine(plainNames(), values).as(Map::entry).list().ofMaxSize(8);
    }

    /** Fields of visible ASCII, inner spaces and tabs. */
    @Provide
    Arbitrary<List<Map.Entry<String, String>>> asciiFields() {
        Arbitrary<String> values = Arbitraries.strings().withCharRange((char) 0x20, (char) 0x7e).withChars('\t')
                .ofMaxLength(20).map(v -> v.replaceAll("^[ \t]+|[ \t]+$", ""));
        return Combinators.combine(plainNames(), values).as(Map::entry).list().ofMaxSize(8);
    }

    /** Any fields the writer accepts, including characters above U+00FF and surrogate pairs. */
    @Provide
    Arbitrary<List<Map.Entry<String, String>>> anyFields() {
        Arbitrary<String> values = Arbitraries.strings().all().ofMaxLength(20)
                .map(v -> v.replace('\r', 'r').replace('\n', 'n').replace('\0', '0'));
        return Combinators.combine(tokens(), values).as(Map::entry).list().ofMaxSize(8);
    }
}
