package dev.weft.it;

import dev.weft.client.CallRequest;
import dev.weft.client.CallResult;
import dev.weft.client.DestinationConfig;
import dev.weft.client.DestinationLimits;
import dev.weft.client.Transport;
import dev.weft.client.policy.RetryPolicy;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The client's side of the HTTP/1.1 conformance: a raw-socket server answers each case with the bytes in
 * the table (the ambiguous answers that let a response be split or smuggled, and the framings RFC 9112
 * allows). An ambiguous answer fails the call as {@code protocol-error}; the connection it came on is never
 * used again (the next call to the same server opens a new one).
 */
class ClientConformanceIT {
    private static final String GOOD = "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\ngood";
    private static final Map<String, String> ANSWERS = new ConcurrentHashMap<>();
    private static Http1ClientIT.ScriptedServer server;

    @BeforeAll
    static void start() throws IOException {
        server = new Http1ClientIT.ScriptedServer(head -> {
            String path = head.substring(head.indexOf(' ') + 1, head.indexOf(' ', head.indexOf(' ') + 1));
            return path.startsWith("/good") ? GOOD : ANSWERS.get(path);
        });
    }

    @AfterAll
    static void stop() throws IOException {
        server.close();
    }

    private static Arguments refused(String name, String answer) {
        return Arguments.of(name, answer, "protocol-error", null, false);
    }

    private static Arguments accepted(String name, String answer, String body, boolean reused) {
        return Arguments.of(name, answer, "ok", body, reused);
    }

    static Stream<Arguments> cases() {
        String ok = "HTTP/1.1 200 OK\r\n";
        return Stream.of(
                accepted("Content-Length", ok + "Content-Length: 3\r\n\r\nabc", "abc", true),
                accepted("two equal Content-Length fields", ok + "Content-Length: 3\r\nContent-Length: 3\r\n\r\nabc", "abc", true),
                accepted("no reason phrase", "HTTP/1.1 200\r\nContent-Length: 3\r\n\r\nabc", "abc", true),
                accepted("chunked with extensions and trailers", ok + "Transfer-Encoding: chunked\r\n\r\n"
                        + "2;a=b\r\nab\r\n1 ;c\r\nc\r\n0\r\nT: v\r\n\r\n", "abc", true),
                accepted("HTTP/1.0 without keep-alive: until close", "HTTP/1.0 200 OK\r\nX-Then: close\r\n\r\nabc", "abc", false),
                accepted("Connection: close", ok + "Connection: close\r\nContent-Length: 3\r\nX-Then: close\r\n\r\nabc", "abc", false),

                refused("Transfer-Encoding and Content-Length", ok + "Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"
                        + "0\r\n\r\n"),
                refused("two different Content-Length values", ok + "Content-Length: 3\r\nContent-Length: 4\r\n\r\nabcd"),
                refused("Content-Length as a list", ok + "Content-Length: 3, 3\r\n\r\nabc"),
                refused("space before the colon", ok + "Content-Length : 3\r\n\r\nabc"),
                refused("Content-Length with a sign", ok + "Content-Length: +3\r\n\r\nabc"),
                refused("hex Content-Length", ok + "Content-Length: 0x3\r\n\r\nabc"),
                refused("chunked twice", ok + "Transfer-Encoding: chunked, chunked\r\n\r\n0\r\n\r\n"),
                // codings this client does not decode: the body would reach the caller still coded, as if it were not
                refused("an unknown coding without chunked (until close)", ok + "Transfer-Encoding: xchunked\r\n"
                        + "X-Then: close\r\n\r\nabc"),
                refused("gzip then chunked", ok + "Transfer-Encoding: gzip, chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"),
                refused("gzip and chunked in two fields", ok + "Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n"
                        + "3\r\nabc\r\n0\r\n\r\n"),
                refused("obs-fold", ok + "X: a\r\n b\r\nContent-Length: 0\r\n\r\n"),
                refused("NUL in a value", ok + "X: a\u0000b\r\nContent-Length: 0\r\n\r\n"),
                refused("bare CR in a value", ok + "X: a\rb\r\nContent-Length: 0\r\n\r\n"),
                refused("bare LF line end", ok + "X: a\nContent-Length: 0\r\n\r\n"),
                refused("'@' in a field name", ok + "X@Y: 1\r\nContent-Length: 0\r\n\r\n"),
                refused("HTTP/1.1x", "HTTP/1.1x 200 OK\r\nContent-Length: 0\r\n\r\n"),
                refused("HTTP/2.0 status line", "HTTP/2.0 200 OK\r\nContent-Length: 0\r\n\r\n"),
                refused("two-digit status", "HTTP/1.1 20 OK\r\nContent-Length: 0\r\n\r\n"),
                refused("control character in the reason", "HTTP/1.1 200 O\u0001K\r\nContent-Length: 0\r\n\r\n"),
                refused("chunk size with a sign", ok + "Transfer-Encoding: chunked\r\n\r\n+3\r\nabc\r\n0\r\n\r\n"),
                refused("chunk size with 0x", ok + "Transfer-Encoding: chunked\r\n\r\n0x3\r\nabc\r\n0\r\n\r\n"),
                refused("chunk size with a space", ok + "Transfer-Encoding: chunked\r\n\r\n3 \r\nabc\r\n0\r\n\r\n"),
                refused("chunk size that overflows", ok + "Transfer-Encoding: chunked\r\n\r\n10000000000000003\r\nabc\r\n0\r\n\r\n"),
                refused("chunk data not followed by CRLF", ok + "Transfer-Encoding: chunked\r\n\r\n3\r\nabcXY0\r\n\r\n"),
                refused("101 to a plain request", "HTTP/1.1 101 Switching Protocols\r\n\r\n"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void readsOrRefusesTheAnswer(String name, String answer, String outcome, String body, boolean reused) {
        String path = "/case-" + Integer.toHexString(name.hashCode());
        ANSWERS.put(path, answer);
        String base = "http://127.0.0.1:" + server.server.getLocalPort();
        int before = server.connections.get();
        CallResult r;
        CallResult next;
        try (Transport transport = Transport.builder() // a pool of its own: the case's connection is the only one
                .defaults(DestinationConfig.DEFAULT.withRetry(RetryPolicy.NONE)
                        .withLimits(DestinationLimits.DEFAULT.withMaxBodyBytes(1000)))
                .build()) {
            r = transport.call(CallRequest.get(base + path), Duration.ofSeconds(5));
            next = transport.call(CallRequest.get(base + "/good"), Duration.ofSeconds(5));
        }
        assertThat(r.outcome()).as("%s: %s", name, r).isEqualTo(outcome);
        if (body != null) {
            assertThat(r.bodyText()).isEqualTo(body);
        }
        assertThat(next.bodyText()).as("the next call after: %s", name).isEqualTo("good");
        int opened = server.connections.get() - before;
        assertThat(opened).as("connections opened for the case and the next call: %s", name)
                .isEqualTo(reused ? 1 : 2);
    }
}
