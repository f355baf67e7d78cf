package dev.weft.server;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** What a {@link HttpHandler} answers. Content-Length and Connection are written by the server. */
public record ServerResponse(int status, List<Map.Entry<String, String>> headers, byte[] body) {
    public static ServerResponse json(int status, byte[] body) {
        return new ServerResponse(status, List.of(Map.entry("Content-Type", "application/json")), body);
    }

    public static ServerResponse json(int status, String body) {
        return json(status, body.getBytes(StandardCharsets.UTF_8));
    }

    public static ServerResponse text(int status, String contentType, String body) {
        return new ServerResponse(status, List.of(Map.entry("Content-Type", contentType)),
                body.getBytes(StandardCharsets.UTF_8));
    }

    public ServerResponse withHeader(String name, String value) {
        List<Map.Entry<String, String>> h = new ArrayList<>(headers.size() + 1);
        h.addAll(headers);
        h.add(Map.entry(name, value));
        return new ServerResponse(status, List.copyOf(h), body);
    }
}
