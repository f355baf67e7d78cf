package dev.weft.it;

import dev.weft.client.CallRequest;
import dev.weft.client.CallResult;
import dev.weft.client.DestinationConfig;
import dev.weft.client.RequestStream;
import dev.weft.client.Transport;
import dev.weft.client.policy.RetryPolicy;
import dev.weft.http.Http1;
import dev.weft.http.Http1Input;
import dev.weft.http.Http1Request;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A request body sent as it comes ({@link RequestStream}) over HTTP/1.1, against a server over loopback that reads
 * each request with weft-http's strict codec: chunked when no length is known, with {@code Content-Length} when it is,
 * never a byte past the length, and a connection reused only after the whole body went out.
 */
class StreamedRequestIT {
    /** What the server read of one request: its head, and its body or why it could not be read whole. */
    record Seen(Http1Request head, byte[] body, String failure) {
    }

    /** Reads each request whole with the strict codec and answers 200 with the body's length; /early answers first. */
    static final class Reader implements AutoCloseable {
        final ServerSocket server;
        final AtomicInteger connections = new AtomicInteger();
        final List<Seen> seen = new CopyOnWriteArrayList<>();
        final CountDownLatch answeredEarly = new CountDownLatch(1);

        Reader() throws IOException {
            server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
            Thread.ofVirtual().start(() -> {
                while (!server.isClosed()) {
                    try {
                        Socket s = server.accept();
                        connections.incrementAndGet();
                        Thread.ofVirtual().start(() -> serve(s));
                    } catch (IOException e) {
                        return;
                    }
                }
            });
        }

        String url(String path) {
            return "http://127.0.0.1:" + server.getLocalPort() + path;
        }

        private void serve(Socket s) {
            try (s; InputStream in = s.getInputStream(); OutputStream out = s.getOutputStream()) {
                Http1Input input = new Http1Input(in, 2048);
                while (true) {
                    Http1Request head = Http1.readRequestHead(input, 16 * 1024, 100);
                    if (head == null) {
                        return;
                    }
                    if (head.head().path().equals("/early")) {
                        out.write("HTTP/1.1 413 Content Too Large\r\nContent-Length: 3\r\nConnection: close\r\n\r\nbig"
                                .getBytes(StandardCharsets.ISO_8859_1));
                        out.flush();
                        seen.add(new Seen(head, null, "answered first"));
                        answeredEarly.countDown();
                        Thread.sleep(300); // then close, as a server does, with the body still coming
                        return;
                    }
                    byte[] body;
                    try {
                        body = Http1.readBody(input, head.framing(), 1 << 20, true).bytes();
                    } catch (IOException e) {
                        seen.add(new Seen(head, null, e.getClass().getSimpleName() + ": " + e.getMessage()));
                        return;
                    }
                    seen.add(new Seen(head, body, null));
                    byte[] answer = ("got " + body.length).getBytes(StandardCharsets.US_ASCII);
                    out.write(("HTTP/1.1 200 OK\r\nContent-Length: " + answer.length + "\r\n\r\n")
                            .getBytes(StandardCharsets.ISO_8859_1));
                    out.write(answer);
                    out.flush();
                }
            } catch (IOException | InterruptedException e) {
                // the client went away
            }
        }

        @Override
        public void close() throws IOException {
            server.close();
        }
    }

    /** The runs given, then the end; {@link #cancelled} says whether the call gave up on it. */
    static final class Runs implements RequestStream {
        final Queue<byte[]> runs;
        final long length;
        final AtomicBoolean cancelled = new AtomicBoolean();
        /** When set, {@link #next} waits for it before giving the end (a body still coming). */
        volatile CountDownLatch holdEnd;

        Runs(long length, String... runs) {
            this.length = length;
            this.runs = new ArrayDeque<>();
            for (String r : runs) {
                this.runs.add(r.getBytes(StandardCharsets.US_ASCII));
            }
        }

        @Override
        public synchronized byte[] next() throws InterruptedException, IOException {
            byte[] r = runs.poll();
            if (r == null && holdEnd != null) {
                while (!holdEnd.await(10, TimeUnit.MILLISECONDS)) {
                    if (cancelled.get()) {
                        throw new IOException("cancelled");
                    }
                }
            }
            return r;
        }

        @Override
        public void cancel() {
            cancelled.set(true);
        }

        @Override
        public long length() {
            return length;
        }
    }

    private Reader server;
    private final Transport transport = Transport.builder()
            .defaults(DestinationConfig.DEFAULT.withRetry(RetryPolicy.NONE)).build();

    @AfterEach
    void stop() throws IOException {
        transport.close();
        if (server != null) {
            server.close();
        }
    }

    private CallResult post(String path, Runs body) {
        return transport.call(CallRequest.builder("POST", server.url(path)).tag(RequestStream.class, body).build(),
                Duration.ofSeconds(5));
    }

    /**
     * An upload the server never reads, stopped by its deadline, fails as a timeout, never as {@code cancelled}
     * (which the gateway answers 499, blaming a client still there): the pump, whose write fails when the deadline
     * closes the connection, no longer cancels the call. Before, it raced the reading thread and won some of the
     * time; eight calls at once, so that a race lost shows.
     */
    @Test
    void anUploadStoppedByItsDeadlineIsATimeoutNotACancel() throws Exception {
        try (java.net.ServerSocket deaf = new java.net.ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
            List<Socket> held = new java.util.concurrent.CopyOnWriteArrayList<>();
            Thread.ofVirtual().start(() -> {
                while (!deaf.isClosed()) {
                    try {
                        held.add(deaf.accept()); // accepted, never read: the upload fills the socket buffers
                    } catch (IOException e) {
                        return;
                    }
                }
            });
            String url = "http://127.0.0.1:" + deaf.getLocalPort() + "/up";
            List<java.util.concurrent.Future<CallResult>> calls = new java.util.ArrayList<>();
            try (var pool = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor()) {
                for (int i = 0; i < 8; i++) {
                    RequestStream body = new EndlessBody(64 * 1024); // only the deadline ends it
                    calls.add(pool.submit(() -> transport.call(CallRequest.builder("POST", url)
                            .tag(RequestStream.class, body).build(), Duration.ofMillis(500))));
                }
                for (java.util.concurrent.Future<CallResult> f : calls) {
                    CallResult r = f.get();
                    assertThat(r.ok()).isFalse();
                    assertThat(r.reason()).as(r.toString()).isNotEqualTo(dev.weft.client.Reason.CANCELLED);
                    assertThat(r.outcome()).as(r.toString()).startsWith("timeout");
                }
            } finally {
                for (Socket h : held) {
                    h.close();
                }
            }
        }
    }

    @Test
    void aBodyOfNoKnownLengthGoesChunkedAndTheConnectionIsReusedAfterIt() throws IOException {
        server = new Reader();
        for (int i = 0; i < 3; i++) {
            CallResult r = post("/ok", new Runs(-1, "hello", ", ", "world"));
            assertThat(r.ok()).as(r.toString()).isTrue();
            assertThat(r.bodyText()).isEqualTo("got 12");
        }
        assertThat(server.seen).hasSize(3).allSatisfy(s -> {
            assertThat(s.failure()).isNull();
            assertThat(new String(s.body(), StandardCharsets.US_ASCII)).isEqualTo("hello, world");
            assertThat(s.head().head().headers().first("transfer-encoding")).isEqualTo("chunked");
            assertThat(s.head().head().headers().first("content-length")).isNull();
        });
        assertThat(server.connections.get()).as("the body went out whole each time: one connection").isEqualTo(1);
    }

    @Test
    void aBodyOfKnownLengthGoesWithContentLength() throws IOException {
        server = new Reader();
        CallResult r = post("/ok", new Runs(12, "hello", ", ", "world"));
        assertThat(r.bodyText()).as(r.toString()).isEqualTo("got 12");
        Seen s = server.seen.getFirst();
        assertThat(s.head().head().headers().first("content-length")).isEqualTo("12");
        assertThat(s.head().head().headers().first("transfer-encoding")).isNull();
        assertThat(new String(s.body(), StandardCharsets.US_ASCII)).isEqualTo("hello, world");
    }

    @Test
    void aBodyLongerThanItsLengthStopsTheCallAndNothingPastTheLengthIsWritten() throws Exception {
        server = new Reader();
        // the 6 bytes past the length would be read by the server as the start of another request
        Runs body = new Runs(10, "hello", "world", "GET /x");
        CallResult r = post("/ok", body);
        // the server may read the 10 bytes and answer before the pump finds the run too long: either way nothing more
        Thread.sleep(200);
        assertThat(server.seen).as("one request, never a second one made of the extra bytes").hasSize(1);
        if (r.ok()) {
            assertThat(r.bodyText()).isEqualTo("got 10");
        } else {
            assertThat(r.failure().reason().name()).isIn("CANCELLED", "RESET", "IO");
        }
        assertThat(body.cancelled).isTrue();
        assertThat(post("/ok", new Runs(-1, "next")).bodyText()).isEqualTo("got 4");
        assertThat(server.seen).hasSize(2);
        assertThat(server.connections.get()).as("the connection of the overlong body was not reused").isEqualTo(2);
    }

    @Test
    void aBodyShorterThanItsLengthStopsTheCallAndTheServerNeverReadsItWhole() throws Exception {
        server = new Reader();
        CallResult r = post("/ok", new Runs(10, "hello"));
        assertThat(r.ok()).as(r.toString()).isFalse();
        assertThat(r.failure().reason().name()).isEqualTo("CANCELLED");
        awaitSeen(1);
        assertThat(server.seen.getFirst().failure()).as("the server saw a cut body").isNotNull();
        assertThat(server.seen.getFirst().body()).isNull();
    }

    @Test
    void aChunkedBodyThatFailsPartWayNeverGetsItsLastChunk() throws Exception {
        server = new Reader();
        RequestStream failing = new RequestStream() {
            int n;

            @Override
            public byte[] next() throws IOException {
                if (n++ == 0) {
                    return "part".getBytes(StandardCharsets.US_ASCII);
                }
                throw new IOException("the upload was cut");
            }

            @Override
            public void cancel() {
            }
        };
        CallResult r = transport.call(CallRequest.builder("PUT", server.url("/ok")).tag(RequestStream.class, failing)
                .build(), Duration.ofSeconds(5));
        assertThat(r.ok()).isFalse();
        awaitSeen(1);
        assertThat(server.seen.getFirst().body()).as("never read as a whole body").isNull();
    }

    @Test
    void anAnswerBeforeTheBodyEndsIsTheCallsAndTheConnectionIsNotReused() throws Exception {
        server = new Reader();
        Runs body = new Runs(-1, "first run");
        body.holdEnd = new CountDownLatch(1); // the body never ends by itself
        long t0 = System.nanoTime();
        CallResult r = post("/early", body);
        assertThat(r.status()).as(r.toString()).isEqualTo(413);
        assertThat(r.bodyText()).isEqualTo("big");
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).as("not held until the deadline")
                .isLessThan(Duration.ofSeconds(4));
        assertThat(body.cancelled).as("the body is no longer asked for").isTrue();
        assertThat(post("/ok", new Runs(-1, "again")).bodyText()).isEqualTo("got 5");
        assertThat(server.connections.get()).isEqualTo(2);
    }

    private void awaitSeen(int n) throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (server.seen.size() < n && System.nanoTime() - until < 0) {
            Thread.sleep(10);
        }
        assertThat(server.seen).hasSizeGreaterThanOrEqualTo(n);
    }
}
