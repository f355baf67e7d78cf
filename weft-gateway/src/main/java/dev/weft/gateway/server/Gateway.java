package dev.weft.gateway.server;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.weft.core.Deadline;
import dev.weft.core.Durations;
import dev.weft.http.Headers;
import dev.weft.client.Transport;
import dev.weft.config.ConfigException;
import dev.weft.config.FileWatch;
import dev.weft.server.ExecutorModel;
import dev.weft.server.HttpServer;
import dev.weft.server.Query;
import dev.weft.server.ServerRequest;
import dev.weft.server.ServerResponse;
import dev.weft.doctor.InProcess;
import dev.weft.doctor.JvmMeters;
import dev.weft.gateway.compose.Composer;
import dev.weft.gateway.config.GatewayConfig;
import dev.weft.gateway.config.GatewayConfigLoader;
import dev.weft.gateway.observe.GatewayObserver;
import dev.weft.gateway.observe.Observed;
import dev.weft.gateway.plan.CallOutcome;
import dev.weft.gateway.plan.CallSpec;
import dev.weft.gateway.plan.PlanRunner;
import dev.weft.gateway.plan.ProxyRoute;
import dev.weft.gateway.plan.Relay;
import dev.weft.gateway.compose.RelayAnswer;
import dev.weft.gateway.plan.RoutePlan;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

/**
 * The running gateway: an {@link HttpServer} whose handler matches a route, runs its plan and composes
 * the answer; admin under {@code /-/}; atomic reload of the config file.
 */
public final class Gateway implements AutoCloseable {
    private static final ObjectMapper JSON = dev.weft.json.Json.MAPPER;

    /** What one loaded config serves with. Replaced as a whole on reload. */
    private record Snapshot(GatewayConfig config, Transport transport, PlanRunner runner, Relay relay, Instant loadedAt) {
    }

    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final Consumer<String> log;
    private final ReentrantLock reloadLock = new ReentrantLock();
    private final Map<String, Counter> requestCounters = new ConcurrentHashMap<>();
    private final Map<String, Timer> requestTimers = new ConcurrentHashMap<>();
    private volatile Snapshot current;
    private volatile String lastReloadError;
    private volatile boolean closed;
    private HttpServer server;
    /** The admin listener ({@code admin:}), or null: the admin endpoints are served on the main port. */
    private HttpServer adminServer;
    private dev.weft.server.ServerTls tls;
    /** Counts runaway virtual threads into /-/metrics (three thread dumps every 30 s). */
    private final AutoCloseable runawayWatch;
    /** weft_scheduler_lag_seconds: the process's scheduler probe into this gateway's metrics. */
    private final AutoCloseable lagWatch;
    /** weft_admission_shed_duration_seconds. */
    private final Timer shedTimer;
    /** The JVM's meters (jvm_gc_pause_seconds and the rest): its listeners on the collector. */
    private final JvmMeters.Binding jvmMeters;

    /** Access log and tracer, as the config at start asks (a reload does not change them). */
    private final GatewayObserver observer;

    private Gateway(GatewayConfig config, Consumer<String> log) throws IOException {
        this.log = log;
        this.jvmMeters = JvmMeters.bind(registry); // first: its histogram filter applies to meters registered after it
        try {
            this.observer = GatewayObserver.start(config, registry);
            this.current = snapshot(config);
        } catch (IOException | RuntimeException e) {
            jvmMeters.close();
            throw e;
        }
        java.time.Duration every = runawayCheck();
        this.runawayWatch = every == null ? () -> { } : InProcess.watchRunaways(registry, every, log);
        this.lagWatch = GatewayAdmission.schedulerLag(registry);
        this.shedTimer = GatewayAdmission.shedTimer(registry);
    }

    /**
     * How often the gateway looks for runaway virtual threads (weft.threads.runaways): the system property
     * {@code weft.runawayWatch} (a duration, or {@code off}), default 30 s.
     */
    static java.time.Duration runawayCheck() {
        String p = System.getProperty("weft.runawayWatch", "30s").strip();
        return p.equals("off") ? null : dev.weft.core.Durations.parse(p);
    }

    /**
     * Starts serving {@code config}.
     *
     * @param listen   null for the config's
     * @param executor null for the config's
     * @param log      where reload results and warnings go (one line each)
     */
    public static Gateway start(GatewayConfig config, InetSocketAddress listen, ExecutorModel executor,
                                Consumer<String> log) throws IOException {
        Gateway g = new Gateway(config, log);
        InetSocketAddress main = listen != null ? listen : config.listen();
        try {
            if (config.tls() != null) {
                g.tls = Listeners.tls(config.tls(), g.registry, log);
            }
            g.server = HttpServer.builder(g::handle).listen(main).limits(config.limits())
                    .executor(executor != null ? executor : config.executor()).tls(g.tls).log(log)
                    .admission(GatewayAdmission.create(config, g.registry, g::routeOf)).refusals(g::refused).http2(config.http2())
                    .streamedBodies(g::streamsBody).expectedBodies(g::wantsBody).start();
            Listeners.countSheds(g.server, g.registry);
            String budget = dev.weft.gateway.config.DescriptorBudget.check(config, dev.weft.os.Descriptors.limit());
            if (budget != null) {
                log.accept("warning: " + budget);
            }
            if (config.admin() != null) {
                g.adminServer = HttpServer.builder(r -> Listeners.adminHandle(r, config.admin(), g::admin))
                        .listen(config.admin().listen()).limits(Listeners.ADMIN_LIMITS).start();
            } else if (!main.getAddress().isLoopbackAddress()) {
                log.accept("warning: /-/metrics, /-/routes and /-/threads are served on " + main
                        + ", which is not loopback; add 'admin: {listen: 127.0.0.1:9901}' to move them off the "
                        + "public port (docs/gateway.md, Deploying)");
            }
        } catch (IOException | RuntimeException e) {
            g.close();
            throw e;
        }
        return g;
    }

    private Snapshot snapshot(GatewayConfig config) {
        dev.weft.gateway.config.DestinationWarnings.of(config).forEach(w -> log.accept("warning: " + w));
        Transport.Builder b = Transport.builder().defaults(config.destinationDefaults())
                .listener(new dev.weft.observe.ClientMeters(registry)).userAgent("weft-gateway").log(log);
        config.destinations().forEach(b::destination);
        Transport t = b.build();
        return new Snapshot(config, t, new PlanRunner(t), new Relay(t), Instant.now());
    }

    public String url() {
        return server.url();
    }

    public InetSocketAddress address() {
        return server.addresses().getFirst();
    }

    /** {@code http://host:port} of the admin listener, or null without {@code admin:}. */
    public String adminUrl() {
        return adminServer == null ? null : adminServer.url();
    }

    public GatewayConfig config() {
        return current.config();
    }

    public ExecutorModel executor() {
        return server.executorModel();
    }

    // ---- requests ----------------------------------------------------------------------------------

    /** An answer given without {@link #handle}: into the access log, when there is one; a 503 of the admission also into its histogram. */
    private void refused(ServerRequest r, InetSocketAddress remote, ServerResponse answer, HttpServer.RefusedBy by) {
        if (r != null && by == HttpServer.RefusedBy.ADMISSION) {
            shedTimer.record(System.nanoTime() - r.receivedNanos(), TimeUnit.NANOSECONDS);
        }
        if (observer.logsAccess()) {
            observer.refused(r, remote, r == null ? null : routeOf(r), answer, by);
        }
    }

    /** The {@code calls:} route that takes {@code head}'s method and path in {@code s}, or null. */
    private static RoutePlan callsRoute(Snapshot s, dev.weft.http.RequestHead head) {
        for (RoutePlan p : s.config().routes()) {
            if (p.method().equals(head.method()) && p.path().match(head.path()) != null) {
                return p;
            }
        }
        return null;
    }

    /** The id of the route {@code r} goes to (for the admission), or null. */
    private String routeOf(ServerRequest r) {
        if (r.path().startsWith("/-/")) {
            return null;
        }
        RoutePlan calls = callsRoute(current, r.head());
        if (calls != null) {
            return calls.id();
        }
        ProxyRoute proxy = current.config().proxyFor(r.path());
        return proxy == null ? null : proxy.id();
    }

    ServerResponse handle(ServerRequest r) {
        long t0 = System.nanoTime();
        Observed o = observer.begin(r);
        ServerResponse resp = null;
        boolean streamed = false;
        try {
            resp = answer(r, o);
            if (resp != null && resp.stream() != null) {
                streamed = true; // its span and line end with its body
                return observer.endWhenStreamed(r, o, resp, t0);
            }
            return resp;
        } finally {
            if (!streamed) {
                // a handler that threw is answered 500 by the server: logged and traced as such
                observer.end(r, o, resp != null ? resp : ServerResponse.json(500, new byte[0]), t0);
            }
        }
    }

    private ServerResponse answer(ServerRequest r, Observed o) {
        if (r.path().startsWith("/-/")) {
            return adminServer == null ? admin(r) : error(404, "no route for " + r.method() + " " + r.path()
                    + "; the /-/ endpoints are served on the admin listener");
        }
        String refused = RequestPaths.problem(r.path(), r.query());
        if (refused != null) {
            return error(400, refused);
        }
        if (hasLowerCase(r.method())) {
            // methods are case-sensitive: a route for GET does not take 'get', and a backend that reads it as GET
            // would serve what the route was to answer (nginx refuses them too)
            return error(400, "the method has lower-case letters; this gateway takes upper-case methods only");
        }
        Snapshot s = current;
        RoutePlan plan = null;
        Map<String, String> params = null;
        List<String> allowed = new ArrayList<>();
        for (RoutePlan p : s.config().routes()) {
            Map<String, String> m = p.path().match(r.path());
            if (m != null) {
                if (p.method().equals(r.method())) {
                    plan = p;
                    params = m;
                    break;
                }
                allowed.add(p.method());
            }
        }
        if (plan == null) {
            ProxyRoute proxy = s.config().proxyFor(r.path());
            if (proxy != null) {
                return relay(s, proxy, r, o);
            }
            if (!allowed.isEmpty()) {
                return error(405, "method " + r.method() + " is not allowed on " + r.path() + "; allowed: "
                        + String.join(", ", allowed)).withHeader("Allow", String.join(", ", allowed));
            }
            return error(404, "no route for " + r.method() + " " + r.path() + "; see /-/routes");
        }
        long t0 = System.nanoTime();
        Deadline deadline = Deadline.in(plan.timeout());
        Headers forwarded = Headers.EMPTY;
        for (String h : plan.forwardHeaders()) {
            String v = r.header(h);
            if (v != null) {
                forwarded = forwarded.with(h, v);
            }
        }
        o.route = plan.id();
        Map<String, CallOutcome> outcomes = s.runner().run(plan, params, Query.parse(r.query()), r::header, forwarded,
                deadline, o.trace).outcomes();
        o.outcomes = outcomes;
        ServerResponse resp = Composer.compose(plan, outcomes, deadline.expired());
        count(plan.id(), resp, t0);
        return resp;
    }

    /** A {@code proxy:} route: the request relayed to its backend, the answer passed back. */
    private ServerResponse relay(Snapshot s, ProxyRoute proxy, ServerRequest r, Observed o) {
        long t0 = System.nanoTime();
        o.route = proxy.id();
        ServerResponse resp;
        // a streamed upload is bounded as a held body is; a gRPC stream from HTTP/2 to HTTP/2 is not (a client stream
        // may last as long as its call), and no other request gets past max_body by saying it is gRPC
        long serverMax = s.config().limits().maxBodyBytes();
        long max = uploadBound(s, proxy);
        boolean grpc = r.http2() && Relay.isGrpc(r.head().headers());
        boolean bounded = r.bodyStream() != null && !(grpc && h2c(s, proxy));
        if (r.bodyStream() != null && grpc && speaksHttp2(s, proxy)) {
            // nor in time (body_timeout, min_body_rate), to any destination that may speak HTTP/2: a gRPC stream may
            // rightly be quiet for minutes (a chat, a watch); the route's timeout bounds it
            r.bodyStream().liftTimeBounds();
        }
        long declared = r.bodyStream() == null ? r.body().length
                : bounded ? Relay.declaredLength(r.head().headers()) : -1;
        if (declared > max) {
            resp = RelayAnswer.json(413, JsonNodeFactory.instance.objectNode()
                    .put("error", "the request body is " + declared + " bytes, over " + (declared > proxy.maxBody()
                            ? "the route's max_body of " + proxy.maxBody()
                            : "the server's limits.max_body_bytes of " + serverMax)).put("route", proxy.id()));
        } else {
            Deadline deadline = Deadline.in(proxy.timeout());
            dev.weft.gateway.plan.BoundedBody upload = bounded
                    ? new dev.weft.gateway.plan.BoundedBody(r.bodyStream(), max) : null;
            Relay.Inbound in = new Relay.Inbound(r.method(), r.path(), r.query(), r.head().headers(), r.body(),
                    r.remote(), tls != null, upload != null ? upload : r.bodyStream());
            if (r.streamable() && (Relay.streams(in) || proxy.streamAnswers())) {
                resp = relayStreamed(s, proxy, in, deadline);
            } else {
                resp = RelayAnswer.of(proxy, s.relay().call(proxy, in, deadline), deadline.expired());
            }
            if (upload != null && upload.refusal() != null && resp.stream() == null) {
                // the upload itself was refused (over max_body, malformed chunks): the client's fault, said as such
                dev.weft.http.HttpCodecException e = upload.refusal();
                resp = RelayAnswer.json(e.status(), JsonNodeFactory.instance.objectNode()
                        .put("error", "the request body was refused: " + e.getMessage()).put("route", proxy.id()));
            }
        }
        count(proxy.id(), resp, t0);
        return resp;
    }

    /**
     * Whether a request's body is handed over as it comes, over either protocol: one that a {@code proxy:} route
     * relays (no {@code calls:} route takes its method and path) and that is a gRPC request (so that client and
     * bidirectional streams relay; bounded by max_body but from HTTP/2 to an {@code h2c} destination, {@link #relay}),
     * or a POST, PUT or PATCH whose body is larger than {@link Relay#HELD_BODY_BYTES} or of no declared length (an
     * upload): held, such a body would cost its size in memory and its whole time before the backend saw a byte. A
     * smaller one is held, so that the call may still be retried or hedged (docs/gateway.md, Proxy routes).
     */
    private boolean streamsBody(dev.weft.http.RequestHead head) {
        if (head.path().startsWith("/-/")
                || !Relay.isGrpc(head.headers()) && !Relay.isUpload(head.method(), head.headers())) {
            return false;
        }
        Snapshot s = current;
        return callsRoute(s, head) == null && s.config().proxyFor(head.path()) != null;
    }

    /**
     * Whether the body of a request that waits for {@code 100 Continue} is wanted, from its head: not when no route
     * takes it (404, 405) or a proxy route's bounds refuse its declared length (413), so the client is answered at once
     * and does not send it (docs/gateway.md, Proxy routes).
     */
    private boolean wantsBody(dev.weft.http.RequestHead head) {
        if (head.path().startsWith("/-/")) {
            return true;
        }
        Snapshot s = current;
        if (callsRoute(s, head) != null) {
            return true;
        }
        ProxyRoute proxy = s.config().proxyFor(head.path());
        return proxy != null && Relay.declaredLength(head.headers()) <= uploadBound(s, proxy);
    }

    /** The most a request body to {@code proxy} may hold: its {@code max_body}, or the server's, the smaller. */
    private static long uploadBound(Snapshot s, ProxyRoute proxy) {
        return Math.min(proxy.maxBody(), s.config().limits().maxBodyBytes());
    }

    /** Whether {@code proxy}'s destination is spoken to over HTTP/2 with prior knowledge ({@code http2: h2c}). */
    private static boolean h2c(Snapshot s, ProxyRoute proxy) {
        return "http".equals(proxy.target().getScheme()) && destination(s, proxy).tls().h2c();
    }

    /** Whether {@code proxy}'s destination may be spoken to over HTTP/2: {@code h2c}, or {@code https} offering h2. */
    private static boolean speaksHttp2(Snapshot s, ProxyRoute proxy) {
        dev.weft.client.TlsOptions tls = destination(s, proxy).tls();
        return "https".equals(proxy.target().getScheme()) ? tls.http2() : tls.h2c();
    }

    private static dev.weft.client.DestinationConfig destination(Snapshot s, ProxyRoute proxy) {
        return s.config().destinations().getOrDefault(dev.weft.client.Destination.of(proxy.target()).key(),
                s.config().destinationDefaults());
    }

    /**
     * A streamed relay: the answer's head as soon as the backend sends it, its body as it comes. Before a head, the
     * usual answer (an error, an answer that ended with its head, one that is not a stream).
     */
    private static ServerResponse relayStreamed(Snapshot s, ProxyRoute proxy, Relay.Inbound in, Deadline deadline) {
        dev.weft.gateway.plan.RelayStream pipe = new dev.weft.gateway.plan.RelayStream(deadline,
                proxy.streamAnswers() ? proxy.maxBody() : -1);
        s.relay().stream(proxy, in, deadline, pipe);
        try {
            if (!pipe.awaitHead()) {
                if (pipe.unstreamed() == null) {
                    pipe.cancel();
                    return RelayAnswer.json(502, JsonNodeFactory.instance.objectNode()
                            .put("error", "proxy to " + proxy.target() + " failed: the call gave no result")
                            .put("route", proxy.id()).put("reason", "internal"));
                }
                return RelayAnswer.of(proxy, pipe.unstreamed(), deadline.expired());
            }
        } catch (InterruptedException e) { // the client went away: the call is cancelled with it
            pipe.cancel();
            Thread.currentThread().interrupt();
            return RelayAnswer.clientClosed(proxy);
        }
        if (!RelayAnswer.validStatus(pipe.status())) {
            pipe.cancel();
            return RelayAnswer.invalidStatus(proxy, pipe.status(), proxy.target().toString());
        }
        return RelayAnswer.streamed(proxy, pipe);
    }

    private void count(String id, ServerResponse resp, long t0) {
        requestCounters.computeIfAbsent(id + " " + resp.status(), k -> Counter.builder("weft.gateway.requests")
                .description("answered requests by route and status").tag("route", id)
                .tag("status", Integer.toString(resp.status())).register(registry)).increment();
        requestTimers.computeIfAbsent(id, k -> Timer.builder("weft.gateway.request.duration")
                .description("time to answer, by route").tag("route", id).publishPercentileHistogram()
                .register(registry)).record(System.nanoTime() - t0, TimeUnit.NANOSECONDS);
    }

    // ---- admin -------------------------------------------------------------------------------------

    ServerResponse admin(ServerRequest r) {
        return switch (r.path()) {
            case "/-/health" -> json(200, JsonNodeFactory.instance.objectNode().put("status", "up"));
            case "/-/ready" -> server != null && server.draining()
                    ? json(503, JsonNodeFactory.instance.objectNode().put("ready", false).put("why", "draining"))
                    : json(200, JsonNodeFactory.instance.objectNode().put("ready", true));
            case "/-/metrics" -> ServerResponse.text(200, "text/plain; version=0.0.4; charset=utf-8", registry.scrape());
            case "/-/routes" -> json(200, routes());
            case "/-/threads" -> threads(r);
            default -> error(404, "unknown admin path " + r.path()
                    + "; try /-/health, /-/ready, /-/metrics, /-/routes, /-/threads");
        };
    }

    /** weft doctor's report of this process over {@code ?for=} (default 1 s, at most 10 s). */
    private static ServerResponse threads(ServerRequest r) {
        try {
            return ServerResponse.json(200, JSON.writeValueAsBytes(InProcess.threads(r.query())));
        } catch (IllegalArgumentException e) {
            return error(400, e.getMessage());
        } catch (InProcess.Busy e) {
            return error(503, e.getMessage()).withHeader("Retry-After", "1");
        } catch (dev.weft.doctor.ThisJvm.ShortOfDescriptors e) {
            return error(503, e.getMessage()).withHeader("Retry-After", "5");
        } catch (IOException e) {
            return error(500, "thread dump failed: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return error(503, "stopping");
        }
    }

    private ObjectNode routes() {
        Snapshot s = current;
        ObjectNode o = JsonNodeFactory.instance.objectNode();
        o.put("config", s.config().file().toString());
        o.put("loaded_at", s.loadedAt().toString());
        if (lastReloadError != null) {
            o.put("last_reload_error", lastReloadError);
        }
        ArrayNode routes = o.putArray("routes");
        for (RoutePlan p : s.config().routes()) {
            ObjectNode r = routes.addObject();
            r.put("route", p.id());
            r.put("timeout", Durations.format(p.timeout()));
            r.put("declared_at", p.location());
            if (p.statusFrom() != null) {
                r.put("status_from", p.statusFrom());
            }
            r.put("merge", p.merge());
            ArrayNode calls = r.putArray("calls");
            for (CallSpec c : p.calls()) {
                ObjectNode x = calls.addObject();
                x.put("name", c.name());
                x.put("method", c.method());
                x.put("url", c.url().source());
                ArrayNode needs = x.putArray("needs");
                c.needs().forEach(needs::add);
                if (c.foreach() != null) {
                    x.put("foreach", c.foreach().toString());
                    x.put("concurrency", c.concurrency());
                }
                x.put("timeout", Durations.format(c.timeout()));
                x.put("optional", c.optional());
                if (c.hedge() != null) {
                    x.put("hedge", Durations.format(c.hedge().delay()));
                }
            }
        }
        for (ProxyRoute p : s.config().proxies()) {
            ObjectNode r = routes.addObject();
            r.put("route", p.id());
            r.put("proxy", p.target().toString());
            r.put("timeout", Durations.format(p.timeout()));
            r.put("max_body", p.maxBody());
            r.put("x_forwarded", p.xForwarded());
            if (p.via() != null) {
                r.put("via", p.via());
            }
            r.put("declared_at", p.location());
        }
        return o;
    }

    private static ServerResponse json(int status, ObjectNode body) {
        try {
            return ServerResponse.json(status, JSON.writeValueAsBytes(body));
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    private static boolean hasLowerCase(String method) {
        for (int i = 0; i < method.length(); i++) {
            char c = method.charAt(i);
            if (c >= 'a' && c <= 'z') {
                return true;
            }
        }
        return false;
    }

    private static ServerResponse error(int status, String message) {
        return json(status, JsonNodeFactory.instance.objectNode().put("error", message));
    }

    // ---- reload ------------------------------------------------------------------------------------

    /**
     * Reads the config file again. A file with errors is refused whole (its problems are logged and shown
     * in /-/routes) and the running config keeps serving; a good one replaces it atomically.
     *
     * @return true when the new config was taken
     */
    public boolean reload() {
        reloadLock.lock();
        try {
            Snapshot old = current;
            GatewayConfig next;
            try {
                next = GatewayConfigLoader.load(old.config().file());
            } catch (ConfigException e) {
                lastReloadError = e.getMessage();
                log.accept("reload refused, still serving the config loaded at " + old.loadedAt() + ":\n"
                        + e.getMessage());
                return false;
            }
            lastReloadError = null;
            GatewayConfig was = old.config();
            if (!Objects.equals(next.accessLog(), was.accessLog()) || !next.tracing().equals(was.tracing())) {
                log.accept("reload: access_log and tracing changes take effect at the next start");
            }
            if (!Objects.equals(next.listen(), was.listen()) || !next.limits().equals(was.limits())
                    || !next.executor().equals(was.executor()) || !Objects.equals(next.tls(), was.tls())
                    || !Objects.equals(next.admin(), was.admin()) || !next.http2().equals(was.http2())) {
                log.accept("reload: listen, executor, limits, tls, admin and http2 changes take effect at the next start "
                        + "(the certificate files themselves are reloaded when they change)");
            }
            boolean sameDestinations = next.destinations().equals(was.destinations())
                    && next.destinationDefaults().equals(was.destinationDefaults());
            Snapshot fresh;
            if (sameDestinations) {
                fresh = new Snapshot(next, old.transport(), old.runner(), old.relay(), Instant.now());
            } else {
                old.transport().detachListener();
                fresh = snapshot(next);
                retireLater(old, was);
            }
            current = fresh;
            log.accept("reloaded " + next.file() + ": " + (next.routes().size() + next.proxies().size()) + " routes");
            return true;
        } finally {
            reloadLock.unlock();
        }
    }

    /** Closes a replaced transport once the requests that started on it can no longer be running. */
    private void retireLater(Snapshot old, GatewayConfig was) {
        Duration longest = java.util.stream.Stream.concat(was.routes().stream().map(RoutePlan::timeout),
                was.proxies().stream().map(ProxyRoute::timeout)).max(Duration::compareTo)
                .orElse(Duration.ZERO).plusSeconds(5);
        Thread.ofVirtual().name("weft-retire-transport").start(() -> {
            try {
                Thread.sleep(longest);
            } catch (InterruptedException ignored) {
                // close now
            }
            old.transport().close();
        });
    }

    /** Reloads whenever the config file's modification time or size changes (checked every {@code every}). */
    public void watchFile(Duration every) {
        FileWatch.start("weft-config-watch", () -> current.config().file(), every, () -> closed, this::reload);
    }

    // ---- stop --------------------------------------------------------------------------------------

    /** Stops taking requests, lets those in flight finish up to the config's drain timeout, closes. */
    public boolean drain() {
        closed = true;
        boolean clean = server.drain(current.config().limits().drainTimeout());
        closeListeners();
        current.transport().close();
        stopWatch();
        observer.close();
        return clean;
    }

    @Override
    public void close() {
        closed = true;
        if (server != null) {
            server.close();
        }
        closeListeners();
        current.transport().close();
        stopWatch();
        observer.close();
    }

    private void closeListeners() {
        if (adminServer != null) {
            adminServer.close();
        }
        if (tls != null) {
            tls.close();
        }
    }

    private void stopWatch() {
        jvmMeters.close();
        try {
            runawayWatch.close();
            lagWatch.close();
        } catch (Exception ignored) {
            // a daemon thread; interrupting it is all there is
        }
    }
}
