package dev.weft.lab.peers;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VerticleBase;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClientAgent;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;

import java.io.IOException;
import java.net.URI;
import java.util.List;

/**
 * The {@code async} model of {@code weft lab system-a}: System A written the way seed 003 planned its
 * rewrite, futures and callbacks on a Netty-based stack (Vert.x 5), one verticle per core, no blocking
 * anywhere. {@code GET /a/{id}?latency=L} calls B, C and D at once ({@code Future.all}) and answers
 * {@code {"b":...,"c":...,"d":...}} — the same body the gateway composes.
 *
 * <p>Run as a child JVM: {@code AsyncPeer B_URL C_URL D_URL MAX_CONNECTIONS}; prints {@code READY <url>}
 * and stops when its standard input closes.
 */
public final class AsyncPeer extends VerticleBase {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String[] NAMES = {"b", "c", "d"};

    private final List<URI> backends;
    private final HttpClientAgent client;
    private final int port;

    private AsyncPeer(List<URI> backends, HttpClientAgent client, int port) {
        this.backends = backends;
        this.client = client;
        this.port = port;
    }

    @Override
    public Future<?> start() {
        HttpServer server = vertx.createHttpServer();
        server.requestHandler(this::handle);
        return server.listen(port, "127.0.0.1");
    }

    private void handle(HttpServerRequest req) {
        String path = req.path();
        if (!path.startsWith("/a/") || path.length() == 3) {
            req.response().setStatusCode(404).putHeader("content-type", "application/json")
                    .end("{\"error\":\"no route\"}");
            return;
        }
        String id = path.substring(3);
        String latency = req.getParam("latency", "0ms");
        @SuppressWarnings("unchecked")
        Future<Buffer>[] calls = new Future[NAMES.length];
        for (int i = 0; i < NAMES.length; i++) {
            calls[i] = get(backends.get(i), "/" + NAMES[i] + "/" + id + "?latency=" + latency, NAMES[i]);
        }
        Future.all(List.of(calls)).onComplete(done -> {
            if (done.failed()) {
                req.response().setStatusCode(502).putHeader("content-type", "application/json")
                        .end("{\"error\":" + JSON.valueToTree(String.valueOf(done.cause().getMessage())) + "}");
                return;
            }
            try {
                ObjectNode out = JSON.createObjectNode();
                for (int i = 0; i < NAMES.length; i++) {
                    out.set(NAMES[i], JSON.readTree(calls[i].result().getBytes()));
                }
                req.response().putHeader("content-type", "application/json").end(Buffer.buffer(JSON.writeValueAsBytes(out)));
            } catch (IOException e) {
                req.response().setStatusCode(502).end("{\"error\":\"a backend answered something that is not JSON\"}");
            }
        });
    }

    private Future<Buffer> get(URI base, String pathAndQuery, String name) {
        RequestOptions o = new RequestOptions().setMethod(HttpMethod.GET).setHost(base.getHost())
                .setPort(base.getPort()).setURI(pathAndQuery);
        return client.request(o)
                .compose(r -> r.send())
                .compose(resp -> resp.statusCode() < 400 ? resp.body()
                        : Future.failedFuture(name + " answered " + resp.statusCode()))
                .recover(e -> Future.failedFuture(name + ": " + e.getMessage()));
    }

    public static void main(String[] args) throws Exception {
        List<URI> backends = List.of(URI.create(args[0]), URI.create(args[1]), URI.create(args[2]));
        int maxConnections = Integer.parseInt(args[3]);
        Vertx vertx = Vertx.vertx();
        HttpClientAgent client = vertx.createHttpClient(new HttpClientOptions().setKeepAlive(true)
                        .setConnectTimeout(2000),
                new PoolOptions().setHttp1MaxSize(maxConnections).setMaxWaitQueueSize(maxConnections * 4));
        int cores = Runtime.getRuntime().availableProcessors();
        // One verticle (one event loop) per core, all on one port: Vert.x shares a host:port between the
        // servers of its verticles. A free port is picked first, as Vert.x does not share port 0.
        int port;
        try (java.net.ServerSocket probe = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = probe.getLocalPort();
        }
        vertx.deployVerticle(() -> new AsyncPeer(backends, client, port), new DeploymentOptions().setInstances(cores))
                .toCompletionStage().toCompletableFuture().get();
        System.out.println("READY http://127.0.0.1:" + port);
        System.out.flush();
        while (System.in.read() >= 0) {
            // run until the parent closes our standard input (or dies)
        }
        vertx.close().toCompletionStage().toCompletableFuture().get();
    }
}
