package dev.weft.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/** Lines of a gateway's access log (a file), for the gateway's integration tests. */
final class AccessLogLines {
    private static final ObjectMapper JSON = new ObjectMapper();

    private AccessLogLines() {
    }

    /**
     * The line of the request whose path ends with {@code suffix}, once the log's writer has written it (it writes off
     * the request's thread); fails the test after 10 s without one.
     */
    static JsonNode of(Path log, String suffix) {
        JsonNode[] found = new JsonNode[1];
        org.awaitility.Awaitility.await("the access-log line of " + suffix).atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(10)).until(() -> {
                    if (!Files.exists(log)) {
                        return false;
                    }
                    for (String l : Files.readAllLines(log)) {
                        JsonNode n;
                        try {
                            n = JSON.readTree(l);
                        } catch (IOException partial) {
                            continue; // a line being written
                        }
                        if (n.path("path").asText().endsWith(suffix)) {
                            found[0] = n;
                            return true;
                        }
                    }
                    return false;
                });
        return found[0];
    }
}
