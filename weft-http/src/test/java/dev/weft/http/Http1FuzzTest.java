package dev.weft.http;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;

import java.io.ByteArrayInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Property tests of the codec: random and mutated heads never throw anything but the codec's own error (or
 * EOF when the bytes run out), never read past a declared body, and always end (every input is finite and
 * each loop consumes bytes or fails).
 */
class Http1FuzzTest {
    private static final List<String> SEEDS_REQUEST = List.of(
            "GET /a?b=1 HTTP/1.1\r\nHost: x\r\n\r\n",
            "POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello",
            "POST /p HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5;a=b\r\nhello\r\n0\r\nT: v\r\n\r\n",
            "OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
            "GET http://h:1/z HTTP/1.0\r\nX: y\r\n\r\n");
    private static final List<String> SEEDS_RESPONSE = List.of(
            "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
            "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
            "HTTP/1.0 200 OK\r\n\r\nuntil close");

    @Property(tries = 3000)
    void randomBytesAsRequest(@ForAll("randomBytes") byte[] bytes) {
        parseRequest(bytes);
    }

    @Property(tries = 3000)
    void mutatedRequests(@ForAll("mutatedRequests") byte[] bytes) {
        parseRequest(bytes);
    }

    @Property(tries = 2000)
    void randomBytesAsResponse(@ForAll("randomBytes") byte[] bytes) {
        parseResponse(bytes);
    }

    @Property(tries = 3000)
    void mutatedResponses(@ForAll("mutatedResponses") byte[] bytes) {
        parseResponse(bytes);
    }

    private static void parseRequest(byte[] bytes) {
        CountingStream stream = new CountingStream(bytes);
        Http1Input in = new Http1Input(stream, 64);
        try {
            while (true) { // as a server does: request after request until the stream ends or fails
                Http1Request read = Http1.readRequestHead(in, 1024, 20);
                if (read == null) {
                    break;
                }
                RequestHead head = read.head();
                long before = in.consumed();
                Body body = Http1.readBody(in, read.framing(), 4096, true);
                long used = in.consumed() - before;
                assertThat(body.length()).isLessThanOrEqualTo(4096);
                assertThat(body.bytes().length).isEqualTo((int) body.length());
                if (read.framing().kind() == Framing.Kind.LENGTH) {
                    assertThat(used).as("consumed exactly the declared body").isEqualTo(read.framing().length());
                } else if (read.framing().kind() == Framing.Kind.NONE) {
                    assertThat(used).isZero();
                }
                assertThat(read.framing().kind()).isNotEqualTo(Framing.Kind.UNTIL_CLOSE);
                assertThat(head.method()).isNotEmpty();
                assertThat(head.target()).doesNotContain(" ", "\r", "\n", "\0");
                for (var h : head.headers()) {
                    assertThat(h.getValue()).doesNotContain("\r", "\n", "\0");
                }
            }
        } catch (HttpCodecException e) {
            assertThat(e.status()).isIn(400, 413, 414, 431, 501, 505);
        } catch (EOFException e) {
            // the bytes ran out in the middle of a message
        } catch (IOException e) {
            throw new AssertionError("unexpected " + e, e);
        }
        assertThat(in.consumed()).isLessThanOrEqualTo(bytes.length);
    }

    private static void parseResponse(byte[] bytes) {
        Http1Input in = new Http1Input(new CountingStream(bytes), 64);
        try {
            Http1Response read = Http1.readResponseHead(in, false, 1024, 20);
            ResponseHead head = read.head();
            long before = in.consumed();
            Body body = Http1.readBody(in, read.framing(), 4096, true);
            if (read.framing().kind() == Framing.Kind.LENGTH) {
                assertThat(in.consumed() - before).isEqualTo(read.framing().length());
            }
            assertThat(body.length()).isLessThanOrEqualTo(4096);
            assertThat(head.status()).isBetween(200, 999);
        } catch (HttpCodecException e) {
            assertThat(e.status()).isIn(400, 413, 505);
        } catch (EOFException e) {
            // the bytes ran out
        } catch (IOException e) {
            throw new AssertionError("unexpected " + e, e);
        }
    }

    /**
     * A body read run by run (a relay's streamed answer) holds the same bytes as the body read whole, or fails the same
     * way; no run is empty or longer than asked, and none runs past the body's end.
     */
    @Property(tries = 3000)
    void aBodyReadRunByRunIsTheBodyReadWhole(@ForAll("mutatedResponses") byte[] bytes,
                                             @ForAll @net.jqwik.api.constraints.IntRange(min = 1, max = 40) int maxRun) {
        Http1Response read;
        Http1Input whole = new Http1Input(new CountingStream(bytes), 64);
        try {
            read = Http1.readResponseHead(whole, false, 1024, 20);
        } catch (IOException e) {
            return; // the head is refused: no body to read
        }
        Object expected;
        try {
            expected = new String(Http1.readBody(whole, read.framing(), Integer.MAX_VALUE, true).bytes(),
                    StandardCharsets.ISO_8859_1);
        } catch (HttpCodecException e) {
            expected = "codec " + e.status();
        } catch (IOException e) {
            expected = e.getClass().getSimpleName();
        }
        Http1Input runs = new Http1Input(new CountingStream(bytes), 64);
        Object got;
        try {
            assertThat(Http1.readResponseHead(runs, false, 1024, 20).head()).isEqualTo(read.head());
            Http1.BodyRuns body = new Http1.BodyRuns(runs, read.framing(), maxRun);
            StringBuilder sb = new StringBuilder();
            byte[] run;
            while ((run = body.next()) != null) {
                assertThat(run.length).isBetween(1, maxRun);
                sb.append(new String(run, StandardCharsets.ISO_8859_1));
            }
            assertThat(body.ended()).isTrue();
            assertThat(body.next()).as("the end stays the end").isNull();
            got = sb.toString();
        } catch (HttpCodecException e) {
            got = "codec " + e.status();
        } catch (IOException e) {
            got = e.getClass().getSimpleName();
        }
        assertThat(got).isEqualTo(expected);
        if (expected instanceof String && !((String) expected).startsWith("codec ")
                && read.framing().kind() != Framing.Kind.UNTIL_CLOSE && !expected.equals("EOFException")) {
            assertThat(runs.consumed()).as("nothing read past the body").isEqualTo(whole.consumed());
        }
    }

    @Provide
    Arbitrary<byte[]> randomBytes() {
        return Arbitraries.bytes().array(byte[].class).ofMaxSize(300);
    }

    @Provide
    Arbitrary<byte[]> mutatedRequests() {
        return mutated(SEEDS_REQUEST);
    }

    @Provide
    Arbitrary<byte[]> mutatedResponses() {
        return mutated(SEEDS_RESPONSE);
    }

    /** A seed with 1-6 edits: a byte replaced (often by a delimiter), inserted or deleted. */
    private static Arbitrary<byte[]> mutated(List<String> seeds) {
        Arbitrary<Byte> interesting = Arbitraries.oneOf(Arbitraries.bytes(),
                Arbitraries.of((byte) '\r', (byte) '\n', (byte) ' ', (byte) '\t', (byte) ':', (byte) 0, (byte) ';',
                        (byte) ',', (byte) '0', (byte) 'f', (byte) 0x7f, (byte) 0xff));
        Arbitrary<Tuple.Tuple3<Integer, Integer, Byte>> edit = Combinators.combine(
                Arbitraries.integers().between(0, 2), Arbitraries.integers().between(0, 10_000), interesting)
                .as(Tuple::of);
        return Combinators.combine(Arbitraries.of(seeds), edit.list().ofMinSize(1).ofMaxSize(6),
                Arbitraries.integers().between(1, 3)).as((seed, edits, copies) -> {
                    StringBuilder sb = new StringBuilder();
                    for (int i = 0; i < copies; i++) {
                        sb.append(seed);
                    }
                    byte[] b = sb.toString().getBytes(StandardCharsets.ISO_8859_1);
                    for (var e : edits) {
                        int at = e.get2() % (b.length + 1);
                        switch (e.get1()) {
                            case 0 -> {
                                if (at < b.length) {
                                    b[at] = e.get3();
                                }
                            }
                            case 1 -> {
                                byte[] n = new byte[b.length + 1];
                                System.arraycopy(b, 0, n, 0, at);
                                n[at] = e.get3();
                                System.arraycopy(b, at, n, at + 1, b.length - at);
                                b = n;
                            }
                            default -> {
                                if (at < b.length) {
                                    byte[] n = new byte[b.length - 1];
                                    System.arraycopy(b, 0, n, 0, at);
                                    System.arraycopy(b, at + 1, n, at, b.length - at - 1);
                                    b = n;
                                }
                            }
                        }
                    }
                    return b;
                });
    }

    /** A finite stream that hands out at most 7 bytes a read, to cross every buffer boundary. */
    private static final class CountingStream extends InputStream {
        private final ByteArrayInputStream in;
        private int reads;

        CountingStream(byte[] b) {
            in = new ByteArrayInputStream(b);
        }

        @Override
        public int read() {
            return in.read();
        }

        @Override
        public int read(byte[] b, int off, int len) {
            if (++reads > 100_000) {
                throw new AssertionError("the parser kept reading an exhausted stream");
            }
            return in.read(b, off, Math.min(len, 7));
        }
    }
}
