package dev.weft.legacy;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Seed 000's System A as a team wrote it before virtual threads, and the lab's "unmodified service": the JDK's
 * {@code HttpServer} with a fixed pool of handler threads, a second fixed pool that makes the three backend
 * calls in parallel with blocking {@link HttpURLConnection}, sized as such teams sized them (200 each). It
 * knows nothing of Weft or of virtual threads (release 17 code).
 *
 * <p>Routes: {@code GET /a/{id}?latency=L} calls {@code B/b/{id}?latency=L}, {@code C/c/...}, {@code D/d/...}
 * and answers {@code {"b":...,"c":...,"d":...}}; {@code GET /json} answers a small JSON object without calling
 * anyone (a TechEmpower-style endpoint).
 *
 * <p>Flag-driven, so that other labs reuse it with other variants:
 * <pre>
 *   --listen HOST:PORT        default 127.0.0.1:0 (a free port)
 *   --backends B,C,D          base URLs of the three backends (required for /a)
 *   --server-threads N        the handler pool (http-handler-N threads); default 200
 *   --call-threads N          the backend-call pool (backend-call-N threads); default 200
 *   --keepalive-per-host N    idle HttpURLConnection connections kept per backend (http.maxConnections); default 200
 *   --call-timeout-ms N       connect and read timeout of each call; default 30000
 *   --max-idle-client-connections N  kept-alive client connections HttpServer keeps
 *                             (sun.net.httpserver.maxIdleConnections); default 10000
 * </pre>
 *   --mode direct|relay-async direct (default): the request thread makes the three calls as above and waits;
 *                             relay-async: see below
 *   --relay URL               relay-async only: the relay's base URL; calls go to URL/b/{id}, URL/c/..., URL/d/...
 *   --relay-threads N         relay-async only: the HttpClient's executor (relay-client-N threads); default 8
 * </pre>
 *
 * <p><b>relay-async</b> is what seed 000's team did when they could not rewrite the service: the request thread
 * sends its three calls with {@link HttpClient#sendAsync} over one HTTP/2 connection to a relay beside it (which
 * makes the real calls to B, C and D) and returns at once, without writing the answer; the answer is written by
 * an {@link HttpClient} thread when the three calls complete ({@code com.sun.net.httpserver} lets a handler
 * return and finish the exchange later from another thread). So the 200 request threads no longer bound the
 * requests in flight: the relay's stream limit and the load do. The JDK's {@code HttpClient} has no
 * prior-knowledge h2c, so the connection is plain HTTP with {@code Upgrade: h2c} (the relay must accept it:
 * {@code http2: { upgrade: true }} for {@code weft gateway}; Go's h2c handler does): a loopback sidecar needs no
 * certificate and spends no CPU on encryption, which TLS with ALPN h2 would cost on both sides. The service makes
 * one call at start and refuses to serve unless the relay answered it over HTTP/2, so that every later call
 * shares that one connection rather than silently falling back to HTTP/1.1 connections.
 *
 * <p>Prints {@code READY http://host:port} once it serves; stops when its standard input ends.
 */
public final class LegacyService {
    private final HttpServer server;
    private final ExecutorService handlers;
    private final ExecutorService calls;
    private final List<String> backends;
    private final int callTimeoutMillis;
    private final Relay relay; // null in direct mode

    private LegacyService(Options o) throws IOException {
        this.backends = o.backends;
        this.callTimeoutMillis = o.callTimeoutMillis;
        this.handlers = Executors.newFixedThreadPool(o.serverThreads, named("http-handler-"));
        this.calls = Executors.newFixedThreadPool(o.callThreads, named("backend-call-"));
        this.relay = o.mode == Mode.RELAY_ASYNC ? new Relay(o.relay, o.relayThreads, o.callTimeoutMillis) : null;
        this.server = HttpServer.create(o.listen, 4096);
        server.setExecutor(handlers);
        server.createContext("/a/", relay != null ? this::systemAThroughRelay : this::systemA);
        server.createContext("/json", this::json);
        server.start();
    }

    /** A factory as such teams wrote them: numbered names, so that logs say which pool a line came from. */
    static ThreadFactory named(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + n.incrementAndGet());
            t.setDaemon(false);
            return t;
        };
    }

    public static void main(String[] args) throws Exception {
        Options o;
        try {
            o = Options.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("legacy-service: " + e.getMessage());
            System.exit(2);
            return;
        }
        // HttpURLConnection's keep-alive cache holds 5 idle connections per host unless told: a team with 200
        // threads calling the same three hosts raised it so.
        if (System.getProperty("http.maxConnections") == null) {
            System.setProperty("http.maxConnections", String.valueOf(o.keepAlivePerHost));
        }
        // HttpServer closes the kept-alive connections of its clients past 200 idle ones unless told: a team serving
        // more clients than that raised it, so that the clients do not reconnect for most requests.
        if (System.getProperty("sun.net.httpserver.maxIdleConnections") == null) {
            System.setProperty("sun.net.httpserver.maxIdleConnections", String.valueOf(o.maxIdleClientConnections));
        }
        LegacyService s;
        try {
            s = new LegacyService(o);
        } catch (IOException e) {
            System.err.println("legacy-service: " + e.getMessage());
            System.exit(1);
            return;
        }
        InetSocketAddress bound = s.server.getAddress();
        System.out.println("READY http://" + bound.getHostString() + ":" + bound.getPort());
        System.out.flush();
        while (System.in.read() >= 0) {
            // serve until the parent closes our standard input
        }
        s.server.stop(0);
        s.handlers.shutdownNow();
        s.calls.shutdownNow();
        if (s.relay != null) {
            s.relay.threads.shutdownNow();
        }
    }

    /** How {@code /a/} makes its three calls. */
    enum Mode {
        DIRECT, RELAY_ASYNC;

        static Mode parse(String s) {
            switch (s) {
                case "direct":
                    return DIRECT;
                case "relay-async":
                    return RELAY_ASYNC;
                default:
                    throw new IllegalArgumentException("--mode takes direct or relay-async, not " + s);
            }
        }
    }

    /** The HTTP/2 client to the relay: one connection, checked at start. */
    static final class Relay {
        final String base;
        final HttpClient client;
        final ExecutorService threads;
        final Duration timeout;

        Relay(String base, int threads, int timeoutMillis) throws IOException {
            this.base = base.endsWith("/") ? base.substring(0, base.length() - 1) : base;
            this.threads = Executors.newFixedThreadPool(threads, named("relay-client-"));
            this.timeout = Duration.ofMillis(timeoutMillis);
            this.client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_2).executor(this.threads)
                    .connectTimeout(timeout).build();
            // The first call upgrades the connection (Upgrade: h2c); every later one is a stream on it.
            HttpResponse<String> first;
            try {
                first = client.send(request("b", "0", "?latency=0ms"), HttpResponse.BodyHandlers.ofString());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted calling the relay at " + base);
            } catch (IOException e) {
                throw new IOException("the relay at " + base + " did not answer " + this.base + "/b/0: " + e, e);
            }
            if (first.statusCode() != 200) {
                throw new IOException("the relay at " + base + " answered " + this.base + "/b/0 with " + first.statusCode()
                        + ": " + first.body());
            }
            if (first.version() != HttpClient.Version.HTTP_2) {
                throw new IOException("the relay at " + base + " answered over " + first.version()
                        + ", not HTTP/2: it must accept Upgrade: h2c (weft gateway: http2: { upgrade: true })");
            }
        }

        HttpRequest request(String name, String id, String query) {
            return HttpRequest.newBuilder(URI.create(base + "/" + name + "/" + id + query)).timeout(timeout).GET().build();
        }
    }

    /**
     * relay-async: the three calls go out with sendAsync and this thread returns; whichever HttpClient thread
     * completes the last call writes the answer and closes the exchange.
     */
    private void systemAThroughRelay(HttpExchange ex) throws IOException {
        if (!"GET".equals(ex.getRequestMethod())) {
            try (ex) {
                send(ex, 405, "{\"error\":\"GET only\"}");
            }
            return;
        }
        URI uri = ex.getRequestURI();
        String id = uri.getPath().substring("/a/".length());
        String query = uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery();
        String[] names = {"b", "c", "d"};
        List<CompletableFuture<HttpResponse<String>>> parts = new ArrayList<>();
        List<HttpRequest> requests = new ArrayList<>();
        try {
            for (String name : names) {
                requests.add(relay.request(name, id, query));
            }
        } catch (IllegalArgumentException e) {
            try (ex) {
                send(ex, 400, "{\"error\":\"bad path or query\"}");
            }
            return;
        }
        for (HttpRequest r : requests) {
            parts.add(relay.client.sendAsync(r, HttpResponse.BodyHandlers.ofString()));
        }
        CompletableFuture.allOf(parts.toArray(new CompletableFuture<?>[0])).whenComplete((ignored, failure) -> {
            try (ex) {
                StringBuilder body = new StringBuilder("{");
                for (int i = 0; i < 3; i++) {
                    CompletableFuture<HttpResponse<String>> f = parts.get(i);
                    if (f.isCompletedExceptionally()) {
                        Throwable cause = f.handle((r, t) -> t).join();
                        if (cause instanceof java.util.concurrent.CompletionException && cause.getCause() != null) {
                            cause = cause.getCause();
                        }
                        send(ex, 502, "{\"error\":\"backend " + names[i] + ": " + String.valueOf(cause).replace('"', '\'') + "\"}");
                        return;
                    }
                    HttpResponse<String> r = f.join();
                    if (r.statusCode() != 200) {
                        send(ex, 502, "{\"error\":\"backend " + names[i] + " answered " + r.statusCode() + " through the relay\"}");
                        return;
                    }
                    body.append(i == 0 ? "" : ",").append('"').append(names[i]).append("\":").append(r.body());
                }
                send(ex, 200, body.append('}').toString());
            } catch (IOException | RuntimeException e) {
                // the client went away: nothing to answer; the exchange is closed by try-with-resources
            }
        });
    }

    private void systemA(HttpExchange ex) throws IOException {
        try (ex) {
            if (!"GET".equals(ex.getRequestMethod())) {
                send(ex, 405, "{\"error\":\"GET only\"}");
                return;
            }
            if (backends.size() != 3) {
                send(ex, 500, "{\"error\":\"no backends: start with --backends B,C,D\"}");
                return;
            }
            URI uri = ex.getRequestURI();
            String id = uri.getPath().substring("/a/".length());
            String query = uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery();
            String[] names = {"b", "c", "d"};
            List<Future<String>> parts = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                String url = backends.get(i) + "/" + names[i] + "/" + id + query;
                parts.add(calls.submit(() -> get(url)));
            }
            StringBuilder body = new StringBuilder("{");
            for (int i = 0; i < 3; i++) {
                try {
                    String part = parts.get(i).get(callTimeoutMillis, TimeUnit.MILLISECONDS);
                    body.append(i == 0 ? "" : ",").append('"').append(names[i]).append("\":").append(part);
                } catch (ExecutionException | TimeoutException e) {
                    for (Future<String> f : parts) {
                        f.cancel(true);
                    }
                    Throwable cause = e instanceof ExecutionException ? e.getCause() : e;
                    send(ex, 502, "{\"error\":\"backend " + names[i] + ": " + String.valueOf(cause).replace('"', '\'') + "\"}");
                    return;
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    send(ex, 503, "{\"error\":\"interrupted\"}");
                    return;
                }
            }
            send(ex, 200, body.append('}').toString());
        }
    }

    private void json(HttpExchange ex) throws IOException {
        try (ex) {
            send(ex, 200, "{\"message\":\"Hello, World!\"}");
        }
    }

    private String get(String url) throws IOException {
        HttpURLConnection c = (HttpURLConnection) URI.create(url).toURL().openConnection();
        c.setConnectTimeout(callTimeoutMillis);
        c.setReadTimeout(callTimeoutMillis);
        int status = c.getResponseCode();
        InputStream in = status < 400 ? c.getInputStream() : c.getErrorStream();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        if (in != null) {
            try (in) {
                in.transferTo(out); // read to the end: the connection goes back to the keep-alive cache
            }
        }
        if (status != 200) {
            throw new IOException(url + " answered " + status);
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    private static void send(HttpExchange ex, int status, String json) throws IOException {
        byte[] b = json.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", "application/json");
        ex.sendResponseHeaders(status, b.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(b);
        }
    }

    /** The command line. */
    static final class Options {
        InetSocketAddress listen = new InetSocketAddress("127.0.0.1", 0);
        List<String> backends = List.of();
        int serverThreads = 200;
        int callThreads = 200;
        int keepAlivePerHost = 200;
        int callTimeoutMillis = 30_000;
        Mode mode = Mode.DIRECT;
        String relay;
        int relayThreads = 8;
        int maxIdleClientConnections = 10_000;

        static Options parse(String[] args) {
            Options o = new Options();
            for (int i = 0; i < args.length; i++) {
                String name = args[i];
                if (i + 1 >= args.length) {
                    throw new IllegalArgumentException(name + " needs a value");
                }
                String value = args[++i];
                switch (name) {
                    case "--listen" -> {
                        int colon = value.lastIndexOf(':');
                        if (colon < 0) {
                            throw new IllegalArgumentException("--listen HOST:PORT, not " + value);
                        }
                        o.listen = new InetSocketAddress(value.substring(0, colon), number(name, value.substring(colon + 1), 0, 65535));
                    }
                    case "--backends" -> {
                        o.backends = List.of(value.split(","));
                        if (o.backends.size() != 3) {
                            throw new IllegalArgumentException("--backends takes three base URLs (B,C,D), not " + value);
                        }
                    }
                    case "--server-threads" -> o.serverThreads = number(name, value, 1, 100_000);
                    case "--call-threads" -> o.callThreads = number(name, value, 1, 100_000);
                    case "--keepalive-per-host" -> o.keepAlivePerHost = number(name, value, 1, 100_000);
                    case "--call-timeout-ms" -> o.callTimeoutMillis = number(name, value, 1, 600_000);
                    case "--mode" -> o.mode = Mode.parse(value);
                    case "--relay" -> {
                        URI u;
                        try {
                            u = URI.create(value);
                        } catch (IllegalArgumentException e) {
                            throw new IllegalArgumentException("--relay " + value + " is not a URL");
                        }
                        if (!"http".equals(u.getScheme()) && !"https".equals(u.getScheme()) || u.getHost() == null) {
                            throw new IllegalArgumentException("--relay takes an http:// or https:// base URL, not " + value);
                        }
                        o.relay = value;
                    }
                    case "--relay-threads" -> o.relayThreads = number(name, value, 1, 10_000);
                    case "--max-idle-client-connections" -> o.maxIdleClientConnections = number(name, value, 1, 1_000_000);
                    default -> throw new IllegalArgumentException("unknown flag " + name
                            + "; flags: --listen --backends --server-threads --call-threads --keepalive-per-host "
                            + "--call-timeout-ms --max-idle-client-connections --mode --relay --relay-threads");
                }
            }
            if (o.mode == Mode.RELAY_ASYNC && o.relay == null) {
                throw new IllegalArgumentException("--mode relay-async needs --relay URL");
            }
            if (o.mode == Mode.DIRECT && o.relay != null) {
                throw new IllegalArgumentException("--relay is for --mode relay-async");
            }
            return o;
        }

        private static int number(String name, String value, int min, int max) {
            int n;
            try {
                n = Integer.parseInt(value);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(name + " " + value + " is not a whole number");
            }
            if (n < min || n > max) {
                throw new IllegalArgumentException(name + " " + value + " is outside " + min + ".." + max);
            }
            return n;
        }
    }
}
