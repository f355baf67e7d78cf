package dev.weft.dispatch.engine;

import com.fasterxml.jackson.core.JsonPointer;
import com.fasterxml.jackson.databind.JsonNode;
import dev.weft.json.Json;
import dev.weft.dispatch.config.EndpointConfig;
import dev.weft.dispatch.config.Match;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Which endpoints a record goes to. The value is parsed as JSON at most once, and only when an endpoint
 * matches on JSON; a record that is not JSON matches no such endpoint (reported in
 * {@link Matched#notJson}, counted per endpoint as {@code not_json}) and never stops the consumer.
 */
final class Matcher {
    /** What one record matched, in config order; {@code notJson}: endpoints it missed because it is not JSON. */
    record Matched(List<EndpointConfig> endpoints, List<EndpointConfig> notJson) {
    }

    private final List<EndpointConfig> endpoints;
    private final JsonPointer typePointer;

    Matcher(List<EndpointConfig> endpoints, JsonPointer typePointer) {
        this.endpoints = List.copyOf(endpoints);
        this.typePointer = typePointer;
    }

    Matched match(Headers headers, byte[] value) {
        Header th = headers.lastHeader("type");
        String typeHeader = th == null || th.value() == null ? null : new String(th.value(), StandardCharsets.UTF_8);
        JsonNode json = null;
        boolean parsed = false;
        List<EndpointConfig> out = new ArrayList<>(endpoints.size());
        List<EndpointConfig> notJson = new ArrayList<>(0);
        for (EndpointConfig e : endpoints) {
            Match m = e.match();
            if (m.all()) {
                out.add(e);
                continue;
            }
            if (m.needsJson(typeHeader != null)) {
                if (!parsed) {
                    parsed = true;
                    json = parse(value);
                }
                if (json == null) {
                    notJson.add(e);
                    continue;
                }
            }
            if (!m.types().isEmpty()) {
                String type = typeHeader != null ? typeHeader : text(json.at(typePointer));
                if (type == null || !m.types().contains(type)) {
                    continue;
                }
            }
            if (m.pointer() != null) {
                String v = text(json.at(m.pointer()));
                if (v == null || !m.equals().contains(v)) {
                    continue;
                }
            }
            out.add(e);
        }
        return new Matched(out, notJson);
    }

    private static JsonNode parse(byte[] value) {
        if (value == null || value.length == 0) {
            return null;
        }
        try {
            return Json.MAPPER.readTree(value);
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    private static String text(JsonNode n) {
        return n == null || n.isMissingNode() || n.isNull() || !n.isValueNode() ? null : n.asText();
    }
}
