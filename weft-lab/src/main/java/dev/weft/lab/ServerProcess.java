package dev.weft.lab;

import dev.weft.server.HttpServer;
import dev.weft.server.ServerLimits;
import dev.weft.server.ServerResponse;
import io.helidon.http.HeaderNames;
import io.helidon.webserver.WebServer;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.Executors;

/**
 * A child JVM serving one trivial route ({@code GET /lab}: a small JSON body) with one server:
 * {@code weft} (weft-server's HttpServer), {@code jetty} (Jetty 12, handlers on virtual threads) or
 * {@code helidon} (Helidon 4 SE WebServer, virtual threads by design), or {@code weft-tls} (weft's HttpServer
 * with inbound TLS, a self-signed certificate given as two PEM files). Prints READY and the URL.
 */
public final class ServerProcess {
    static final byte[] BODY = "{\"ok\":true,\"items\":[1,2,3]}".getBytes(StandardCharsets.UTF_8);

    private ServerProcess() {
    }

    public static void main(String[] args) throws Exception {
        AutoCloseable stop;
        int port;
        String scheme = "http";
        switch (args[0]) {
            case "weft-tls" -> { // args: weft-tls CERT.pem KEY.pem
                dev.weft.server.ServerTls tls = dev.weft.server.ServerTls.start(
                        () -> dev.weft.core.tls.Pem.serverContext(java.nio.file.Path.of(args[1]), java.nio.file.Path.of(args[2])),
                        List.of(), null, System.err::println);
                // HTTP/1.1 over TLS, as this row has measured since it began: ALPN offers no h2 (the client would take it)
                HttpServer s = HttpServer.builder(r -> ServerResponse.json(200, BODY))
                        .listen(new InetSocketAddress("127.0.0.1", 0)).limits(ServerLimits.DEFAULT.withMaxConcurrent(20_000))
                        .tls(tls).http2(dev.weft.server.http2.Http2Limits.DISABLED).start();
                port = s.addresses().getFirst().getPort();
                scheme = "https";
                stop = s;
            }
            case "weft" -> {
                HttpServer s = HttpServer.builder(r -> ServerResponse.json(200, BODY))
                        .listen(new InetSocketAddress("127.0.0.1", 0)).limits(ServerLimits.DEFAULT.withMaxConcurrent(20_000))
                        .start();
                port = s.addresses().getFirst().getPort();
                stop = s;
            }
            case "jetty" -> {
                QueuedThreadPool pool = new QueuedThreadPool();
                pool.setVirtualThreadsExecutor(Executors.newVirtualThreadPerTaskExecutor());
                Server s = new Server(pool);
                ServerConnector c = new ServerConnector(s);
                c.setHost("127.0.0.1");
                c.setPort(0);
                c.setAcceptQueueSize(4096);
                s.addConnector(c);
                s.setHandler(new Handler.Abstract() { // BLOCKING: runs on a virtual thread
                    @Override
                    public boolean handle(Request request, Response response, Callback callback) {
                        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
                        response.write(true, ByteBuffer.wrap(BODY), callback);
                        return true;
                    }
                });
                s.start();
                port = c.getLocalPort();
                stop = s::stop;
            }
            case "helidon" -> {
                WebServer s = WebServer.builder().host("127.0.0.1").port(0).backlog(4096)
                        .routing(r -> r.get("/lab", (req, res) -> {
                            res.header(HeaderNames.CONTENT_TYPE, "application/json");
                            res.send(BODY);
                        }))
                        .build().start();
                port = s.port();
                stop = s::stop;
            }
            default -> throw new IllegalArgumentException("unknown server " + args[0]);
        }
        System.out.println("READY " + scheme + "://127.0.0.1:" + port);
        System.out.flush();
        while (System.in.read() >= 0) {
            // run until the parent closes our standard input
        }
        stop.close();
    }
}
