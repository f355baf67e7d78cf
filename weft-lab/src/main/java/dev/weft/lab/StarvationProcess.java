package dev.weft.lab;

import dev.weft.gateway.config.GatewayConfig;
import dev.weft.gateway.config.GatewayConfigLoader;
import dev.weft.gateway.server.Gateway;
import dev.weft.server.HttpServer;
import dev.weft.server.Query;
import dev.weft.server.ServerResponse;

import java.net.InetSocketAddress;

/**
 * The service of {@code weft lab starvation}, in a JVM of its own: the gateway with one route
 * ({@code GET /fast}: one call to weft-upstream, 10 ms), and in the same process, so on the same carriers, a
 * lab-only server whose {@code GET /burn?ms=N} runs {@link #burnCpu} for N ms on its request's virtual
 * thread without parking: a runaway. {@code StarvationProcess SIM_URL}; prints
 * {@code READY GATEWAY_URL,BURN_URL}; stops when its standard input closes.
 */
public final class StarvationProcess {
    private StarvationProcess() {
    }

    static volatile long sink;

    /** Spins for {@code millis} of wall time (CPU all along, no parking). */
    static void burnCpu(long millis) {
        long until = System.nanoTime() + millis * 1_000_000;
        long x = 0;
        while (System.nanoTime() - until < 0) {
            x += x * 31 + 7;
        }
        sink = x;
    }

    public static void main(String[] args) throws Exception {
        GatewayConfig cfg = GatewayConfigLoader.parse("starvation.yaml", "routes:\n  - get: /fast\n    calls:\n"
                + "      b: { url: \"" + args[0] + "/fast?latency=10ms\" }\n");
        try (Gateway gw = Gateway.start(cfg, new InetSocketAddress("127.0.0.1", 0), null, line -> { });
             HttpServer burn = HttpServer.builder(r -> {
                         long ms = Math.min(60_000, Long.parseLong(Query.parse(r.query()).getOrDefault("ms", "100")));
                         burnCpu(ms);
                         return ServerResponse.json(200, "{\"burned_ms\":" + ms + "}");
                     }).listen(new InetSocketAddress("127.0.0.1", 0)).start()) {
            System.out.println("READY " + gw.url() + "," + burn.url());
            System.out.flush();
            while (System.in.read() >= 0) {
                // until the lab closes our standard input
            }
        }
    }
}
