package dev.weft.http;

import dev.weft.jmh.Defaults;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.infra.Blackhole;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * The HTTP/1.1 codec on the heads of one aggregated request: the gateway reads a request head and writes a response
 * head; for each of its calls it writes a request head and reads a response head. Heads are read from memory, so
 * the figures are the codec's own, without the socket.
 */
public class Http1Bench extends Defaults {
    /** What weft-upstream answers a call: a small JSON body's head. */
    private final byte[] responseHead = ("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 27\r\n"
            + "Date: Fri, 27 Nov 2026 12:00:00 GMT\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1);
    /** What wrk sends the gateway. */
    private final byte[] requestHead = ("GET /a0/42 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: wrk\r\n"
            + "Accept: */*\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1);
    /** The fields a call forwards (none from wrk's request pass the gateway's default forward list but these). */
    private final Headers callFields = Headers.of("Accept", "application/json", "X-Request-Id", "4bf92f3577b34da6",
            "traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
    private final Headers answerFields = Headers.of("Content-Type", "application/json", "X-Request-Id",
            "4bf92f3577b34da6");
    private final byte[] answerBody = "{\"b\":{\"id\":42},\"c\":{},\"d\":{}}".getBytes(StandardCharsets.UTF_8);

    @Benchmark
    public Http1Response readResponseHead() throws IOException {
        Http1Input in = new Http1Input(new ByteArrayInputStream(responseHead), 2048);
        return Http1.readResponseHead(in, false, 64 * 1024, Http1.MAX_RESPONSE_FIELDS);
    }

    @Benchmark
    public Http1Request readRequestHead() throws IOException {
        Http1Input in = new Http1Input(new ByteArrayInputStream(requestHead), 2048);
        return Http1.readRequestHead(in, 64 * 1024, Http1.MAX_REQUEST_FIELDS);
    }

    @Benchmark
    public byte[] writeRequestHead() {
        return Http1Writer.requestHead("GET", "/b/42", "127.0.0.1:9001", callFields, "weft/0.1", -1);
    }

    @Benchmark
    public byte[] writeResponse() {
        return Http1Writer.response(Status.OK, answerFields, answerBody, true);
    }

    /** The field check of {@link #writeRequestHead}'s fields alone: what skipping it could save per head. */
    @Benchmark
    public void checkFields(Blackhole bh) {
        for (Map.Entry<String, String> f : callFields) {
            bh.consume(Http1Writer.checkedWide(f.getKey(), f.getValue()));
        }
    }
}
