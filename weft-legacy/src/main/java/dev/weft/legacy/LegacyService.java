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
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
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
 * </pre>
 * Prints {@code READY http://host:port} once it serves; stops when its standard input ends.
 */
public final class LegacyService {
    private final HttpServer server;
    private final ExecutorService handlers;
    private final ExecutorService calls;
    private final List<String> backends;
    private final int callTimeoutMillis;

    private LegacyService(Options o) throws IOException {
        this.backends = o.backends;
        this.callTimeoutMillis = o.callTimeoutMillis;
        this.handlers = Executors.newFixedThreadPool(o.serverThreads, named("http-handler-"));
        this.calls = Executors.newFixedThreadPool(o.callThreads, named("backend-call-"));
        this.server = HttpServer.create(o.listen, 4096);
        server.setExecutor(handlers);
        server.createContext("/a/", this::systemA);
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
        LegacyService s = new LegacyService(o);
        InetSocketAddress bound = s.server.getAddress();
        System.out.println("READY http://" + bound.getHostString() + ":" + bound.getPort());
        System.out.flush();
        while (System.in.read() >= 0) {
            // serve until the parent closes our standard input
        }
        s.server.stop(0);
        s.handlers.shutdownNow();
        s.calls.shutdownNow();
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
                    default -> throw new IllegalArgumentException("unknown flag " + name
                            + "; flags: --listen --backends --server-threads --call-threads --keepalive-per-host --call-timeout-ms");
                }
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
