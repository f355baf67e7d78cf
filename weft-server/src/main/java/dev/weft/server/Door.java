package dev.weft.server;

import dev.weft.os.CpuCgroup;
import dev.weft.os.ThreadNice;
import dev.weft.http.Framing;
import dev.weft.http.Http1;
import dev.weft.http.Http1Input;
import dev.weft.http.Http1Request;
import dev.weft.server.admission.Admission;
import dev.weft.server.admission.AdmissionPolicy;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.BooleanSupplier;

/**
 * The front door for plain HTTP/1.1 connections when the admission asks for it ({@link Admission#door()}): one
 * platform thread with a {@link Selector} reads every request head, asks the admission without waiting, and
 * answers a refusal itself; an admitted request runs on a virtual thread of its own, whose answer this thread
 * writes.
 *
 * <p>Why a platform thread (docs/design/door.md): when the gateway is short of CPU, a connection's
 * virtual thread waits for a carrier behind all the work already queued before it can even read a request, so
 * the 503 of a refused request took as long as that queue (a p99 of 57-137 ms at twice the load one CPU serves,
 * under 0.1 ms of it inside the gateway). The operating system runs this thread beside the carriers instead.
 *
 * <p>Only the common case is handled here: a whole head, at most {@code maxHeadBytes}, that weft-http's strict
 * codec accepts, for a request without a body. Anything else (a body, a head the codec refuses, a head too
 * large, the peer closing mid-head) hands the connection back, with every byte read so far, to the blocking
 * path of {@link HttpServer} on the connection's own virtual thread, which then keeps it: the answers to
 * hostile or unusual input are the blocking path's, byte for byte. A request that would wait in the admission's
 * queue runs on a virtual thread that waits there, and the connection stays with the door.
 *
 * <p>The connection's virtual thread stays parked in {@link #serve} while the door holds the connection, so the
 * listener's bookkeeping (connection count, idle and header timeouts, drain) is unchanged: the door tells the
 * connection's {@link ConnectionListener.Activity} what it reads, and notices a connection the listener closed.
 * The listener accepts on a platform thread and gives each new connection to the door there
 * ({@link #accepted}), so a new connection's first request does not wait for a carrier either (neither for the
 * accept loop's nor for the connection's virtual thread).
 */
final class Door implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger("weft.server");
    /** How often connections closed by someone else (the idle sweep, a drain) are looked for. */
    private static final long SWEEP_NANOS = 100_000_000L;
    /** How often the other threads' nice is looked at ({@link #unInherit}). */
    private static final long NICE_SWEEP_NANOS = 1_000_000_000L;
    private static final byte[] EMPTY = new byte[0];
    /** The nice of the first door's thread as it started (before it changed any): the process's own. */
    private static final java.util.concurrent.atomic.AtomicInteger FIRST_NICE =
            new java.util.concurrent.atomic.AtomicInteger(Integer.MIN_VALUE);
    /** The door thread's name (every server's door has the same). */
    static final String THREAD_NAME = "weft-door";

    /** What the door asks of the server. */
    interface Requests {
        /** Told of a refusal before its 503 is written (the access log); must not block. */
        ServerResponse refused(ServerRequest r, Admission.Refused refusal);

        /** Runs an admitted request ({@code ticket} non-null) or one that must wait for its place (null). */
        ServerResponse handle(ServerRequest r, Admission.Admitted ticket);
    }

    private final Selector selector;
    private final Thread thread;
    private final Admission admission;
    private final Requests requests;
    private final int maxHeadBytes;
    /** An answer the peer takes no more of for this long closes its connection (the server's idle timeout). */
    private final java.time.Duration writeTimeout;
    private final BooleanSupplier keepAlive;
    private final ConcurrentLinkedQueue<Conn> arriving = new ConcurrentLinkedQueue<>();
    /** Connections taken at accept whose virtual thread has not yet come to {@link #serve}. */
    private final java.util.concurrent.ConcurrentHashMap<SocketChannel, Conn> adopted =
            new java.util.concurrent.ConcurrentHashMap<>();
    private final ConcurrentLinkedQueue<Conn> answered = new ConcurrentLinkedQueue<>();
    /** Only the door's thread touches these two. */
    private final Set<Conn> held = new HashSet<>();
    private final List<Conn> handBack = new ArrayList<>();
    /** Connections whose request waits in the admission's queue, oldest first. */
    private final java.util.ArrayDeque<Conn> queued = new java.util.ArrayDeque<>();
    private volatile boolean closed;
    /** Heads the blocking path must read instead (an {@code Upgrade: h2c} when HTTP/2 upgrades are on), or null. */
    private volatile java.util.function.Predicate<Http1Request> handBackIf;
    /** Written by the door's thread only ({@link Admission.DoorLoad}). */
    private volatile long requestsRead;
    private volatile long refusals;
    /** Whether the admission's null in place of a decision was reported (the door's thread only): once per door. */
    private boolean warnedNullDecision;
    /** The nice value the door's thread runs at, once it has started ({@link #prioritize}). */
    private volatile int nice = Integer.MIN_VALUE;
    /** How many steps the door runs ahead of the other threads, once it has started ({@link #prioritize}). */
    private volatile int lead = Integer.MIN_VALUE;
    /** The process's nice before the door raised its own or lowered the others, or MIN_VALUE when it did neither. */
    private int processNice = Integer.MIN_VALUE;
    /** The nice the door lowered the other threads to, or MIN_VALUE when it did not. */
    private int lowered = Integer.MIN_VALUE;

    /** One connection while the door holds it. */
    private static final class Conn {
        final SocketChannel channel;
        final ConnectionListener.Activity activity;
        final InetSocketAddress remote;
        /** Completed with null when the connection is done, or with the bytes read so far to hand it back. */
        final CompletableFuture<byte[]> result = new CompletableFuture<>();
        SelectionKey key;
        ByteBuffer in = ByteBuffer.allocate(Http1Reader.BUFFER_BYTES);
        /** Bytes of {@link #in} already searched for the end of a head. */
        int searched;
        /** The answer being written, or null. */
        ByteBuffer out;
        boolean closeAfterOut;
        /** A request of this connection is on a virtual thread: read nothing more until its answer is written. */
        boolean running;
        /** Requests of this connection the door took (written by the door's thread, read after {@link #result}). */
        int served;
        /** A request of this connection waits in the admission's queue (no thread waits for it), or null. */
        ServerRequest queuedRequest;
        /** Whether {@link #queuedRequest}'s HTTP/1.x head lets the connection carry another request. */
        boolean queuedKeepAlive;
        Admission.Queued queued;
        /** Set by that virtual thread: the answer and whether the connection stays open after it. */
        volatile byte[] answer;
        volatile boolean answerKeepsOpen;
        /** Set by that virtual thread in place of {@link #answer}: a streamed answer, which the connection's thread writes. */
        volatile ServerResponse streamed;
        /** Whether the streamed answer's request listed trailers in its {@code TE} (set with {@link #streamed}). */
        volatile boolean takesTrailers;
        /** The connection's thread no longer waits in {@link #serve} (it was interrupted): nobody writes a stream. */
        volatile boolean abandoned;

        Conn(SocketChannel channel, ConnectionListener.Activity activity, InetSocketAddress remote) {
            this.channel = channel;
            this.activity = activity;
            this.remote = remote;
        }
    }

    /**
     * @param keepAlive whether a connection may stay open after its answer (false while the server drains)
     */
    Door(Admission admission, Requests requests, int maxHeadBytes, java.time.Duration writeTimeout,
         BooleanSupplier keepAlive) throws IOException {
        this.selector = Selector.open();
        this.admission = admission;
        this.requests = requests;
        this.maxHeadBytes = maxHeadBytes;
        this.writeTimeout = writeTimeout;
        this.keepAlive = keepAlive;
        this.thread = new Thread(this::run, THREAD_NAME);
        thread.setDaemon(true);
        thread.start();
        java.lang.management.ThreadMXBean threads = java.lang.management.ManagementFactory.getThreadMXBean();
        boolean cpuKnown = threads.isThreadCpuTimeSupported() && threads.isThreadCpuTimeEnabled();
        long id = thread.threadId();
        admission.doorOpened(new Admission.DoorLoad() {
            @Override
            public long cpuNanos() {
                return cpuKnown ? threads.getThreadCpuTime(id) : -1; // -1 too once the thread has ended
            }

            @Override
            public long requests() {
                return requestsRead;
            }

            @Override
            public long refused() {
                return refusals;
            }

            @Override
            public int nice() {
                return nice;
            }

            @Override
            public int lead() {
                return lead;
            }
        });
    }

    /**
     * Takes a connection just accepted ({@link ConnectionListener.Adopter}; on the accept thread): the door reads
     * it from now on, before its virtual thread has run, which then waits for it in {@link #serve}.
     */
    void accepted(SocketChannel channel, ConnectionListener.Activity activity) throws IOException {
        channel.configureBlocking(false);
        Conn c = new Conn(channel, activity, (InetSocketAddress) channel.socket().getRemoteSocketAddress());
        adopted.put(channel, c);
        arriving.add(c);
        selector.wakeup();
        if (closed) {
            c.result.complete(EMPTY); // no door (closed, or stopped on an error): the blocking path reads it
        }
    }

    /**
     * A connection the door hands back to the blocking path.
     *
     * @param read     the bytes read so far, to be read before the socket's own
     * @param fresh    the door served no request of it: its first bytes are {@code read}'s first (only then may they
     *                 be the HTTP/2 client preface, RFC 9113 section 3.4; after an HTTP/1.1 request they are an HTTP/1.1
     *                 request line, {@code PRI * HTTP/2.0}, answered 505, never a switch to HTTP/2)
     * @param streamed null, or a streamed answer to write ({@link HttpServer#streamsOverHttp1}) before the connection
     *                 closes (then {@code read} is left unread)
     * @param trailers whether that answer's request takes trailers (its {@code TE} lists them)
     */
    record HandedBack(byte[] read, boolean fresh, ServerResponse streamed, boolean trailers) {
        HandedBack(byte[] read, boolean fresh) {
            this(read, fresh, null, false);
        }
    }

    /**
     * Holds the connection until it is done (null: close it) or handed back (the bytes read so far, to be read
     * before the socket's own; the channel is then deregistered and still non-blocking; a door that is closed or
     * stopped hands every new connection back at once). Called on the connection's virtual thread, which parks
     * here meanwhile; a connection the door was not given at accept is handed back at once.
     */
    HandedBack serve(SocketChannel channel) throws IOException {
        Conn c = adopted.remove(channel);
        if (c == null) {
            return new HandedBack(EMPTY, true);
        }
        try {
            byte[] read = c.result.get();
            return read == null ? null : new HandedBack(read, c.served == 0, c.streamed, c.takesTrailers);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            c.abandoned = true; // a streamed answer that comes later is cancelled by the door ({@link #written})
            ServerResponse streamed = c.streamed;
            if (streamed != null) {
                streamed.stream().cancel();
            }
            return null;
        } catch (java.util.concurrent.ExecutionException e) {
            throw new IOException(e.getCause());
        }
    }

    /** From now on, a head {@code p} accepts hands its connection back to the blocking path. */
    void handBackIf(java.util.function.Predicate<Http1Request> p) {
        handBackIf = p;
    }

    @Override
    public void close() {
        closed = true;
        selector.wakeup();
    }

    /**
     * As the door's thread starts: asks for the admission's nice value ({@link Admission#doorNice()}) when the process
     * runs at a lower priority, so that on a CPU short of time the door reads and refuses ahead of the carriers
     * (docs/design/door.md: the 503 p99 on the wire at twice the load one CPU serves was under 100 ms in 9 of 10
     * steps with the door at nice -5 against 7 of 10 without, for 0.90 of the goodput). Raising it needs
     * {@code CAP_SYS_NICE}. Without that, as {@link Admission#doorFallback()} says (by default where the process is alone
     * in its CPU cgroup, {@link CpuCgroup}), the door lowers every other thread of the process by as many steps instead
     * (lowering needs no permission): the same lead within the process. Else it runs at the process's
     * priority. Each case is said once here.
     */
    private void prioritize() {
        Integer before = ThreadNice.current();
        if (before != null) {
            FIRST_NICE.compareAndSet(Integer.MIN_VALUE, before);
        }
        int want = admission.doorNice();
        int gotLead = 0;
        if (want != 0 && before != null && want < before) {
            ThreadNice.Result r = ThreadNice.setCurrent(want);
            switch (r) {
                case SET -> {
                    processNice = before;
                    gotLead = before - want;
                    LOG.log(System.Logger.Level.INFO, "the front door's thread runs at nice " + want
                            + " (admission.door_nice; the process at " + before + ")");
                }
                case DENIED -> gotLead = denied(before, want);
                case UNSUPPORTED -> LOG.log(System.Logger.Level.DEBUG, "the front door's priority is left as it is "
                        + "(not Linux, or no native access)");
            }
        }
        Integer now = ThreadNice.current();
        nice = now == null ? Integer.MIN_VALUE : now;
        lead = now == null ? Integer.MIN_VALUE : gotLead;
    }

    /**
     * The door may not raise its thread: lowers the process's other threads instead (when the admission says so), or
     * warns. Returns the door's lead over them.
     */
    private int denied(int before, int want) {
        String grant = "grant the capability (systemd: AmbientCapabilities=CAP_SYS_NICE) or a nice limit (ulimit -e "
                + (20 - want) + "; systemd: LimitNICE=" + want + ")";
        // the nice of the process as the first door found it: a later door (another server in this process) started
        // by a thread that was lowered runs lowered too, and must not lower the others further
        int base = FIRST_NICE.get();
        int others = AdmissionPolicy.othersNice(base, want);
        AdmissionPolicy.DoorFallback fallback = admission.doorFallback();
        CpuCgroup.Sharing cgroup = fallback == AdmissionPolicy.DoorFallback.AUTO ? CpuCgroup.ofThisProcess() : null;
        boolean lower = fallback.lowers(cgroup);
        if (lower && others > before) {
            lowered = others;
            processNice = base;
            int n = ThreadNice.resetOthers(base, others, THREAD_NAME);
            LOG.log(System.Logger.Level.INFO, "the front door could not raise its thread to nice " + want
                    + " (admission.door_nice; the process lacks CAP_SYS_NICE), so it runs at " + before + " and the "
                    + "gateway's other threads at nice " + others + " (" + n + " now, and any new one within a second; "
                    + (cgroup != null ? "admission.door_fallback: auto, and in its CPU cgroup "
                    + cgroup.cgroup() + " the process is " + cgroup.detail() + ", so no other process gains by it" : "admission.door_fallback: lower_others: "
                    + "the gateway's threads yield to other processes of its CPU cgroup") + "). To raise the door "
                    + "instead, " + grant + "; admission.door_fallback: none leaves the other threads as they are");
            return others - before;
        }
        String why;
        if (lower) {
            why = " (its thread already runs at nice " + before + ", as low as the other threads would go: started by "
                    + "one that an earlier door lowered, or the process runs that low)";
        } else if (fallback == AdmissionPolicy.DoorFallback.AUTO) {
            why = cgroup == null ? " (admission.door_fallback: auto, and its CPU cgroup could not be read)"
                    : " (admission.door_fallback: auto: the process shares its CPU cgroup " + cgroup.cgroup() + " "
                    + cgroup.detail() + ", which would run ahead of its threads if it lowered them; "
                    + "door_fallback: lower_others lowers them anyway)";
        } else {
            why = "";
        }
        LOG.log(System.Logger.Level.WARNING, "the front door could not raise its thread to nice " + want
                + " (admission.door_nice): the process lacks CAP_SYS_NICE, so on a busy CPU its 503s wait behind the "
                + "carriers" + why + "; " + grant + ", or set admission.door_nice: 0 to leave it and silence this");
        return 0;
    }

    /**
     * Keeps the door's lead as threads come and go, every second: when the door raised itself, a carrier that the
     * scheduler started from this thread (its submit of a request's virtual thread may start one when the pool has
     * fewer than it wants, after idle workers ended) inherited the door's nice, and is set back to the process's;
     * when it lowered the others instead, a thread started at the process's nice (by the door, or by a thread the
     * lowering has not reached) is lowered too. Other doors (servers) keep theirs.
     */
    private void unInherit() {
        if (lowered != Integer.MIN_VALUE) {
            ThreadNice.resetOthers(processNice, lowered, THREAD_NAME);
        } else if (processNice != Integer.MIN_VALUE) {
            ThreadNice.resetOthers(nice, processNice, THREAD_NAME);
        }
    }

    private void run() {
        long nextSweep = System.nanoTime() + SWEEP_NANOS;
        long nextNiceSweep = System.nanoTime() + NICE_SWEEP_NANOS;
        try {
            prioritize();
            while (!closed) {
                if (answered.isEmpty() && arriving.isEmpty()) {
                    // a queued request looks for its place every ms
                    selector.select(this::ready, queued.isEmpty() ? 100 : 1);
                } else {
                    // the hand-back's selectNow below may have taken the wake-up that announced them
                    selector.selectNow(this::ready);
                }
                Conn c;
                while ((c = arriving.poll()) != null) {
                    adopt(c);
                }
                while ((c = answered.poll()) != null) {
                    try {
                        written(c);
                    } catch (RuntimeException e) {
                        dropped(c, e);
                    }
                }
                pollQueue();
                while (!handBack.isEmpty()) {
                    List<Conn> back = new ArrayList<>(handBack);
                    handBack.clear();
                    // deregisters their cancelled keys, so the channels may block again (and serves what else is
                    // ready meanwhile, which may hand more back: the next turn of this loop)
                    selector.selectNow(this::ready);
                    for (Conn h : back) {
                        held.remove(h);
                        byte[] read = new byte[h.in.position()];
                        h.in.get(0, read);
                        h.result.complete(read);
                    }
                }
                long now = System.nanoTime();
                if (now - nextNiceSweep >= 0) {
                    nextNiceSweep = now + NICE_SWEEP_NANOS;
                    unInherit();
                }
                if (now - nextSweep >= 0) {
                    nextSweep = now + SWEEP_NANOS;
                    held.removeIf(h -> {
                        if (h.channel.isOpen()) {
                            return false;
                        }
                        ended(h); // as end(h), but removeIf takes it out of held
                        return true;
                    });
                }
            }
        } catch (IOException | RuntimeException | Error e) {
            if (!closed) {
                LOG.log(System.Logger.Level.ERROR, "the front door's selector thread stopped", e);
            }
        } finally {
            closed = true;
            for (Conn q : queued) {
                q.queued.leave(); // else its place in the route's queue stays taken for as long as the admission lives
            }
            queued.clear();
            for (Conn h : held) {
                ended(h);
            }
            Conn a;
            while ((a = answered.poll()) != null) {
                if (a.streamed != null) {
                    a.streamed.stream().cancel(); // answered as the door stopped: never handed back
                }
            }
            Conn c;
            while ((c = arriving.poll()) != null) {
                c.result.complete(EMPTY); // never registered: the blocking path reads it
            }
            try {
                selector.close();
            } catch (IOException ignored) {
                // closing anyway
            }
        }
    }

    /**
     * One key the selector found ready. The door selects with an action ({@link Selector#select(java.util.function.Consumer,
     * long)}) rather than through the selected-key set: that set is a {@link HashSet} whose table never shrinks, so
     * after thousands of connections were ready at once every later turn walked and cleared the whole table, however
     * few keys it held (a profile of {@code lab/admission/shed-cost.sh} put 62 of the door's 215 samples there; its
     * CPU per 503 did not move beyond the spread in three alternated pairs: docs/design/door.md).
     */
    private void ready(SelectionKey k) {
        Conn conn = (Conn) k.attachment();
        try {
            if (k.isValid() && k.isWritable()) {
                write(conn);
                if (conn.out == null && held.contains(conn)) {
                    serveRead(conn); // a pipelined request may wait in the buffer
                }
            }
            if (k.isValid() && k.isReadable()) {
                read(conn);
            }
        } catch (RuntimeException e) {
            dropped(conn, e);
        }
    }

    /**
     * A step of {@code c}'s work on this thread threw: ends the connection. A {@link CancelledKeyException} says the
     * listener closed the socket from its own thread (the idle or header sweep, the server's stop), which may land
     * between any two steps here; every step that touches a key is caught so (the selector's, the answers', the
     * queue's), so that such a close ends one connection and never this thread. A step that holds an admission's
     * place or a place in its queue gives it back before it throws ({@link #run}, {@link #serveRead}).
     */
    private void dropped(Conn c, RuntimeException e) {
        if (!(e instanceof CancelledKeyException)) {
            LOG.log(System.Logger.Level.WARNING, "the front door dropped a connection from "
                    + c.remote + " on an error", e);
        }
        end(c);
    }

    private void adopt(Conn c) {
        try {
            c.key = c.channel.register(selector, SelectionKey.OP_READ, c);
            held.add(c);
            c.activity.idle();
        } catch (IOException | RuntimeException e) {
            c.result.complete(null); // closed meanwhile
        }
    }

    /** The connection is done: its virtual thread closes the socket. */
    private void end(Conn c) {
        held.remove(c);
        ended(c);
    }

    /** {@link #end} once {@code c} is out of {@code held}. */
    private static void ended(Conn c) {
        if (c.key != null) {
            c.key.cancel();
        }
        ServerResponse streamed = c.streamed;
        if (c.result.complete(null) && streamed != null) {
            streamed.stream().cancel(); // it will not be written: its backend call stops, its place comes back
        }
    }

    private void handBack(Conn c) {
        c.key.cancel();
        handBack.add(c);
    }

    private void read(Conn c) {
        if (c.running || c.out != null) {
            c.key.interestOps(c.out != null ? SelectionKey.OP_WRITE : 0);
            return;
        }
        if (!c.in.hasRemaining()) {
            if (c.in.capacity() >= maxHeadBytes + 4) {
                handBack(c); // no end of a head within the limit: the blocking path answers it (431 or 414)
                return;
            }
            ByteBuffer bigger = ByteBuffer.allocate(Math.min(maxHeadBytes + 4, c.in.capacity() * 2));
            bigger.put(c.in.flip());
            c.in = bigger;
        }
        int n;
        try {
            n = c.channel.read(c.in);
        } catch (IOException e) {
            end(c); // reset by the peer
            return;
        }
        if (n < 0) {
            if (c.in.position() == 0) {
                end(c); // closed between requests
            } else {
                handBack(c); // closed mid-head: the blocking path reads what came and answers as it always has
            }
            return;
        }
        if (n > 0) {
            c.activity.bytesIn();
        }
        serveRead(c);
    }

    /** Answers what {@code c} has buffered, one request at a time, until it needs more bytes or a request runs. */
    private void serveRead(Conn c) {
        while (!c.running && c.out == null && c.in.position() > 0 && c.key.isValid()) {
            int end = endOfHead(c);
            if (end == -2 || end < 0 && c.in.position() > maxHeadBytes + 4) {
                handBack(c); // the blocking path answers it as it always has (400, 431, 414)
                return;
            }
            if (end < 0) {
                return;
            }
            Http1Request head;
            try {
                Http1Input in = new Http1Input(new ByteArrayInputStream(c.in.array(), 0, end), Http1Reader.BUFFER_BYTES);
                head = Http1.readRequestHead(in, maxHeadBytes, Http1.MAX_REQUEST_FIELDS);
                if (head == null || in.consumed() != end) {
                    handBack(c);
                    return;
                }
            } catch (IOException refused) {
                handBack(c); // the blocking path parses the same bytes and gives its answer
                return;
            }
            java.util.function.Predicate<Http1Request> back = handBackIf;
            if (head.framing().kind() != Framing.Kind.NONE || back != null && back.test(head)) {
                handBack(c); // a body (read on the blocking path, with its limits), or a head that path must see
                return;
            }
            c.in.flip().position(end);
            c.in.compact();
            c.searched = 0;
            c.served++;
            c.activity.busy();
            ServerRequest r = ServerRequest.http1(head.head(), EMPTY, c.remote, System.nanoTime(), head.http10());
            boolean keepsOpen = head.keepAlive();
            requestsRead++; // only this thread writes it
            Admission.Decision decision;
            try {
                decision = admission.tryEnter(r);
                if (decision == null) {
                    decision = nullDecision("tryEnter");
                }
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "the admission failed on " + r.method() + " " + r.path(), e);
                decision = Admission.WouldWait.WOULD_WAIT; // let enter() on a virtual thread answer it
            }
            switch (decision) {
                case Admission.Refused refused -> {
                    refusals++;
                    answer(c, requests.refused(r, refused), keepsOpen);
                }
                case Admission.Admitted admitted -> run(c, r, admitted, keepsOpen);
                case Admission.WouldWait w -> {
                    Admission.Queued q = admission.queue(r);
                    if (q == null) {
                        run(c, r, null, keepsOpen); // it waits for its place on its own virtual thread
                        break;
                    }
                    c.running = true; // read nothing more until it is answered
                    try {
                        c.key.interestOps(0);
                    } catch (CancelledKeyException closed) {
                        q.leave(); // closed since its head was read: nobody waits for this place
                        throw closed;
                    }
                    c.queuedRequest = r;
                    c.queuedKeepAlive = keepsOpen;
                    c.queued = q;
                    queued.add(c);
                    return;
                }
            }
        }
    }

    /** Each queued request, oldest first: admitted when its place is free, refused when its deadline passed. */
    private void pollQueue() {
        if (queued.isEmpty()) {
            return;
        }
        long now = System.nanoTime();
        List<Conn> done = new ArrayList<>();
        // null: the connection is gone; WOULD_WAIT: the queue gave no answer, enter() decides on a virtual thread
        List<Admission.Decision> tickets = new ArrayList<>();
        for (java.util.Iterator<Conn> it = queued.iterator(); it.hasNext(); ) {
            Conn c = it.next();
            Admission.Decision t;
            if (!held.contains(c) || !c.key.isValid()) {
                c.queued.leave(); // gone: give its place in the queue back (not a 503: nobody is there to get it)
                t = null;
            } else {
                if (c.queued.poll() instanceof Admission.Ticket ready) {
                    t = ready;
                } else if (now - c.queued.deadline() >= 0) {
                    t = c.queued.expire();
                    if (t == null) {
                        t = nullDecision("Queued.expire");
                    }
                } else {
                    continue; // still waiting
                }
            }
            it.remove();
            done.add(c);
            tickets.add(t);
        }
        // answered after the walk: an answer may queue the connection's next request
        for (int k = 0; k < done.size(); k++) {
            Conn c = done.get(k);
            Admission.Decision t = tickets.get(k);
            ServerRequest r = c.queuedRequest;
            boolean keepsOpen = c.queuedKeepAlive;
            c.queued = null;
            c.queuedRequest = null;
            c.running = false;
            if (t == null) {
                continue;
            }
            try {
                switch (t) {
                    case Admission.Admitted admitted -> run(c, r, admitted, keepsOpen);
                    case Admission.Refused refused -> {
                        refusals++;
                        answer(c, requests.refused(r, refused), keepsOpen);
                        if (c.out == null && held.contains(c)) {
                            serveRead(c);
                        }
                    }
                    // it waits for its place on its own virtual thread
                    case Admission.WouldWait w -> run(c, r, null, keepsOpen);
                }
            } catch (RuntimeException e) {
                dropped(c, e);
            }
        }
    }

    /**
     * A custom admission answered null from {@code method}, which is no decision (null once meant "would wait", and a
     * switch on it would drop the connection unanswered, or leave a queued one unread until the idle sweep): taken as
     * {@link Admission.WouldWait#WOULD_WAIT}, so that {@link Admission#enter} decides on a virtual thread, and said
     * once per door, naming the admission.
     */
    private Admission.Decision nullDecision(String method) {
        if (!warnedNullDecision) {
            warnedNullDecision = true;
            LOG.log(System.Logger.Level.WARNING, "the admission " + admission.getClass().getName() + " answered null"
                    + " from " + method + "(), which is not a decision: the front door takes it as WouldWait.WOULD_WAIT"
                    + " (its enter() decides, on the request's virtual thread); answer WOULD_WAIT instead (this is said"
                    + " once)");
        }
        return Admission.WouldWait.WOULD_WAIT;
    }

    /**
     * Runs {@code r} on a virtual thread of its own (admitted, or null: it waits for its place there). When the
     * connection was closed since its head was read ({@link #dropped}), gives the place back and throws.
     *
     * @param keepsOpen whether the request's HTTP/1.x head lets the connection carry another request
     */
    private void run(Conn c, ServerRequest r, Admission.Admitted admitted, boolean keepsOpen) {
        c.running = true;
        try {
            c.key.interestOps(0);
        } catch (CancelledKeyException closed) {
            if (admitted != null) {
                admitted.exit(); // nobody is there for the answer: the place would be lost for good
            }
            throw closed;
        }
        Thread.ofVirtual().start(() -> {
            ServerResponse response;
            try {
                // a null answer would end this thread below and leave the connection busy for good
                response = java.util.Objects.requireNonNull(requests.handle(r, admitted), "the handler answered null");
            } catch (RuntimeException | Error e) {
                LOG.log(System.Logger.Level.WARNING, "handler failed on " + r.method() + " " + r.path(), e);
                // the kind only: the message may name what the client must not learn (a backend, a file, a host)
                response = HttpServer.error(500, "internal error: the handler failed (" + e.getClass().getName()
                        + "); the server's log has the rest");
            }
            boolean open = keepsOpen && keepAlive.getAsBoolean();
            if (HttpServer.streamsOverHttp1(r, response)) {
                c.takesTrailers = r.head().headers().lists("te", "trailers");
                c.streamed = response; // the connection's own thread writes it, as the body comes
            } else {
                c.answer = HttpServer.http1(response, open);
            }
            c.answerKeepsOpen = open;
            answered.add(c);
            selector.wakeup();
            if (closed && answered.remove(c) && c.streamed != null) {
                c.streamed.stream().cancel(); // the door stopped: nobody hands it to the connection's thread
            }
        });
    }

    /**
     * The index just past the CRLF CRLF that ends the head in {@code c.in}; -1 when it has not arrived; -2 at a bare
     * LF or CR, which the codec refuses (so the door never disagrees with it on where a head ends).
     */
    private static int endOfHead(Conn c) {
        byte[] a = c.in.array();
        int pos = c.in.position();
        for (int i = c.searched; i < pos; i++) {
            byte b = a[i];
            if (b == '\n') {
                if (i == 0 || a[i - 1] != '\r') {
                    return -2;
                }
                if (i >= 3 && a[i - 2] == '\n' && a[i - 3] == '\r') {
                    return i + 1;
                }
            } else if (i > 0 && a[i - 1] == '\r') {
                return -2;
            }
        }
        c.searched = pos;
        return -1;
    }

    /** A request's virtual thread is done: write its answer. */
    private void written(Conn c) {
        if (!held.contains(c) || !c.key.isValid()) {
            if (c.streamed != null) {
                c.streamed.stream().cancel(); // nobody is there for it: its backend call stops, its place comes back
            }
            return; // closed meanwhile (ended before its answer came)
        }
        c.running = false;
        if (c.streamed != null) {
            if (c.abandoned) {
                c.streamed.stream().cancel();
                end(c);
            } else {
                handBack(c); // its thread writes it (blocking, as the body comes), then closes the connection
            }
            return;
        }
        c.out = ByteBuffer.wrap(c.answer);
        c.closeAfterOut = !c.answerKeepsOpen;
        c.answer = null;
        write(c);
        if (c.out == null && held.contains(c)) {
            serveRead(c);
        }
    }

    private void answer(Conn c, ServerResponse response, boolean requestKeepsOpen) {
        boolean open = requestKeepsOpen && keepAlive.getAsBoolean();
        c.out = ByteBuffer.wrap(HttpServer.http1(response, open));
        c.closeAfterOut = !open;
        write(c);
    }

    /** Writes what it can of {@code c.out}; the rest when the socket takes more. */
    private void write(Conn c) {
        if (c.out == null) {
            c.key.interestOps(SelectionKey.OP_READ);
            return;
        }
        try {
            c.channel.write(c.out);
        } catch (IOException e) {
            end(c);
            return;
        }
        if (c.out.hasRemaining()) {
            c.activity.writing(writeTimeout); // a peer that takes no more of it for that long loses the connection
            c.key.interestOps(SelectionKey.OP_WRITE);
            return;
        }
        c.out = null;
        if (c.closeAfterOut) {
            end(c);
            return;
        }
        c.activity.idle();
        if (c.in.position() > 0) {
            c.activity.bytesIn(); // a pipelined head has begun: its deadline runs
        }
        c.key.interestOps(SelectionKey.OP_READ);
    }
}
