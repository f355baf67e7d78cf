package dev.weft.server;

import dev.weft.http.Http1Writer;
import dev.weft.http.HttpCodecException;
import dev.weft.http.Status;
import dev.weft.http.RequestHead;

import dev.weft.os.Descriptors;
import dev.weft.core.HostPort;
import dev.weft.server.admission.Admission;
import dev.weft.server.admission.FixedAdmission;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An HTTP/1.1 keep-alive server: one virtual thread per connection reads requests; the handler runs on
 * that virtual thread ({@link ExecutorModel.Virtual}) or on a fixed pool of platform threads
 * ({@link ExecutorModel.Platform}). When the admission asks for it ({@link Admission#door()}; plain HTTP and
 * virtual threads only), the {@link Door}'s selector thread reads the requests instead, answers the admission's
 * refusals itself, and runs each admitted request on a virtual thread of its own. Every limit of {@link ServerLimits} is enforced: 431, 413, and
 * 503 with Retry-After when the {@link dev.weft.server.admission.Admission} refuses a request (by default
 * {@link FixedAdmission}: {@code maxConcurrent} requests in flight for longer than {@code maxWait}).
 */
public final class HttpServer implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger("weft.server");

    /**
     * Told of each answer the server gives without running the handler, so that it can be logged like the
     * others: a 503 of the admission ({@code by} = {@link RefusedBy#ADMISSION}) or of a full handler queue
     * ({@link RefusedBy#HANDLER_QUEUE}), and the error answer to a request that could not be read
     * ({@link RefusedBy#PARSER}; the request is then null). Called on the connection's thread before the answer is
     * written; it must not block.
     */
    @FunctionalInterface
    public interface Refusals {
        void refused(ServerRequest request, InetSocketAddress remote, ServerResponse answer, RefusedBy by);
    }

    /** What answered a request without the handler. */
    public enum RefusedBy {
        /** The admission refused it: 503 with Retry-After. */
        ADMISSION,
        /** The platform executor's queue was full: 503. */
        HANDLER_QUEUE,
        /** It could not be read: the 4xx of the codec. */
        PARSER;

        /** As logs write it: {@code admission}, {@code handler-queue}, {@code parser}. */
        public String label() {
            return name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
        }

        @Override
        public String toString() {
            return label();
        }
    }

    private final ServerLimits limits;
    private final HttpHandler handler;
    private final ExecutorModel model;
    private final ThreadPoolExecutor pool;
    private final Admission admission;
    /** Null: nobody is told. */
    private Refusals refusals;
    private ConnectionListener listener;
    /** Null: every connection is read on its own virtual thread. */
    private Door door;
    /** Null: plain HTTP. */
    private ServerTls tls;
    /** Null: HTTP/1.1 only. */
    private dev.weft.server.http2.Http2Front http2;
    /** {@link #http2} where a plain listener takes {@code Upgrade: h2c} ({@code http2.upgrade}), else null. */
    private dev.weft.server.http2.Http2Front h2cUpgrades;
    private final AtomicInteger inFlight = new AtomicInteger();
    private final java.util.concurrent.atomic.AtomicLong headerTimeouts = new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.AtomicLong bodyTimeouts = new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.AtomicLong writeTimeouts = new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.AtomicLong descriptorSheds = new java.util.concurrent.atomic.AtomicLong();
    private volatile boolean draining;
    private volatile boolean closed;

    private java.util.function.Predicate<dev.weft.http.RequestHead> streamedBodies = head -> false;
    private java.util.function.Predicate<dev.weft.http.RequestHead> expectedBodies = head -> true;
    /** What an HTTP/2 connection hands its requests to. */
    private final dev.weft.server.http2.Http2ServerConnection.Requests h2Requests =
            new dev.weft.server.http2.Http2ServerConnection.Requests() {
                @Override
                public ServerResponse handle(ServerRequest request) {
                    return admitAndHandle(request);
                }

                @Override
                public boolean streamsBody(dev.weft.http.RequestHead head) {
                    return streamedBodies.test(head);
                }
            };

    private HttpServer(ServerLimits limits, ExecutorModel model, HttpHandler handler, Admission admission) {
        this.limits = limits;
        this.model = model;
        this.handler = handler;
        this.admission = admission;
        if (model instanceof ExecutorModel.Platform p) {
            AtomicInteger n = new AtomicInteger();
            this.pool = new ThreadPoolExecutor(p.threads(), p.threads(), 60, TimeUnit.SECONDS,
                    new ArrayBlockingQueue<>(limits.maxConcurrent()), r -> {
                        Thread t = new Thread(r, "weft-handler-" + n.incrementAndGet());
                        t.setDaemon(true);
                        return t;
                    });
        } else {
            this.pool = null;
        }
    }

    /**
     * A server that runs {@code handler}, to be configured by name and started: by default on an ephemeral port of
     * the loopback address, with {@link ServerLimits#DEFAULT}, on virtual threads, plain HTTP, the descriptor log to
     * the System.Logger and {@link FixedAdmission} ({@code maxConcurrent} and {@code maxWait} of its limits).
     */
    public static Builder builder(HttpHandler handler) {
        return new Builder(handler);
    }

    /** What a server listens on, its limits, executor, TLS, admission and who hears of its refusals. */
    public static final class Builder {
        private final HttpHandler handler;
        private List<InetSocketAddress> listen = List.of(new InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), 0));
        private ServerLimits limits = ServerLimits.DEFAULT;
        private ExecutorModel executor = new ExecutorModel.Virtual();
        private ServerTls tls;
        private java.util.function.Consumer<String> log;
        private Admission admission;
        private Refusals refusals;
        private dev.weft.server.http2.Http2Limits http2 = dev.weft.server.http2.Http2Limits.DEFAULT;
        private java.util.function.Predicate<dev.weft.http.RequestHead> streamedBodies = head -> false;
        private java.util.function.Predicate<dev.weft.http.RequestHead> expectedBodies = head -> true;

        private Builder(HttpHandler handler) {
            this.handler = java.util.Objects.requireNonNull(handler, "handler");
        }

        /** The addresses to bind, each a listener of its own (at least one). */
        public Builder listen(List<InetSocketAddress> addresses) {
            if (addresses.isEmpty()) {
                throw new IllegalArgumentException("a server listens on at least one address");
            }
            this.listen = List.copyOf(addresses);
            return this;
        }

        /** One address to bind. Default: an ephemeral port of the loopback address. */
        public Builder listen(InetSocketAddress address) {
            return listen(List.of(address));
        }

        /**
         * Which requests with a body the handler gets before their body has come, reading it as it comes
         * ({@link ServerRequest#bodyStream()}), over HTTP/2 or HTTP/1.1 (not an {@code Upgrade: h2c} one): default
         * none (every handler gets the whole body, bounded).
         */
        public Builder streamedBodies(java.util.function.Predicate<dev.weft.http.RequestHead> which) {
            this.streamedBodies = java.util.Objects.requireNonNull(which);
            return this;
        }

        /**
         * Which HTTP/1.1 requests that say {@code Expect: 100-continue} the handler wants the body of, from the head
         * alone: those get {@code 100 Continue} as their body is first read; the others are handed over with their
         * body unread ({@link ServerRequest#bodyStream()}), and the answer closes the connection (the handler answers
         * from the head: a 404, a 413). Default all.
         */
        public Builder expectedBodies(java.util.function.Predicate<dev.weft.http.RequestHead> which) {
            this.expectedBodies = java.util.Objects.requireNonNull(which);
            return this;
        }

        /** Default {@link ServerLimits#DEFAULT} (its Javadoc gives each limit's default). */
        public Builder limits(ServerLimits limits) {
            this.limits = java.util.Objects.requireNonNull(limits, "limits");
            return this;
        }

        /** Where the handler runs. Default {@link ExecutorModel.Virtual}: the connection's (or stream's) virtual thread. */
        public Builder executor(ExecutorModel executor) {
            this.executor = java.util.Objects.requireNonNull(executor, "executor");
            return this;
        }

        /** HTTPS: every connection does its TLS handshake on its own virtual thread. Null: plain HTTP. */
        public Builder tls(ServerTls tls) {
            this.tls = tls;
            return this;
        }

        /** Where "out of file descriptors" goes (at most once a second). Null: the System.Logger. */
        public Builder log(java.util.function.Consumer<String> log) {
            this.log = log;
            return this;
        }

        /** The front door's admission. Null: {@link FixedAdmission} of the limits' maxConcurrent and maxWait. */
        public Builder admission(Admission admission) {
            this.admission = admission;
            return this;
        }

        /** Who is told of the answers given without the handler. Null: nobody. */
        public Builder refusals(Refusals refusals) {
            this.refusals = refusals;
            return this;
        }

        /**
         * HTTP/2: h2c with prior knowledge on plain listeners, h2 by ALPN with TLS, {@code Upgrade: h2c} where its
         * limits ask. Default {@link dev.weft.server.http2.Http2Limits#DEFAULT} (on);
         * {@link dev.weft.server.http2.Http2Limits#DISABLED}: HTTP/1.1 only.
         */
        public Builder http2(dev.weft.server.http2.Http2Limits http2) {
            this.http2 = java.util.Objects.requireNonNull(http2, "http2");
            return this;
        }

        /**
         * Binds every address and starts accepting.
         *
         * @throws java.net.BindException naming the address when one cannot be bound (nothing stays open then)
         */
        public HttpServer start() throws IOException {
            Admission a = admission != null ? admission : new FixedAdmission(limits.maxConcurrent(), limits.maxWait());
            HttpServer s = new HttpServer(limits, executor, handler, a);
            s.streamedBodies = streamedBodies;
            s.expectedBodies = expectedBodies;
            s.tls = tls;
            s.http2 = http2.enabled() ? new dev.weft.server.http2.Http2Front(http2) : null;
            s.h2cUpgrades = s.http2 != null && tls == null && http2.upgrade() ? s.http2 : null;
            s.refusals = refusals;
            // an h2c-only listener answers no HTTP/1.1, and the door reads HTTP/1.1 heads: every connection goes to HTTP/2
            boolean h2cOnly = s.http2 != null && tls == null && http2.h2cOnly();
            boolean door = tls == null && executor instanceof ExecutorModel.Virtual && a.door() && !h2cOnly;
            if (door) {
                s.door = new Door(a, s.new DoorRequests(), limits.maxHeadBytes(), limits.idleTimeout(),
                        () -> !s.draining && !s.closed);
                if (s.h2cUpgrades != null) {
                    s.door.handBackIf(dev.weft.server.http2.Http2Front::asksForH2c);
                }
            }
            try {
                s.listener = HttpServer.listen(s, listen, limits, log, door);
            } catch (IOException | RuntimeException e) {
                if (s.door != null) {
                    s.door.close();
                }
                throw e;
            }
            return s;
        }
    }

    private static ConnectionListener listen(HttpServer s, List<InetSocketAddress> listen, ServerLimits limits,
                                             java.util.function.Consumer<String> log, boolean door)
            throws IOException {
        return ConnectionListener.builder("weft", s::serve).listen(listen).maxConnections(limits.maxConnections())
                .idleTimeout(limits.idleTimeout()).headerTimeout(limits.headerTimeout())
                .adopter(door ? s.door::accepted : null).events(new ConnectionListener.Events() {
                    @Override
                    public void headerTimeout() {
                        s.headerTimeouts.incrementAndGet();
                    }

                    @Override
                    public void bodyTimeout() {
                        s.bodyTimeouts.incrementAndGet();
                    }

                    @Override
                    public void writeTimeout() {
                        s.writeTimeouts.incrementAndGet();
                    }

                    @Override
                    public void shedNoDescriptors() {
                        s.descriptorSheds.incrementAndGet();
                    }

                    @Override
                    public void outOfDescriptors(long shed, int open, String error) {
                        String line = "out of file descriptors (" + error + "): limit " + Descriptors.limit()
                                + ", open " + Descriptors.open() + ", " + open + " connections held; " + shed
                                + " connections closed at accept in the last second (" + s.descriptorSheds.get()
                                + " in all)";
                        if (log != null) {
                            log.accept(line);
                        } else {
                            LOG.log(System.Logger.Level.WARNING, line);
                        }
                    }
                }).start();
    }

    private void serve(Socket socket, ConnectionListener.Activity activity) throws IOException {
        if (tls != null) {
            activity.bytesIn(); // the handshake is the head's start: header_timeout bounds it as a whole, not per read
            socket = tls.handshake(socket, limits.headerTimeout(), http2 != null); // closing the raw socket closes this one too
            if (socket == null) {
                return;
            }
            if (http2 != null && "h2".equals(((javax.net.ssl.SSLSocket) socket).getApplicationProtocol())) {
                http2.serve(socket, socket.getInputStream(), false, activity, limits, h2Requests);
                return;
            }
        }
        InputStream raw = socket.getInputStream();
        boolean fresh = true;
        if (door != null && socket.getChannel() != null) {
            Door.HandedBack back = door.serve(socket.getChannel());
            if (back == null) {
                return; // done: the listener closes the socket
            }
            if (back.streamed() != null) { // a streamed answer the door leaves to this thread; the connection ends with it
                OutputStream o;
                try {
                    socket.getChannel().configureBlocking(true);
                    o = socket.getOutputStream();
                } catch (IOException | RuntimeException e) {
                    back.streamed().stream().cancel(); // closed meanwhile: its backend call stops, its place comes back
                    throw e;
                }
                writeStreamed(socket, o, back.streamed(), back.trailers(), activity, null);
                return;
            }
            // handed back (a body, or input the door leaves to this path): read on here, starting with its bytes
            socket.getChannel().configureBlocking(true);
            raw = new java.io.SequenceInputStream(new java.io.ByteArrayInputStream(back.read()), raw);
            fresh = back.fresh();
        }
        if (http2 != null && tls == null && fresh) { // the preface only as a connection's first bytes (RFC 9113 3.4)
            raw = http2.h2cOrHttp1(socket, raw, activity, limits, h2Requests);
            if (raw == null) {
                return; // it was h2c, and is over
            }
        }
        serveHttp1(socket, raw, activity);
    }

    /** Serves HTTP/1.1 requests from {@code raw} until the connection ends (or switches to h2c by an upgrade). */
    private void serveHttp1(Socket socket, InputStream raw, ConnectionListener.Activity activity) throws IOException {
        Http1Reader reader = new Http1Reader(new java.io.FilterInputStream(raw) {
            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                int n = in.read(b, off, len);
                if (n > 0) {
                    activity.bytesIn(); // the first byte of a head starts its deadline (header_timeout)
                }
                return n;
            }
        }, limits.maxHeadBytes());
        OutputStream out = socket.getOutputStream();
        InetSocketAddress remote = (InetSocketAddress) socket.getRemoteSocketAddress();
        while (!closed) {
            activity.idle();
            if (reader.hasBuffered()) {
                activity.bytesIn(); // a pipelined head has begun in the buffer: its deadline runs
            }
            dev.weft.http.Http1Request read;
            byte[] body;
            Http1BodyStream stream = null;
            try {
                read = reader.readHead();
                if (read == null) {
                    return;
                }
                activity.busy(); // the head is in: its deadline no longer applies
                dev.weft.http.Framing framing = read.framing();
                boolean hasBody = framing.kind() != dev.weft.http.Framing.Kind.NONE;
                if (hasBody && framing.kind() == dev.weft.http.Framing.Kind.LENGTH
                        && framing.length() > limits.maxBodyBytes()) {
                    throw new HttpCodecException.BodyTooLarge("a body of " + framing.length()
                            + " bytes is over the limit of " + limits.maxBodyBytes()); // and no 100 Continue
                }
                // a client that waits for a 100 before it sends its body gets it as the body is first read (RFC 9110
                // section 10.1.1), not after its own wait (curl waits 1 s before an upload over 1 MiB)
                byte[] interim = hasBody && !read.http10() && read.head().headers().lists("expect", "100-continue")
                        ? CONTINUE : null;
                boolean upgrade = h2cUpgrades != null && h2cUpgrades.upgrades(read);
                // a body the handler will not want (expectedBodies says so from the head: a 404, a 413) is not asked
                // for: it is handed over unread, and the answer closes the connection
                boolean unwanted = interim != null && !upgrade && !expectedBodies.test(read.head());
                if (hasBody && !upgrade && (unwanted || streamedBodies.test(read.head()))) {
                    // the handler reads it as it comes (a relay's upload); each run within body_timeout
                    stream = Http1BodyStream.of(reader, framing, activity, limits.bodyTimeout(), limits.maxBodyBytes(),
                            interim, out, limits.idleTimeout(), limits.minBodyRate());
                    body = EMPTY_BODY;
                } else {
                    if (hasBody) {
                        activity.body(limits.bodyTimeout()); // a body stopped half-way does not hold the connection
                        if (interim != null) {
                            out.write(interim);
                            out.flush();
                        }
                    }
                    body = reader.readBody(read, limits.maxBodyBytes(), true).bytes();
                }
            } catch (HttpCodecException e) {
                ServerResponse answer = error(e.status(), e.getMessage());
                tell(null, remote, answer, RefusedBy.PARSER);
                activity.busy();
                activity.writing(limits.idleTimeout());
                write(out, answer, false);
                lingeringClose(socket);
                return;
            } finally {
                activity.busy();
            }
            RequestHead head = read.head();
            if (h2cUpgrades != null && h2cUpgrades.upgrades(read)) { // Upgrade: h2c, where http2.upgrade asks for it
                activity.writing(limits.idleTimeout());
                h2cUpgrades.serveUpgraded(socket, reader.rest(), head, body, activity, limits, h2Requests);
                return;
            }
            ServerRequest request = new ServerRequest(head, body, remote, System.nanoTime(), false, stream,
                    read.http10());
            ServerResponse response = admitAndHandle(request);
            if (streamsOverHttp1(request, response)) {
                writeStreamed(socket, out, response, head.headers().lists("te", "trailers"), activity, stream);
                return;
            }
            if (stream != null && !stream.ended()) {
                answerBeforeBody(socket, out, response, stream, activity);
                return;
            }
            boolean keepAlive = read.keepAlive() && !draining && !closed;
            activity.writing(limits.idleTimeout()); // a peer that does not take its answer does not hold the connection
            write(out, response, keepAlive);
            if (!keepAlive) {
                return;
            }
        }
    }

    private static final byte[] EMPTY_BODY = new byte[0];
    private static final byte[] CONTINUE =
            "HTTP/1.1 100 Continue\r\n\r\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

    /**
     * The answer to a request whose streamed body did not come to its end (the backend answered first, or the body
     * failed): the rest of the body cannot be told from a next request, so the answer says {@code Connection: close},
     * and the connection closes after a lingering read of what the client still sends (as after a 400), once the run
     * being read, if any, is in (at most a second; else it closes at once).
     */
    private void answerBeforeBody(Socket socket, OutputStream out, ServerResponse response, Http1BodyStream stream,
                                  ConnectionListener.Activity activity) {
        boolean own = false;
        try {
            stream.cancel(); // from here the connection's deadlines are this thread's
            activity.writing(limits.idleTimeout());
            write(out, response, false);
            own = stream.settle(1000);
            if (own) {
                lingeringClose(socket);
            }
        } catch (IOException e) {
            // the client went away: nothing to tell it
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            if (own) {
                stream.release();
            }
        }
    }

    /**
     * After an answer to a request that could not be read: stop sending and read what the peer still sends
     * (at most 256 KiB, for at most a second) before the socket is closed. Closing with unread bytes makes
     * the kernel send a reset, which can destroy the error answer before the peer reads it.
     */
    public static void lingeringClose(Socket socket) {
        if (socket instanceof javax.net.ssl.SSLSocket) {
            return; // no half-close over TLS: the error answer has been flushed, close now
        }
        try {
            socket.shutdownOutput();
            socket.setSoTimeout(1000);
            InputStream in = socket.getInputStream();
            byte[] sink = new byte[4096];
            long left = 256 * 1024;
            long until = System.nanoTime() + 1_000_000_000L;
            while (left > 0 && System.nanoTime() - until < 0) {
                int n = in.read(sink);
                if (n < 0) {
                    return;
                }
                left -= n;
            }
        } catch (IOException ignored) {
            // the peer went away or the time is up: close now
        }
    }

    /** What the {@link Door} asks of this server. */
    private final class DoorRequests implements Door.Requests {
        @Override
        public ServerResponse refused(ServerRequest r, Admission.Refused refusal) {
            return refusal(r, refusal);
        }

        @Override
        public ServerResponse handle(ServerRequest r, Admission.Admitted ticket) {
            return ticket == null ? admitAndHandle(r) : handleAdmitted(r, ticket);
        }
    }

    private ServerResponse refusal(ServerRequest r, Admission.Refused refused) {
        return tell(r, r.remote(), error(503, refused.why().message()).withHeader("Retry-After", "1"),
                RefusedBy.ADMISSION);
    }

    private ServerResponse admitAndHandle(ServerRequest r) {
        return switch (admission.enter(r)) {
            case Admission.Admitted admitted -> handleAdmitted(r, admitted);
            case Admission.Refused refused -> refusal(r, refused);
        };
    }

    private ServerResponse handleAdmitted(ServerRequest r, Admission.Admitted ticket) {
        inFlight.incrementAndGet();
        boolean[] handedOn = {false};
        try {
            if (pool == null) {
                return holdWhileStreamed(handler.handle(r), ticket, handedOn);
            }
            Future<ServerResponse> f;
            // 1: the handler returned first; 2: this thread gave up first (interrupted). Whichever comes second
            // cancels a streamed answer nobody will write, or its backend call would run to its deadline
            java.util.concurrent.atomic.AtomicInteger handshake = new java.util.concurrent.atomic.AtomicInteger();
            java.util.concurrent.atomic.AtomicReference<ServerResponse> returned =
                    new java.util.concurrent.atomic.AtomicReference<>();
            try {
                f = pool.submit(() -> {
                    ServerResponse x = handler.handle(r);
                    returned.set(x);
                    if (!handshake.compareAndSet(0, 1)) {
                        cancelStream(x);
                    }
                    return x;
                });
            } catch (RejectedExecutionException full) {
                return tell(r, r.remote(), error(503, "over capacity: handler queue full").withHeader("Retry-After", "1"),
                        RefusedBy.HANDLER_QUEUE);
            }
            try {
                return holdWhileStreamed(f.get(), ticket, handedOn);
            } catch (ExecutionException e) {
                throw e.getCause() instanceof Exception ex ? ex : new RuntimeException(e.getCause());
            } catch (InterruptedException e) {
                f.cancel(true); // the handler's thread too; a streamed answer it still returns is not written
                if (!handshake.compareAndSet(0, 2)) {
                    cancelStream(returned.get());
                }
                throw e;
            }
        } catch (Exception e) {
            // an interrupted handler was cancelled (an HTTP/2 stream its client reset), not a failure worth a warning
            LOG.log(e instanceof InterruptedException ? System.Logger.Level.DEBUG : System.Logger.Level.WARNING,
                    "handler failed on " + r.method() + " " + r.path(), e);
            // the client learns the exception's kind, not its message (which may name a backend, a file, a host)
            return error(500, "internal error: the handler failed (" + e.getClass().getName()
                    + "); the server's log has the rest");
        } finally {
            if (!handedOn[0]) {
                inFlight.decrementAndGet();
                ticket.exit();
            }
        }
    }

    /** Cancels {@code r}'s stream, if it has one (an answer that will not be written). */
    private static void cancelStream(ServerResponse r) {
        if (r != null && r.stream() != null) {
            r.stream().cancel();
        }
    }

    /**
     * A streamed answer keeps its admission place and counts in flight until its body ends or is dropped: a stream
     * is work in flight, for the limits and for a drain.
     */
    private ServerResponse holdWhileStreamed(ServerResponse r, Admission.Admitted ticket, boolean[] handedOn) {
        if (r == null || r.stream() == null) {
            return r;
        }
        handedOn[0] = true;
        BodySource held = BodySource.watched(r.stream(), (whole, bytes) -> {
            inFlight.decrementAndGet();
            ticket.exit();
        });
        return new ServerResponse(r.status(), r.headers(), r.body(), r.trailers(), held);
    }

    private ServerResponse tell(ServerRequest r, InetSocketAddress remote, ServerResponse answer, RefusedBy by) {
        if (refusals != null) {
            try {
                refusals.refused(r, remote, answer, by);
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "telling of a refusal failed", e);
            }
        }
        return answer;
    }

    static ServerResponse error(int status, String message) {
        return ServerResponse.json(status, "{\"error\":" + JsonText.quote(message) + "}");
    }

    /**
     * Whether the answer {@code r} to an HTTP/1.x {@code request} is written as it comes ({@link #writeStreamed}): a
     * streamed answer to a request that can take one ({@link ServerRequest#streamable}: not HTTP/1.0, which reads no
     * chunks, not HEAD), with a status that has a body (not 204 or 304, RFC 9112 section 6.3). The others are held
     * ({@link #held}).
     */
    static boolean streamsOverHttp1(ServerRequest request, ServerResponse r) {
        return r.stream() != null && request.streamable() && r.status() != 204 && r.status() != 304;
    }

    /**
     * A streamed answer over HTTP/1.1 (docs/gateway.md, Proxy routes): its head with {@code Transfer-Encoding:
     * chunked} and {@code Connection: close}, each run as a chunk flushed as it comes, then the last chunk, with the
     * source's trailers when the client's {@code TE} lists {@code trailers} (a {@code grpc-status} other than 0 in
     * trailers the client does not take ends it without the last chunk instead). The connection closes after it: while
     * the stream runs a virtual thread reads the socket, so a client that goes away while the stream is quiet stops
     * it at once (as over HTTP/2), and what it reads is no request to answer. A source that fails part way, or a
     * client that takes nothing for {@code idle_timeout}, ends the connection without the last chunk: the client sees
     * an answer cut short, never a whole one. Waiting for the source's next run has no timeout of the server's (the
     * handler's deadline bounds it).
     */
    private void writeStreamed(Socket socket, OutputStream out, ServerResponse r, boolean trailers,
                               ConnectionListener.Activity activity, Http1BodyStream requestBody) {
        if (requestBody != null) {
            // this thread's write deadlines from here, which the body's reads must not clear (and no 100 after it)
            requestBody.untime();
        }
        BodySource source = r.stream();
        byte[] head;
        try {
            head = Http1Writer.chunkedResponseHead(Status.of(r.status()), r.headers(), false);
        } catch (IllegalArgumentException e) {
            source.cancel();
            LOG.log(System.Logger.Level.WARNING, "the handler's answer was not written (" + e.getMessage()
                    + "); answered 500");
            try {
                activity.writing(limits.idleTimeout());
                write(out, error(500, "internal error: the answer could not be written: " + e.getMessage()), false);
            } catch (IOException gone) {
                // the client went away: nothing to tell it
            }
            return;
        }
        java.util.concurrent.atomic.AtomicBoolean over = new java.util.concurrent.atomic.AtomicBoolean();
        Thread.ofVirtual().name("weft-stream-watch").start(() -> {
            if (requestBody != null) {
                try {
                    requestBody.awaitSettled(); // the request's body is read from the socket until then
                } catch (InterruptedException e) {
                    return;
                }
            }
            watchForLeaving(socket, source, over);
        });
        try {
            activity.writing(limits.idleTimeout());
            out.write(head);
            out.flush();
            byte[] run;
            while (true) {
                activity.busy(); // waiting for the source: the handler's time, not the client's
                run = source.next();
                if (run == null) {
                    break;
                }
                if (run.length > 0) {
                    activity.writing(limits.idleTimeout()); // a client that takes nothing for that long is closed
                    out.write(Http1Writer.chunk(run));
                    out.flush();
                }
            }
            String grpc = source.trailers().first("grpc-status");
            if (!trailers && grpc != null && !grpc.equals("0")) {
                // a gRPC failure in trailers the client does not take: cut short, so it is never read as whole
                LOG.log(System.Logger.Level.DEBUG, "a streamed answer ended with grpc-status " + grpc
                        + " to a client that takes no trailers: its connection is closed without the last chunk");
                return;
            }
            byte[] last = Http1Writer.lastChunk(trailers ? source.trailers() : dev.weft.http.Headers.EMPTY);
            activity.writing(limits.idleTimeout());
            out.write(last);
            out.flush();
            over.set(true);
        } catch (IllegalArgumentException e) {
            LOG.log(System.Logger.Level.WARNING, "a streamed answer's trailers were not written (" + e.getMessage()
                    + "); its connection is closed without the last chunk");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException e) {
            LOG.log(System.Logger.Level.DEBUG, "a streamed answer stopped part way: " + e);
        } finally {
            if (over.compareAndSet(false, true)) {
                source.cancel(); // after a failure: the backend call stops, its admission place comes back
            }
            if (requestBody != null) {
                requestBody.cancel(); // the connection closes: what the request still sends is not read (the watch goes)
            }
        }
    }

    /**
     * Reads {@code socket} while its streamed answer is written: the client closing or resetting it cancels the
     * stream (unless it is {@code over}). Bytes it sends meanwhile are dropped (the connection closes after the stream,
     * so they are no request); more than 64 KiB of them cancel the stream too (no client has that much to say to an
     * answer it waits for). Ends when the socket is closed.
     */
    private static void watchForLeaving(Socket socket, BodySource source,
                                        java.util.concurrent.atomic.AtomicBoolean over) {
        byte[] drop = new byte[1024];
        long left = 64 * 1024;
        try {
            InputStream in = socket.getInputStream();
            while (left > 0) {
                int n = in.read(drop);
                if (n < 0) {
                    break;
                }
                left -= n;
            }
        } catch (IOException e) {
            // reset by the client, or closed by this server once the answer was written: over either way
        }
        if (over.compareAndSet(false, true)) {
            source.cancel();
        }
    }

    private static void write(OutputStream out, ServerResponse r, boolean keepAlive) throws IOException {
        out.write(http1(r, keepAlive));
        out.flush();
    }

    /**
     * The answer's bytes on HTTP/1.1, head and body. An answer the codec refuses to write (a field name that is not
     * a token, a line break in a value, a status that is not three digits) is answered 500 instead, as on HTTP/2.
     */
    static byte[] http1(ServerResponse r, boolean keepAlive) {
        if (r.stream() != null) {
            r = held(r);
        }
        try {
            return Http1Writer.response(Status.of(r.status()), r.headers(), r.body(), keepAlive);
        } catch (IllegalArgumentException e) {
            LOG.log(System.Logger.Level.WARNING, "the handler's answer was not written (" + e.getMessage()
                    + "); answered 500");
            ServerResponse error = error(500, "internal error: the answer could not be written: " + e.getMessage());
            return Http1Writer.response(Status.INTERNAL_SERVER_ERROR, error.headers(), error.body(), keepAlive);
        }
    }

    /** The most of a streamed answer HTTP/1.1 holds to write it with Content-Length (larger: a 500). */
    static final int MAX_HELD_STREAM = 16 << 20;

    /**
     * A streamed answer read whole for HTTP/1.1, which writes it with Content-Length (its trailers are left out): at
     * most {@link #MAX_HELD_STREAM} bytes; one that fails or is longer is answered 500.
     */
    private static ServerResponse held(ServerResponse r) {
        BodySource source = r.stream();
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        try {
            byte[] run;
            while ((run = source.next()) != null) {
                if (out.size() + (long) run.length > MAX_HELD_STREAM) {
                    source.cancel();
                    return error(500, "internal error: a streamed answer over " + MAX_HELD_STREAM
                            + " bytes cannot be held for HTTP/1.1");
                }
                out.write(run, 0, run.length);
            }
        } catch (java.io.IOException e) {
            source.cancel();
            return error(500, "internal error: the answer failed part way: " + e.getMessage());
        } catch (InterruptedException e) {
            source.cancel();
            Thread.currentThread().interrupt();
            return error(500, "internal error: interrupted while reading the answer");
        }
        return new ServerResponse(r.status(), r.headers(), out.toByteArray());
    }

    public List<InetSocketAddress> addresses() {
        return listener.addresses();
    }

    /** {@code http://host:port} of the first address. */
    public String url() {
        return (tls != null ? "https://" : "http://") + HostPort.format(listener.addresses().getFirst());
    }

    public int inFlight() {
        return inFlight.get();
    }

    /** Connections closed because a request head did not arrive within {@code header_timeout}. */
    public long headerTimeouts() {
        return headerTimeouts.get();
    }

    /** Connections closed because a request body did not arrive within {@code body_timeout}. */
    public long bodyTimeouts() {
        return bodyTimeouts.get();
    }

    /** Connections closed because the peer took no more of an answer for {@code idle_timeout}. */
    public long writeTimeouts() {
        return writeTimeouts.get();
    }

    /** What HTTP/2 connections have done (null when HTTP/2 is off). */
    public dev.weft.server.http2.Http2Metrics http2Metrics() {
        return http2 == null ? null : http2.metrics();
    }

    /** Connections closed at accept because the process was out of file descriptors. */
    public long descriptorSheds() {
        return descriptorSheds.get();
    }

    public boolean draining() {
        return draining;
    }

    public ExecutorModel executorModel() {
        return model;
    }

    /**
     * Stops accepting, lets requests in flight finish for up to {@code timeout} (idle connections are
     * closed at once; busy ones after their answer), then closes everything. A request is done when its answer has
     * been written, not when its handler returned: the front door writes an answer on its own thread, as the socket
     * takes it, and closing first lost it (a client saw the connection closed with no answer).
     *
     * @return true when every request finished, its answer written, in time
     */
    public boolean drain(Duration timeout) {
        draining = true;
        if (http2 != null) {
            http2.goAwayAll(); // before idle connections are closed: each learns which of its streams were taken
        }
        listener.stopAccepting();
        long until = System.nanoTime() + timeout.toNanos();
        while ((inFlight.get() > 0 || listener.busy() > 0) && System.nanoTime() - until < 0) {
            ConnectionListener.pause(10);
        }
        boolean clean = inFlight.get() == 0 && listener.busy() == 0;
        close();
        return clean;
    }

    @Override
    public void close() {
        closed = true;
        draining = true;
        if (listener != null) {
            listener.close();
        }
        if (door != null) {
            door.close();
        }
        if (pool != null) {
            for (Runnable queuedTask : pool.shutdownNow()) {
                if (queuedTask instanceof Future<?> f) {
                    f.cancel(false); // its request's thread waits in f.get(): it answers 500 and gives its place back
                }
            }
        }
        admission.close();
    }

}
