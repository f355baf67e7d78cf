package dev.weft.dispatch.engine;

import com.fasterxml.jackson.core.JsonPointer;
import com.fasterxml.jackson.databind.JsonNode;
import dev.weft.config.Json;
import dev.weft.dispatch.config.Match;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Which lanes a record goes to. The value is parsed as JSON at most once, and only when an endpoint
 * matches on JSON; a record that is not JSON matches no such endpoint (counted per endpoint as
 * {@code not_json}) and never stops the consumer.
 */
final class Matcher {
    private final List<Lane> lanes;
    private final JsonPointer typePointer;

    Matcher(List<Lane> lanes, JsonPointer typePointer) {
        this.lanes = lanes;
        this.typePointer = typePointer;
    }

    List<Lane> match(ConsumerRecord<byte[], byte[]> rec) {
        Header th = rec.headers().lastHeader("type");
        String typeHeader = th == null || th.value() == null ? null : new String(th.value(), StandardCharsets.UTF_8);
        JsonNode json = null;
        boolean parsed = false;
        List<Lane> out = new ArrayList<>(lanes.size());
        for (Lane lane : lanes) {
            Match m = lane.config().match();
            if (m.all()) {
                out.add(lane);
                continue;
            }
            if (m.needsJson(typeHeader != null)) {
                if (!parsed) {
                    parsed = true;
                    json = parse(rec.value());
                }
                if (json == null) {
                    lane.countNotJson();
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
            out.add(lane);
        }
        return out;
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
