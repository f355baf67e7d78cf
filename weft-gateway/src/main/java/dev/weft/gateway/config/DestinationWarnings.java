package dev.weft.gateway.config;

import dev.weft.client.DestinationConfig;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** What a gateway config allows that an operator should hear about at start and in {@code weft check}. */
public final class DestinationWarnings {
    private DestinationWarnings() {
    }

    /** One line per warning (empty when there is nothing to say). */
    public static List<String> of(GatewayConfig config) {
        List<String> out = new ArrayList<>();
        for (Map.Entry<String, DestinationConfig> e : config.destinations().entrySet()) {
            DestinationConfig d = e.getValue();
            if (d.tls().insecureSkipVerify()) {
                out.add("destination " + e.getKey() + ": insecure_skip_verify is on: its TLS certificate and host"
                        + " name are not checked (anyone on the path can read and change the calls); for tests only");
            }
            if (d.tls().ca() != null && e.getKey().startsWith("http://")) {
                out.add("destination " + e.getKey() + ": 'ca' has no effect on plain http");
            }
        }
        return out;
    }
}
