package dev.weft.gateway.compose;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.weft.core.Durations;
import dev.weft.server.JsonText;
import dev.weft.server.ServerResponse;
import dev.weft.gateway.plan.CallOutcome;
import dev.weft.gateway.plan.CallSpec;
import dev.weft.gateway.plan.Failure;
import dev.weft.gateway.plan.RoutePlan;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Builds the answer of a route from its calls' outcomes.
 *
 * <ul>
 *   <li>Body: an object keyed by call name (or its {@code as}); with {@code merge}, the top-level fields
 *       of every object body merged in call order (a later call wins a colliding key; a call with
 *       {@code as} stays under that key). {@code pick} / {@code omit} filter a body's top-level fields.
 *       A body that is not exactly one JSON value is included as a string. With no merge, filter or
 *       failure, bodies are copied as sent ({@link #spliced}).</li>
 *   <li>All required calls done: 200, or the status of the {@code status_from} call (passed through even
 *       when it is an error status). Failed optional calls are left out and named in a {@code weft}
 *       field.</li>
 *   <li>A required call failed: 502 naming the call and its reason, with what did complete; 504 instead
 *       when it failed because the route's deadline passed.</li>
 *   <li>Every answer carries {@code Weft-Completed: true|false} (true when every call succeeded).</li>
 * </ul>
 */
public final class Composer {
    private static final ObjectMapper JSON = dev.weft.json.Json.MAPPER;

    private Composer() {
    }

    public static ServerResponse compose(RoutePlan plan, Map<String, CallOutcome> outcomes, boolean deadlinePassed) {
        ServerResponse spliced = spliced(plan, outcomes);
        if (spliced != null) {
            return spliced;
        }
        ObjectNode body = JsonNodeFactory.instance.objectNode();
        ObjectNode failed = JsonNodeFactory.instance.objectNode();
        CallOutcome firstRequiredFailure = null;
        boolean allOk = true;
        for (CallSpec c : plan.calls()) {
            CallOutcome o = outcomes.get(c.name());
            // status_from passes an error status through (404 stays 404), but not a failure of another kind
            // that happened to come with a status (a too-large 200 is still a failed call)
            boolean passThrough = c.name().equals(plan.statusFrom()) && o.status() > 0
                    && (o.ok() || o.failure().isStatus());
            if (!o.ok()) {
                allOk = false;
                failed.put(c.name(), o.failure().label());
                if (!c.optional() && !passThrough && firstRequiredFailure == null) {
                    firstRequiredFailure = o;
                }
                if (!passThrough) {
                    continue;
                }
            }
            JsonNode value = filtered(c, o);
            if (plan.merge() && c.as() == null && value.isObject()) {
                body.setAll((ObjectNode) value);
            } else {
                body.set(c.key(), value);
            }
        }
        String completed = Boolean.toString(allOk);
        if (firstRequiredFailure != null) {
            Failure failure = firstRequiredFailure.failure();
            boolean timedOut = deadlinePassed && failure.isTimeout();
            ObjectNode err = JsonNodeFactory.instance.objectNode();
            err.put("error", timedOut
                    ? "the deadline of " + Durations.format(plan.timeout()) + " passed before call '"
                            + firstRequiredFailure.name() + "' finished"
                    : "call '" + firstRequiredFailure.name() + "' failed: " + failure.label());
            err.put("route", plan.id());
            err.put("call", firstRequiredFailure.name());
            err.put("reason", failure.label());
            err.put("message", failure.message());
            err.set("failed", failed);
            err.set("completed", body);
            return json(timedOut ? 504 : 502, err, completed, failed);
        }
        if (!failed.isEmpty()) {
            ObjectNode weft = JsonNodeFactory.instance.objectNode();
            weft.put("completed", false);
            weft.set("failed", failed);
            body.set("weft", weft);
        }
        int status = answerStatus(plan, outcomes);
        return json(status, body, completed, failed);
    }

    /**
     * 200, or with {@code status_from} that call's status; one outside 100-599 (RFC 9110 section 15: not HTTP's, a
     * client reads it as a 5xx) is answered 502, as a proxy route answers it.
     */
    private static int answerStatus(RoutePlan plan, Map<String, CallOutcome> outcomes) {
        if (plan.statusFrom() == null) {
            return 200;
        }
        int status = outcomes.get(plan.statusFrom()).status();
        return RelayAnswer.validStatus(status) ? status : 502;
    }

    /**
     * The answer when every call succeeded and none is merged or filtered: {@code {"key": body, ...}} with
     * each body copied as the backend sent it (less surrounding whitespace), once a streaming parse has
     * checked that it is exactly one JSON value. Null when that does not apply (then the tree path below
     * gives the answer). Why: parsing every body into a tree only to write it out again was about a third
     * of the gateway's allocation in `weft lab system-a` (async-profiler, 1 s latency, 4,800 in flight).
     */
    private static ServerResponse spliced(RoutePlan plan, Map<String, CallOutcome> outcomes) {
        if (plan.merge()) {
            return null;
        }
        List<CallSpec> calls = plan.calls();
        int n = calls.size();
        byte[][] keys = new byte[n][];
        byte[][] bodies = new byte[n][];
        int[] from = new int[n];
        int[] to = new int[n];
        int size = 2 + Math.max(0, n - 1); // the braces and the commas
        for (int i = 0; i < n; i++) {
            CallSpec c = calls.get(i);
            CallOutcome o = outcomes.get(c.name());
            if (!o.ok() || !c.pick().isEmpty() || !c.omit().isEmpty() || !isOneJsonValue(o.body())) {
                return null;
            }
            for (int j = 0; j < i; j++) {
                if (calls.get(j).key().equals(c.key())) {
                    return null; // two calls under one key: the tree keeps the later one
                }
            }
            byte[] b = o.body();
            int f = 0;
            int t = b.length;
            while (isJsonSpace(b[f])) {
                f++;
            }
            while (isJsonSpace(b[t - 1])) {
                t--;
            }
            keys[i] = JsonText.quote(c.key()).getBytes(StandardCharsets.UTF_8);
            bodies[i] = b;
            from[i] = f;
            to[i] = t;
            size += keys[i].length + 1 + (t - f);
        }
        // written into one array of the answer's exact size: no stream that grows and no copy at the end
        byte[] out = new byte[size];
        int p = 0;
        out[p++] = '{';
        for (int i = 0; i < n; i++) {
            if (i > 0) {
                out[p++] = ',';
            }
            System.arraycopy(keys[i], 0, out, p, keys[i].length);
            p += keys[i].length;
            out[p++] = ':';
            System.arraycopy(bodies[i], from[i], out, p, to[i] - from[i]);
            p += to[i] - from[i];
        }
        out[p] = '}';
        int status = answerStatus(plan, outcomes);
        return ServerResponse.json(status, out).withHeader("Weft-Completed", "true");
    }

    /**
     * Whether {@code body} is exactly one JSON value (RFC 8259: no comments, no trailing data, no BOM) in well-formed
     * UTF-8: copied as sent, an overlong form (say {@code C0 A2} for a quote) would reach a lenient client as the
     * character it spells.
     */
    static boolean isOneJsonValue(byte[] body) {
        return isOneJsonValueIgnoringEncoding(body) && wellFormedUtf8(body);
    }

    /**
     * Whether {@code b} is well-formed UTF-8 (RFC 3629: no overlong form, no surrogate, nothing above U+10FFFF). ASCII,
     * the common body, is one pass over the bytes; others go through the JDK's strict decoder.
     */
    static boolean wellFormedUtf8(byte[] b) {
        int bits = 0;
        for (byte x : b) {
            bits |= x;
        }
        if (bits >= 0) {
            return true;
        }
        try {
            StandardCharsets.UTF_8.newDecoder().onMalformedInput(java.nio.charset.CodingErrorAction.REPORT)
                    .onUnmappableCharacter(java.nio.charset.CodingErrorAction.REPORT)
                    .decode(java.nio.ByteBuffer.wrap(b));
            return true;
        } catch (java.nio.charset.CharacterCodingException e) {
            return false;
        }
    }

    private static boolean isOneJsonValueIgnoringEncoding(byte[] body) {
        int i = 0;
        while (i < body.length && isJsonSpace(body[i])) {
            i++;
        }
        if (i == body.length || body[i] == (byte) 0xEF) {
            return false; // empty, or a byte order mark (which must not end up inside the answer)
        }
        try (JsonParser p = JSON.getFactory().createParser(body)) {
            JsonToken t = p.nextToken();
            int depth = 0;
            while (t != null) {
                if (t.isStructStart()) {
                    depth++;
                } else if (t.isStructEnd()) {
                    depth--;
                } else if (t == JsonToken.VALUE_STRING) {
                    p.getTextLength(); // decodes the string: bad escapes or UTF-8 fail here, not in the answer
                }
                if (depth == 0) {
                    return p.nextToken() == null; // one whole value, then nothing
                }
                t = p.nextToken();
            }
            return false;
        } catch (IOException e) {
            return false;
        }
    }

    private static boolean isJsonSpace(byte b) {
        return b == ' ' || b == '\t' || b == '\n' || b == '\r';
    }

    private static JsonNode filtered(CallSpec c, CallOutcome o) {
        JsonNode v = o.json();
        if (v == null) {
            return o.body().length == 0 ? JsonNodeFactory.instance.nullNode()
                    : JsonNodeFactory.instance.textNode(new String(o.body(), StandardCharsets.UTF_8));
        }
        if (!v.isObject() || (c.pick().isEmpty() && c.omit().isEmpty())) {
            return v;
        }
        ObjectNode out = JsonNodeFactory.instance.objectNode();
        if (!c.pick().isEmpty()) {
            for (String f : c.pick()) {
                if (v.has(f)) {
                    out.set(f, v.get(f));
                }
            }
        } else {
            out.setAll((ObjectNode) v);
        }
        c.omit().forEach(out::remove);
        return out;
    }

    private static ServerResponse json(int status, JsonNode body, String completed, ObjectNode failed) {
        byte[] bytes;
        try {
            bytes = JSON.writeValueAsBytes(body);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
        ServerResponse r = ServerResponse.json(status, bytes).withHeader("Weft-Completed", completed);
        if (!failed.isEmpty()) {
            List<String> parts = new ArrayList<>();
            failed.properties().forEach(e -> parts.add(e.getKey() + "=" + e.getValue().asText()));
            r = r.withHeader("Weft-Failed", String.join(", ", parts));
        }
        return r;
    }
}
