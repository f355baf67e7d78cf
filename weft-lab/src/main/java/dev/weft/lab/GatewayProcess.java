package dev.weft.lab;

import dev.weft.server.ExecutorModel;
import dev.weft.gateway.config.GatewayConfigLoader;
import dev.weft.gateway.server.Gateway;

import java.nio.file.Path;

/** A child JVM running one gateway: {@code GatewayProcess CONFIG EXECUTOR}; prints READY and the URL. */
public final class GatewayProcess {
    private GatewayProcess() {
    }

    public static void main(String[] args) throws Exception {
        dev.weft.os.Carriers.atLeastTwo(); // as the weft command does (Main)
        try (Gateway g = Gateway.start(GatewayConfigLoader.load(Path.of(args[0])), null, ExecutorModel.parse(args[1]),
                line -> System.err.println("gateway: " + line))) {
            System.out.println("READY " + g.url());
            System.out.flush();
            while (System.in.read() >= 0) {
                // run until the parent closes our standard input (or dies)
            }
        }
    }
}
