package dev.weft.http;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

/** What the HTTP/1.1 reader says beside a head: framing, keep-alive, HTTP/1.0; the head holds only what HTTP/2 has. */
class Http1HeadTest {

    private static Http1Request request(String wire) throws IOException {
        return Http1.readRequestHead(in(wire), 4096, 20);
    }

    private static Http1Response response(String wire, boolean headRequest) throws IOException {
        return Http1.readResponseHead(in(wire), headRequest, 4096, 20);
    }

    private static Http1Input in(String wire) {
        return new Http1Input(new ByteArrayInputStream(wire.getBytes(StandardCharsets.ISO_8859_1)), 64);
    }

    @Test
    void aRequestsFramingAndKeepAliveComeBesideItsHead() throws IOException {
        Http1Request r = request("POST /a?b=1 HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc");
        assertThat(r.head()).isEqualTo(new RequestHead("POST", "/a?b=1", "/a", "b=1",
                Headers.of("host", "h", "content-length", "3")));
        assertThat(r.framing()).isEqualTo(Framing.length(3));
        assertThat(r.keepAlive()).isTrue();
        assertThat(r.http10()).isFalse();

        Http1Request chunked = request("PUT / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n"
                + "Connection: close\r\n\r\n");
        assertThat(chunked.framing()).isEqualTo(Framing.CHUNKED);
        assertThat(chunked.keepAlive()).isFalse();
    }

    @Test
    void anHttp10RequestClosesUnlessItAsksToKeepAlive() throws IOException {
        Http1Request plain = request("GET / HTTP/1.0\r\n\r\n");
        assertThat(plain.http10()).isTrue();
        assertThat(plain.keepAlive()).isFalse();
        assertThat(plain.framing()).isEqualTo(Framing.NONE);

        Http1Request kept = request("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
        assertThat(kept.http10()).isTrue();
        assertThat(kept.keepAlive()).isTrue();
    }

    @Test
    void aResponsesFramingAndKeepAliveComeBesideItsHead() throws IOException {
        Http1Response r = response("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", false);
        assertThat(r.head().status()).isEqualTo(200);
        assertThat(r.head().headers().first("content-length")).isEqualTo("2");
        assertThat(r.framing()).isEqualTo(Framing.length(2));
        assertThat(r.keepAlive()).isTrue();

        assertThat(response("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n", true).framing())
                .as("the answer to HEAD has no body").isEqualTo(Framing.NONE);

        Http1Response old = response("HTTP/1.0 200 OK\r\n\r\nuntil close", false);
        assertThat(old.framing()).isEqualTo(Framing.UNTIL_CLOSE);
        assertThat(old.keepAlive()).isFalse();
    }
}
