package dev.weft.gateway;

import dev.weft.gateway.config.GatewayConfigLoader;
import dev.weft.gateway.server.Gateway;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.ServerCalls;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A gRPC call relayed by a {@code proxy:} route, grpc-java on both sides over loopback: the client speaks h2c with
 * prior knowledge to the gateway's plain listener, the gateway speaks h2c ({@code http2: h2c}) to a grpc-java Netty
 * server. gRPC's status travels in trailers, so without them no call completes (the client fails it INTERNAL).
 * Bodies stream both ways for gRPC over HTTP/2: a server stream that stays open arrives message by message, a client
 * that reads nothing holds the backend back, a cancel or the route's deadline reaches the backend, and client and
 * bidirectional streams relay each message as it comes.
 */
class ProxyGrpcIT {
    private static final String SERVICE = "weft.test.Echo";
    private static final MethodDescriptor.Marshaller<byte[]> BYTES = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(byte[] value) {
            return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
            try {
                return stream.readAllBytes();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    };
    private static final MethodDescriptor<byte[], byte[]> SAY = method("Say", MethodDescriptor.MethodType.UNARY);
    private static final MethodDescriptor<byte[], byte[]> FAIL = method("Fail", MethodDescriptor.MethodType.UNARY);
    private static final MethodDescriptor<byte[], byte[]> SLOW = method("Slow", MethodDescriptor.MethodType.UNARY);
    private static final MethodDescriptor<byte[], byte[]> NAP = method("Nap", MethodDescriptor.MethodType.UNARY);
    /** Answers HEADERS, then trailers with OK and an x-detail as long as the request says, and no message. */
    private static final MethodDescriptor<byte[], byte[]> BARE = method("Bare",
            MethodDescriptor.MethodType.SERVER_STREAMING);
    private static final MethodDescriptor<byte[], byte[]> COUNT = method("Count",
            MethodDescriptor.MethodType.SERVER_STREAMING);
    private static final MethodDescriptor<byte[], byte[]> WATCH = MethodDescriptor.<byte[], byte[]>newBuilder()
            .setType(MethodDescriptor.MethodType.SERVER_STREAMING).setFullMethodName("weft.test.Streams/Watch")
            .setRequestMarshaller(BYTES).setResponseMarshaller(BYTES).build();
    /** WATCH under a route with a 30 s deadline: a cancel must reach the backend by itself, not by the deadline. */
    private static final MethodDescriptor<byte[], byte[]> HOLD = MethodDescriptor.<byte[], byte[]>newBuilder()
            .setType(MethodDescriptor.MethodType.SERVER_STREAMING).setFullMethodName("weft.test.Streams/Hold")
            .setRequestMarshaller(BYTES).setResponseMarshaller(BYTES).build();
    private static final MethodDescriptor<byte[], byte[]> CHAT = MethodDescriptor.<byte[], byte[]>newBuilder()
            .setType(MethodDescriptor.MethodType.BIDI_STREAMING).setFullMethodName("weft.test.Streams/Chat")
            .setRequestMarshaller(BYTES).setResponseMarshaller(BYTES).build();
    private static final MethodDescriptor<byte[], byte[]> SUM = MethodDescriptor.<byte[], byte[]>newBuilder()
            .setType(MethodDescriptor.MethodType.CLIENT_STREAMING).setFullMethodName("weft.test.Streams/Sum")
            .setRequestMarshaller(BYTES).setResponseMarshaller(BYTES).build();
    /** SUM under a route whose deadline is 1 s (its prefix is rewritten to SUM's path). */
    private static final MethodDescriptor<byte[], byte[]> SUM_QUICK = MethodDescriptor.<byte[], byte[]>newBuilder()
            .setType(MethodDescriptor.MethodType.CLIENT_STREAMING).setFullMethodName("weft.test.Quick/Sum")
            .setRequestMarshaller(BYTES).setResponseMarshaller(BYTES).build();
    private static final MethodDescriptor<byte[], byte[]> FLOOD = MethodDescriptor.<byte[], byte[]>newBuilder()
            .setType(MethodDescriptor.MethodType.SERVER_STREAMING).setFullMethodName("weft.test.Streams/Flood")
            .setRequestMarshaller(BYTES).setResponseMarshaller(BYTES).build();
    private static final Metadata.Key<String> TENANT = Metadata.Key.of("x-tenant", Metadata.ASCII_STRING_MARSHALLER);
    private static final Metadata.Key<String> DETAIL = Metadata.Key.of("x-detail", Metadata.ASCII_STRING_MARSHALLER);

    private Server backend;
    private Gateway gw;
    private ManagedChannel channel;
    /** What the backend saw of the last call's metadata. */
    private final Map<String, String> seen = new ConcurrentHashMap<>();
    /** HTTP/2 connections the backend accepted. */
    private final java.util.concurrent.atomic.AtomicInteger backendConnections = new java.util.concurrent.atomic.AtomicInteger();

    @TempDir
    Path dir;

    private static MethodDescriptor<byte[], byte[]> method(String name, MethodDescriptor.MethodType type) {
        return MethodDescriptor.<byte[], byte[]>newBuilder().setType(type)
                .setFullMethodName(MethodDescriptor.generateFullMethodName(SERVICE, name))
                .setRequestMarshaller(BYTES).setResponseMarshaller(BYTES).build();
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * grpc-java's server logs (once per server) a warning when a request comes without {@code TE: trailers} ("some
     * intermediate proxy may not support trailers"); it keeps {@code te} out of the call's metadata.
     */
    private final List<String> grpcWarnings = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final java.util.logging.Logger nettyServerLog =
            java.util.logging.Logger.getLogger("io.grpc.netty.shaded.io.grpc.netty.NettyServerHandler");
    private final java.util.logging.Handler warnings = new java.util.logging.Handler() {
        @Override
        public void publish(java.util.logging.LogRecord r) {
            grpcWarnings.add(String.valueOf(r.getMessage()));
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };

    @BeforeEach
    void start() throws Exception {
        nettyServerLog.addHandler(warnings);
        ServerServiceDefinition echo = ServerServiceDefinition.builder(SERVICE)
                .addMethod(SAY, ServerCalls.asyncUnaryCall((req, out) -> {
                    out.onNext(utf8("hello " + new String(req, StandardCharsets.UTF_8)));
                    out.onCompleted();
                }))
                .addMethod(FAIL, ServerCalls.asyncUnaryCall((req, out) -> {
                    Metadata trailers = new Metadata();
                    trailers.put(DETAIL, "shelf 7");
                    out.onError(Status.NOT_FOUND.withDescription("no such book: "
                            + new String(req, StandardCharsets.UTF_8)).asRuntimeException(trailers));
                }))
                .addMethod(SLOW, ServerCalls.asyncUnaryCall((req, out) -> {
                    try {
                        Thread.sleep(3_000);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    out.onNext(utf8("late"));
                    out.onCompleted();
                }))
                .addMethod(NAP, ServerCalls.asyncUnaryCall((req, out) -> {
                    try {
                        Thread.sleep(300);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    out.onNext(req);
                    out.onCompleted();
                }))
                .addMethod(BARE, new ServerCallHandler<byte[], byte[]>() {
                    @Override
                    public ServerCall.Listener<byte[]> startCall(ServerCall<byte[], byte[]> call, Metadata headers) {
                        call.request(1);
                        return new ServerCall.Listener<>() {
                            @Override
                            public void onMessage(byte[] req) {
                                Metadata trailers = new Metadata();
                                trailers.put(DETAIL, "d".repeat(Integer.parseInt(new String(req, StandardCharsets.UTF_8))));
                                call.sendHeaders(new Metadata());
                                call.close(Status.OK, trailers);
                            }
                        };
                    }
                })
                .addMethod(COUNT, ServerCalls.asyncServerStreamingCall((req, out) -> {
                    int n = Integer.parseInt(new String(req, StandardCharsets.UTF_8));
                    for (int i = 1; i <= n; i++) {
                        out.onNext(utf8("n" + i));
                    }
                    if (n == 3) { // three messages, then a failure: DATA, then trailers with a status that is not OK
                        Metadata trailers = new Metadata();
                        trailers.put(DETAIL, "quota 3");
                        out.onError(Status.RESOURCE_EXHAUSTED.withDescription("stopped after 3")
                                .asRuntimeException(trailers));
                    } else {
                        out.onCompleted();
                    }
                }))
                .build();
        ServerInterceptor record = new ServerInterceptor() {
            @Override
            public <Q, A> ServerCall.Listener<Q> interceptCall(ServerCall<Q, A> call, Metadata headers,
                                                                ServerCallHandler<Q, A> next) {
                seen.clear();
                String v = headers.get(TENANT);
                if (v != null) {
                    seen.put(TENANT.name(), v);
                }
                return next.startCall(call, headers);
            }
        };
        backend = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .addTransportFilter(new io.grpc.ServerTransportFilter() {
                    @Override
                    public io.grpc.Attributes transportReady(io.grpc.Attributes a) {
                        backendConnections.incrementAndGet();
                        return a;
                    }
                })
                .executor(java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor())
                .addService(ServerInterceptors.intercept(echo, record)).addService(streams(this)).build().start();
        String target = "http://127.0.0.1:" + backend.getPort();
        Path f = dir.resolve("gw.yaml");
        Files.writeString(f, """
                access_log: LOG
                limits: { body_timeout: 1s }
                destinations:
                  "TARGET":
                    http2: h2c
                routes:
                  - prefix: /weft.test.Echo/
                    proxy: "TARGET/weft.test.Echo/"
                    timeout: 1s
                    max_body: 1MiB
                  - prefix: /weft.test.Streams/Watch
                    proxy: "TARGET/weft.test.Streams/Watch"
                    timeout: 1s
                  - prefix: /weft.test.Streams/Hold
                    proxy: "TARGET/weft.test.Streams/Hold"
                    timeout: 30s
                  - prefix: /weft.test.Streams/Chat
                    proxy: "TARGET/weft.test.Streams/Chat"
                    timeout: 30s
                  - prefix: /weft.test.Streams/Sum
                    proxy: "TARGET/weft.test.Streams/Sum"
                    timeout: 30s
                    max_body: 1MiB
                  - prefix: /weft.test.Quick/Sum
                    proxy: "TARGET/weft.test.Streams/Sum"
                    timeout: 1s
                  - prefix: /weft.test.Streams/Flood
                    proxy: "TARGET/weft.test.Streams/Flood"
                    timeout: 30s
                """.replace("TARGET", target).replace("LOG", dir.resolve("access.log").toString()));
        gw = Gateway.start(GatewayConfigLoader.load(f), new InetSocketAddress("127.0.0.1", 0), null, line -> { });
        // a 16 KiB window: the gateway's answers wait for WINDOW_UPDATEs, and trailers must still come last
        channel = NettyChannelBuilder.forAddress("127.0.0.1", gw.address().getPort()).usePlaintext()
                .flowControlWindow(16 * 1024).build();
    }

    @AfterEach
    void stop() throws Exception {
        nettyServerLog.removeHandler(warnings);
        if (channel != null) {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        if (gw != null) {
            gw.close();
        }
        if (backend != null) {
            backend.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    private <Q, A> A unary(MethodDescriptor<Q, A> m, Q request, Metadata extra) {
        io.grpc.Channel ch = extra == null ? channel
                : io.grpc.ClientInterceptors.intercept(channel, MetadataUtils.newAttachHeadersInterceptor(extra));
        return ClientCalls.blockingUnaryCall(ch, m, CallOptions.DEFAULT.withDeadlineAfter(5, TimeUnit.SECONDS), request);
    }

    @Test
    void aUnaryCallIsRelayedWithItsStatusInTrailersAndItsMetadata() {
        Metadata md = new Metadata();
        md.put(TENANT, "acme");
        byte[] answer = unary(SAY, utf8("weft"), md);
        assertThat(new String(answer, StandardCharsets.UTF_8)).isEqualTo("hello weft");
        assertThat(seen).as("the client's metadata reached the backend").containsEntry("x-tenant", "acme");
        assertThat(grpcWarnings).as("TE: trailers reached the backend").noneMatch(m -> m.contains("TE"));
        // streamed or held (a unary answer may have ended before its head was read), its line is the same
        com.fasterxml.jackson.databind.JsonNode line = AccessLogLines.of(dir.resolve("access.log"), "/Say");
        assertThat(line.get("bytes").asLong()).as("the message's frame: 5 bytes and 'hello weft'").isEqualTo(15);
        assertThat(line.get("completed").asBoolean()).isTrue();
    }

    @Test
    void aMessageLargerThanTheFlowControlWindowsComesWholeBeforeItsTrailers() {
        // 300 KB each way: more than the client's 16 KiB window, so the gateway's DATA waits for WINDOW_UPDATEs
        // and the trailers must still come after the last DATA frame
        String big = "x".repeat(300_000);
        byte[] answer = unary(SAY, utf8(big), null);
        assertThat(new String(answer, StandardCharsets.UTF_8)).isEqualTo("hello " + big);
    }

    @Test
    void aColdStartOfManyCallsOpensAConnectionPerMaxStreamsNotOnePerCall() throws Exception {
        // 200 calls at once from a cold pool: h2c is known before the first connect, so the pool opens one connection
        // for every max_streams (100) waiting calls, as it does once an https destination has chosen h2 by ALPN
        List<com.google.common.util.concurrent.ListenableFuture<byte[]>> calls = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            calls.add(ClientCalls.futureUnaryCall(channel.newCall(NAP,
                    CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS)), utf8("c" + i)));
        }
        for (int i = 0; i < calls.size(); i++) {
            assertThat(new String(calls.get(i).get(15, TimeUnit.SECONDS), StandardCharsets.UTF_8)).isEqualTo("c" + i);
        }
        assertThat(backendConnections.get()).as("connections the gateway opened to the backend").isBetween(1, 3);
    }

    /** How the last WATCH call ended at the backend: cancelled (the client, or the gateway, reset it). */
    private final java.util.concurrent.CountDownLatch watchCancelled = new java.util.concurrent.CountDownLatch(1);
    /** Lets WATCH send its second message. */
    private final java.util.concurrent.CountDownLatch watchGo = new java.util.concurrent.CountDownLatch(1);
    /** FLOOD's messages handed to grpc-java while it said the stream was ready. */
    private final java.util.concurrent.atomic.AtomicInteger flooded = new java.util.concurrent.atomic.AtomicInteger();
    private final java.util.concurrent.CountDownLatch chatCancelled = new java.util.concurrent.CountDownLatch(1);
    /** SUM calls the backend saw end: completed (the whole upload) or cancelled. */
    private final java.util.concurrent.atomic.AtomicInteger sumCompleted = new java.util.concurrent.atomic.AtomicInteger();
    private final java.util.concurrent.CountDownLatch sumCancelled = new java.util.concurrent.CountDownLatch(1);
    /** Messages of SUM calls the backend received. */
    private final java.util.concurrent.atomic.AtomicInteger sumReceived = new java.util.concurrent.atomic.AtomicInteger();
    private final java.util.concurrent.atomic.AtomicInteger floodCancelled = new java.util.concurrent.atomic.AtomicInteger();

    private static final int FLOOD_MESSAGES = 300;
    private static final int FLOOD_SIZE = 64 * 1024;

    /** The WATCH and FLOOD methods: server streams that stay open, and one that sends only when the stream is ready. */
    private static ServerServiceDefinition streams(ProxyGrpcIT t) {
        return ServerServiceDefinition.builder("weft.test.Streams")
                .addMethod(HOLD, ServerCalls.asyncServerStreamingCall((req, out) -> {
                    var o = (io.grpc.stub.ServerCallStreamObserver<byte[]>) out;
                    o.setOnCancelHandler(t.watchCancelled::countDown);
                    o.onNext(utf8("first"));
                }))
                .addMethod(CHAT, ServerCalls.asyncBidiStreamingCall(out -> {
                    ((io.grpc.stub.ServerCallStreamObserver<byte[]>) out).setOnCancelHandler(t.chatCancelled::countDown);
                    return new io.grpc.stub.StreamObserver<byte[]>() {
                        @Override
                        public void onNext(byte[] m) {
                            out.onNext(utf8("echo:" + new String(m, StandardCharsets.UTF_8)));
                        }

                        @Override
                        public void onError(Throwable e) {
                        }

                        @Override
                        public void onCompleted() {
                            out.onCompleted();
                        }
                    };
                }))
                .addMethod(SUM, ServerCalls.asyncClientStreamingCall(out -> {
                    ((io.grpc.stub.ServerCallStreamObserver<byte[]>) out).setOnCancelHandler(t.sumCancelled::countDown);
                    return new io.grpc.stub.StreamObserver<byte[]>() {
                        int n;

                        @Override
                        public void onNext(byte[] m) {
                            n++;
                            t.sumReceived.incrementAndGet();
                        }

                        @Override
                        public void onError(Throwable e) {
                        }

                        @Override
                        public void onCompleted() {
                            t.sumCompleted.incrementAndGet();
                            out.onNext(utf8(n + " messages"));
                            out.onCompleted();
                        }
                    };
                }))
                .addMethod(WATCH, ServerCalls.asyncServerStreamingCall((req, out) -> {
                    var o = (io.grpc.stub.ServerCallStreamObserver<byte[]>) out;
                    o.setOnCancelHandler(t.watchCancelled::countDown);
                    o.onNext(utf8("first"));
                    Thread.ofVirtual().start(() -> {
                        try {
                            if (t.watchGo.await(20, TimeUnit.SECONDS) && !o.isCancelled()) {
                                o.onNext(utf8("second"));
                                o.onCompleted();
                            }
                        } catch (InterruptedException | RuntimeException e) {
                            // the call is over
                        }
                    });
                }))
                .addMethod(FLOOD, ServerCalls.asyncServerStreamingCall((req, out) -> {
                    var o = (io.grpc.stub.ServerCallStreamObserver<byte[]>) out;
                    byte[] message = new byte[FLOOD_SIZE];
                    boolean[] done = {false};
                    int[] sent = {0}; // this call's; t.flooded counts every call's
                    o.setOnCancelHandler(t.floodCancelled::incrementAndGet);
                    o.setOnReadyHandler(() -> {
                        while (o.isReady() && !done[0] && !o.isCancelled()) {
                            if (sent[0] == FLOOD_MESSAGES) {
                                done[0] = true;
                                o.onCompleted();
                                return;
                            }
                            sent[0]++;
                            t.flooded.incrementAndGet();
                            o.onNext(message);
                        }
                    });
                }))
                .build();
    }

    /** How a call ended, as its listener saw it, with the messages that came before. */
    private record Closed(Status status, Metadata trailers, List<byte[]> messages) {
    }

    /** A started call: its messages as they come ({@code request} asks for more), and how it ended. */
    private record Open(io.grpc.ClientCall<byte[], byte[]> call, java.util.concurrent.BlockingQueue<byte[]> messages,
                        java.util.concurrent.CompletableFuture<Closed> closed) {
    }

    /** Starts a call of {@code m} and asks for {@code firstRequest} messages; sends nothing. */
    private static Open start(io.grpc.Channel channel, MethodDescriptor<byte[], byte[]> m, int firstRequest,
                              int deadlineSeconds) {
        java.util.concurrent.BlockingQueue<byte[]> messages = new java.util.concurrent.LinkedBlockingQueue<>();
        java.util.concurrent.CompletableFuture<Closed> closed = new java.util.concurrent.CompletableFuture<>();
        io.grpc.ClientCall<byte[], byte[]> c = channel.newCall(m, CallOptions.DEFAULT.withDeadlineAfter(deadlineSeconds,
                TimeUnit.SECONDS));
        c.start(new io.grpc.ClientCall.Listener<>() {
            @Override
            public void onMessage(byte[] message) {
                messages.add(message);
            }

            @Override
            public void onClose(Status status, Metadata trailers) {
                closed.complete(new Closed(status, trailers, List.copyOf(messages)));
            }
        }, new Metadata());
        c.request(firstRequest);
        return new Open(c, messages, closed);
    }

    private Open open(MethodDescriptor<byte[], byte[]> m, int firstRequest) {
        return open(channel, m, firstRequest);
    }

    /** A server-streaming call started with one request message, "go". */
    private Open open(io.grpc.Channel channel, MethodDescriptor<byte[], byte[]> m, int firstRequest) {
        Open o = start(channel, m, firstRequest, 20);
        o.call().sendMessage(utf8("go"));
        o.call().halfClose();
        return o;
    }

    @Test
    void aServerStreamThatStaysOpenArrivesMessageByMessage() throws Exception {
        Open o = open(WATCH, 10);
        byte[] first = o.messages().poll(5, TimeUnit.SECONDS);
        assertThat(first).as("the first message while the backend's stream stays open").isNotNull();
        assertThat(new String(first, StandardCharsets.UTF_8)).isEqualTo("first");
        watchGo.countDown();
        byte[] second = o.messages().poll(5, TimeUnit.SECONDS);
        assertThat(second).isNotNull();
        assertThat(new String(second, StandardCharsets.UTF_8)).isEqualTo("second");
        assertThat(o.closed().get(5, TimeUnit.SECONDS).status().getCode()).isEqualTo(Status.Code.OK);
    }

    @Test
    void aClientThatCancelsAStreamCancelsTheBackendsStream() throws Exception {
        // the route's deadline is 30 s away: only the cancel can end the backend's stream within the wait below,
        // while the relay's call waits for the backend's next bytes
        Open o = open(HOLD, 10);
        assertThat(o.messages().poll(5, TimeUnit.SECONDS)).isNotNull();
        o.call().cancel("the test is done with it", null);
        assertThat(watchCancelled.await(3, TimeUnit.SECONDS)).as("the backend saw its stream cancelled").isTrue();
    }

    @Test
    void cancellingOneStreamLeavesTheOthersOnTheSameBackendConnection() throws Exception {
        ManagedChannel wide = NettyChannelBuilder.forAddress("127.0.0.1", gw.address().getPort()).usePlaintext()
                .flowControlWindow(256 * 1024).build();
        try {
            Open a = open(wide, FLOOD, 1);
            Open b = open(wide, FLOOD, 1);
            assertThat(a.messages().poll(5, TimeUnit.SECONDS)).isNotNull();
            assertThat(b.messages().poll(5, TimeUnit.SECONDS)).isNotNull();
            int connections = backendConnections.get();
            a.call().cancel("one of two", null); // while both relays push against full windows
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(5))
                    .until(() -> floodCancelled.get() == 1);
            b.call().request(FLOOD_MESSAGES);
            assertThat(b.closed().get(20, TimeUnit.SECONDS).status().getCode()).isEqualTo(Status.Code.OK);
            assertThat(b.messages()).hasSize(FLOOD_MESSAGES - 1).allSatisfy(m -> assertThat(m).hasSize(FLOOD_SIZE));
            assertThat(backendConnections.get()).as("the backend connection served on").isEqualTo(connections);
            assertThat(floodCancelled.get()).as("only the cancelled stream was cancelled at the backend").isEqualTo(1);
        } finally {
            wide.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    @Test
    void aStreamStillOpenAtTheRoutesDeadlineEndsThereAndIsCancelledAtTheBackend() throws Exception {
        long t0 = System.nanoTime();
        Open o = open(WATCH, 10); // the route's timeout is 1 s; WATCH waits 20 s for its second message
        assertThat(o.messages().poll(5, TimeUnit.SECONDS)).isNotNull();
        Status end = o.closed().get(10, TimeUnit.SECONDS).status();
        assertThat(end.getCode()).as("a gRPC status in trailers, not a reset stream").isEqualTo(
                Status.Code.DEADLINE_EXCEEDED);
        assertThat(end.getDescription()).contains("deadline");
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0)).isLessThan(5_000);
        assertThat(watchCancelled.await(5, TimeUnit.SECONDS)).as("the backend saw its stream cancelled").isTrue();
        com.fasterxml.jackson.databind.JsonNode line = AccessLogLines.of(dir.resolve("access.log"), "/Watch");
        assertThat(line.get("streamed").asBoolean()).isTrue();
        assertThat(line.get("completed").asBoolean()).as("grpc-status 4 at the end").isFalse();
        assertThat(line.get("duration_ms").asDouble()).as("the time to the end, past the route's 1 s")
                .isGreaterThanOrEqualTo(1000);
    }

    @Test
    void aClientThatReadsNothingHoldsTheBackendBackThroughTheRelay() throws Exception {
        // the client asks for one message and then for none: its window fills, then the gateway's pipe, then the
        // gateway's window towards the backend, and the backend's stream stops being ready. Had the relay kept
        // taking what the backend sends, the backend would have sent all 300 (19 MiB)
        // the 16 KiB window: 19 MiB take grpc-java some 5,000 WINDOW_UPDATEs a second, each of half its window; the
        // door bounds small increments (http2.window_updates_per_second, 1,000), not these
        Open o = open(channel, FLOOD, 1);
        assertThat(o.messages().poll(5, TimeUnit.SECONDS)).isNotNull();
        org.awaitility.Awaitility.await().pollDelay(java.time.Duration.ofMillis(200))
                .atMost(java.time.Duration.ofSeconds(5)).until(new java.util.concurrent.Callable<Integer>() {
                    int last = -1;

                    @Override
                    public Integer call() {
                        int now = flooded.get();
                        int was = last;
                        last = now;
                        return now == was ? now : -1; // unchanged over a poll: the backend is held back
                    }
                }, n -> n >= 0);
        int held = flooded.get();
        assertThat(held).as("messages the backend could send while the client read one").isLessThan(60);
        o.call().request(FLOOD_MESSAGES); // and now all of them, through every window again
        assertThat(o.closed().get(20, TimeUnit.SECONDS).status().getCode()).isEqualTo(Status.Code.OK);
        assertThat(o.messages()).hasSize(FLOOD_MESSAGES - 1);
    }

    @Test
    void aBidirectionalStreamRelaysEachMessageBothWaysAsItComes() throws Exception {
        // each echo comes back before the client sends its next message: the request streams to the backend, and
        // the answer to the client, at once
        chat(channel, 0);
    }

    /**
     * Three messages on a bidirectional stream, each echoed before the next is sent, {@code pauseMillis} apart after
     * each echo; then the client's end, and the call's OK.
     */
    private static void chat(io.grpc.Channel channel, long pauseMillis) throws Exception {
        Open o = start(channel, CHAT, 10, 20);
        for (String m : List.of("one", "two", "three")) {
            o.call().sendMessage(utf8(m));
            byte[] echo = o.messages().poll(5, TimeUnit.SECONDS);
            assertThat(echo).as("the echo of '%s' (%d ms after the one before) while the stream is open both ways", m,
                    pauseMillis).isNotNull();
            assertThat(new String(echo, StandardCharsets.UTF_8)).isEqualTo("echo:" + m);
            Thread.sleep(pauseMillis);
        }
        o.call().halfClose();
        assertThat(o.closed().get(5, TimeUnit.SECONDS).status().getCode()).isEqualTo(Status.Code.OK);
    }

    @Test
    void aBidirectionalStreamMayBeQuietLongerThanTheServersBodyTimeout() throws Exception {
        // 2.5 s between messages, over the gateway's body_timeout (1 s, this config) and, over the whole stream, under
        // its min_body_rate: a gRPC stream from HTTP/2 to h2c is bounded by the route's timeout (30 s) alone
        chat(channel, 2500);
    }

    @Test
    void aClientStreamRelaysAndItsAnswerComesAtItsEnd() throws Exception {
        java.util.concurrent.CompletableFuture<byte[]> answer = new java.util.concurrent.CompletableFuture<>();
        io.grpc.stub.StreamObserver<byte[]> out = io.grpc.stub.ClientCalls.asyncClientStreamingCall(
                channel.newCall(SUM, CallOptions.DEFAULT.withDeadlineAfter(20, TimeUnit.SECONDS)),
                new io.grpc.stub.StreamObserver<>() {
                    @Override
                    public void onNext(byte[] value) {
                        answer.complete(value);
                    }

                    @Override
                    public void onError(Throwable t) {
                        answer.completeExceptionally(t);
                    }

                    @Override
                    public void onCompleted() {
                    }
                });
        for (int i = 0; i < 640; i++) {
            // 2.5 MiB in all: past the route's max_body (1 MiB, which bounds held bodies) and every window on the way
            out.onNext(new byte[4096]);
        }
        out.onCompleted();
        assertThat(new String(answer.get(10, TimeUnit.SECONDS), StandardCharsets.UTF_8)).isEqualTo("640 messages");
    }

    @Test
    void anUploadStillGoingAtTheRoutesDeadlineNeverReachesTheBackendAsWhole() throws Exception {
        // the gateway's call ends at the route's deadline while the client is still uploading: the part sent must not
        // be closed with END_STREAM (the backend would take it for the whole upload); the backend sees a cancel
        Open o = start(channel, SUM_QUICK, 1, 20);
        for (int i = 0; i < 10; i++) {
            o.call().sendMessage(new byte[4096]);
        }
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(5)).until(() -> sumReceived.get() >= 10);
        assertThat(o.closed().get(10, TimeUnit.SECONDS).status().getCode()).isNotEqualTo(Status.Code.OK);
        assertThat(sumCancelled.await(3, TimeUnit.SECONDS)).as("the backend saw its call cancelled").isTrue();
        assertThat(sumCompleted.get()).as("uploads the backend saw end whole").isZero();
        o.call().cancel("done", null);
    }

    @Test
    void anUploadTheClientCancelsNeverReachesTheBackendAsWhole() throws Exception {
        // the client sends part of a client stream and cancels it: the backend must see its call cancelled, and never
        // an end of the stream that would make the part read as the whole upload
        Open o = start(channel, SUM, 1, 20);
        for (int i = 0; i < 50; i++) {
            o.call().sendMessage(new byte[4096]);
        }
        // part of it has reached the backend through the relay: the upload is under way, not yet whole
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(5)).until(() -> sumReceived.get() >= 10);
        o.call().cancel("the upload is abandoned", null);
        assertThat(sumCancelled.await(3, TimeUnit.SECONDS)).as("the backend saw its call cancelled").isTrue();
        assertThat(sumCompleted.get()).as("uploads the backend saw end whole").isZero();
    }

    @Test
    void aClientThatCancelsABidirectionalStreamCancelsTheBackendsStream() throws Exception {
        Open o = start(channel, CHAT, 10, 20);
        o.call().sendMessage(utf8("hello"));
        assertThat(o.messages().poll(5, TimeUnit.SECONDS)).isNotNull();
        o.call().cancel("the test is done with it", null);
        assertThat(chatCancelled.await(3, TimeUnit.SECONDS)).as("the backend saw its stream cancelled").isTrue();
    }

    /** A call of {@code m} with one request message, to its end (a 5 s deadline). */
    private Closed call(MethodDescriptor<byte[], byte[]> m, byte[] request) throws Exception {
        Open o = start(channel, m, 1000, 5);
        o.call().sendMessage(request);
        o.call().halfClose();
        return o.closed().get(10, TimeUnit.SECONDS);
    }

    @Test
    void trailersAfterHeadersWithNoMessageComeBack() throws Exception {
        // HEADERS, then trailers, no DATA: the answer's empty body still ends with its trailers, not with the head
        Closed c = call(BARE, utf8("10"));
        assertThat(c.status().getCode()).isEqualTo(Status.Code.OK);
        assertThat(c.messages()).isEmpty();
        assertThat(c.trailers().get(DETAIL)).isEqualTo("d".repeat(10));
    }

    @Test
    void trailersLargerThanJettysDefaultPassAndTooLargeOnesFailOneCallNotTheConnection() throws Exception {
        // 6,000 bytes: over the 4 KiB an HPACK encoder allows by default, under the 8 KiB grpc-java's client takes
        Closed big = call(BARE, utf8("6000"));
        assertThat(big.status().getCode()).isEqualTo(Status.Code.OK);
        assertThat(big.trailers().get(DETAIL)).hasSize(6000);

        // 20,000 bytes: over what the client says it takes (SETTINGS_MAX_HEADER_LIST_SIZE). Either the answer streams
        // (its head went out before its trailers came: the gateway resets that stream alone), or its trailers came
        // with its head (the whole answer is checked first: a 500 on that stream). Either way the connection serves
        // on: a call in flight beside it on the same connection ends well
        var beside = ClientCalls.futureUnaryCall(channel.newCall(NAP,
                CallOptions.DEFAULT.withDeadlineAfter(5, TimeUnit.SECONDS)), utf8("beside"));
        Closed tooBig = call(BARE, utf8("20000"));
        assertThat(tooBig.status().getCode()).isNotEqualTo(Status.Code.OK);
        assertThat(tooBig.status().getDescription()).containsAnyOf("INTERNAL_ERROR", "HTTP status code 500");
        assertThat(new String(beside.get(10, TimeUnit.SECONDS), StandardCharsets.UTF_8)).isEqualTo("beside");
    }

    @Test
    void aBidirectionalStreamToAnHttpsBackendMayBeQuietLongerThanTheServersBodyTimeout() throws Exception {
        // as above, to a destination that chooses h2 by ALPN: max_body bounds it (it is not h2c), time does not
        dev.weft.devtools.TestCerts certs = dev.weft.devtools.TestCerts.selfSigned(dir.resolve("tls"));
        Server tls = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .sslContext(io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts.forServer(certs.cert().toFile(),
                        certs.key().toFile()).build())
                .executor(java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor())
                .addService(streams(this)).build().start();
        Gateway other = null;
        ManagedChannel ch = null;
        try {
            String target = "https://127.0.0.1:" + tls.getPort();
            Path f = dir.resolve("tls.yaml");
            Files.writeString(f, """
                    limits: { body_timeout: 1s }
                    destinations:
                      "TARGET": { ca: tls/cert.pem }
                    routes:
                      - prefix: /weft.test.Streams/Chat
                        proxy: "TARGET/weft.test.Streams/Chat"
                        timeout: 30s
                    """.replace("TARGET", target));
            other = Gateway.start(GatewayConfigLoader.load(f), new InetSocketAddress("127.0.0.1", 0), null, l -> { });
            ch = NettyChannelBuilder.forAddress("127.0.0.1", other.address().getPort()).usePlaintext().build();
            chat(ch, 2500);
        } finally {
            if (ch != null) {
                ch.shutdownNow();
            }
            if (other != null) {
                other.close();
            }
            tls.shutdownNow();
        }
    }

    @Test
    void h2cToAServerWithoutHttp2SaysSo() throws Exception {
        com.sun.net.httpserver.HttpServer plain = com.sun.net.httpserver.HttpServer.create(
                new InetSocketAddress("127.0.0.1", 0), 0);
        plain.createContext("/", ex -> {
            ex.sendResponseHeaders(204, -1);
            ex.close();
        });
        plain.start();
        Gateway other = null;
        try {
            String target = "http://127.0.0.1:" + plain.getAddress().getPort();
            Path f = dir.resolve("plain.yaml");
            Files.writeString(f, """
                    destinations:
                      "TARGET": { http2: h2c }
                    routes:
                      - prefix: /p/
                        proxy: "TARGET/"
                    """.replace("TARGET", target));
            other = Gateway.start(GatewayConfigLoader.load(f), new InetSocketAddress("127.0.0.1", 0), null, l -> { });
            java.net.http.HttpResponse<String> r = java.net.http.HttpClient.newHttpClient().send(
                    java.net.http.HttpRequest.newBuilder(java.net.URI.create(other.url() + "/p/x")).build(),
                    java.net.http.HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).isEqualTo(502);
            assertThat(r.body()).contains("protocol-error").contains("answered in HTTP/1.x")
                    .contains("does not speak HTTP/2 with prior knowledge (http2: h2c)");
        } finally {
            if (other != null) {
                other.close();
            }
            plain.stop(0);
        }
    }

    @Test
    void aFailedCallKeepsItsStatusDescriptionAndTrailingMetadata() {
        // grpc-java answers a failure before any message "Trailers-Only": one HEADERS frame that ends the stream
        assertThatThrownBy(() -> unary(FAIL, utf8("dune"), null))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND);
                    assertThat(e.getStatus().getDescription()).isEqualTo("no such book: dune");
                    assertThat(e.getTrailers().get(DETAIL)).isEqualTo("shelf 7");
                });
        com.fasterxml.jackson.databind.JsonNode line = AccessLogLines.of(dir.resolve("access.log"), "/Fail");
        assertThat(line.get("status").asInt()).as("gRPC's failures are HTTP 200s").isEqualTo(200);
        assertThat(line.get("completed").asBoolean()).as("grpc-status 5 in the Trailers-Only head").isFalse();
    }

    @Test
    void aServerStreamArrivesWholeAndItsFinalStatusAfterIt() {
        List<String> got = new ArrayList<>();
        ClientCalls.blockingServerStreamingCall(channel, COUNT, CallOptions.DEFAULT.withDeadlineAfter(5, TimeUnit.SECONDS),
                utf8("50")).forEachRemaining(b -> got.add(new String(b, StandardCharsets.UTF_8)));
        assertThat(got).hasSize(50).startsWith("n1", "n2").endsWith("n50");

        List<String> partial = new ArrayList<>();
        var it = ClientCalls.blockingServerStreamingCall(channel, COUNT,
                CallOptions.DEFAULT.withDeadlineAfter(5, TimeUnit.SECONDS), utf8("3"));
        assertThatThrownBy(() -> it.forEachRemaining(b -> partial.add(new String(b, StandardCharsets.UTF_8))))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
                    assertThat(e.getStatus().getDescription()).isEqualTo("stopped after 3");
                    assertThat(e.getTrailers().get(DETAIL)).as("trailing metadata after DATA").isEqualTo("quota 3");
                });
        assertThat(partial).containsExactly("n1", "n2", "n3");
    }

    @Test
    void aBackendSlowerThanTheRoutesDeadlineIsAnHttpErrorTheClientSees() {
        // the route's 1 s deadline passes first: the gateway answers 504 (its JSON), which grpc-java reads as
        // UNAVAILABLE with the HTTP status in the description (gRPC over HTTP: status 504 -> UNAVAILABLE)
        long t0 = System.nanoTime();
        assertThatThrownBy(() -> unary(SLOW, utf8("x"), null))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
                    assertThat(e.getStatus().getDescription()).contains("504");
                });
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0)).as("ended by the route's deadline, not the"
                + " backend's 3 s").isLessThan(2_900);
    }
}
