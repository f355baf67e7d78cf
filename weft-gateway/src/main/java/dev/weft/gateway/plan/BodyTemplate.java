package dev.weft.gateway.plan;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A request body to send. Either text with placeholders (sent as written), or a JSON structure whose
 * string leaves are templates: a leaf that is exactly one placeholder, {@code "{orders.body.total}"},
 * takes the referenced value with its JSON type; any other leaf is interpolated text.
 */
public sealed interface BodyTemplate {
    ObjectMapper JSON = dev.weft.json.Json.MAPPER;

    byte[] render(Scope scope);

    Set<String> callsUsed();

    List<Template> templates();

    /** The default Content-Type of what this renders. */
    String contentType();

    /** Builds one from a plain config value: a String, Map, List, Number, Boolean or null. */
    static BodyTemplate of(Object value) {
        if (value instanceof String s) {
            return new Text(Template.parse(s));
        }
        return new Json(node(value));
    }

    private static Node node(Object v) {
        if (v instanceof String s) {
            return new Leaf(Template.parse(s));
        }
        if (v instanceof Map<?, ?> m) {
            Map<String, Node> out = new LinkedHashMap<>();
            m.forEach((k, x) -> out.put(String.valueOf(k), node(x)));
            return new Obj(out);
        }
        if (v instanceof List<?> l) {
            List<Node> out = new ArrayList<>();
            l.forEach(x -> out.add(node(x)));
            return new Arr(out);
        }
        return new Const(JSON.valueToTree(v));
    }

    record Text(Template template) implements BodyTemplate {
        public byte[] render(Scope scope) {
            return template.render(scope, false).getBytes(StandardCharsets.UTF_8);
        }

        public Set<String> callsUsed() {
            return template.callsUsed();
        }

        public List<Template> templates() {
            return List.of(template);
        }

        public String contentType() {
            return "text/plain; charset=utf-8";
        }
    }

    record Json(Node root) implements BodyTemplate {
        public byte[] render(Scope scope) {
            try {
                return JSON.writeValueAsBytes(root.render(scope));
            } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
                throw new IllegalStateException(e);
            }
        }

        public Set<String> callsUsed() {
            Set<String> out = new LinkedHashSet<>();
            templates().forEach(t -> out.addAll(t.callsUsed()));
            return out;
        }

        public List<Template> templates() {
            List<Template> out = new ArrayList<>();
            root.collect(out);
            return out;
        }

        public String contentType() {
            return "application/json";
        }
    }

    /** A node of a JSON body template. */
    sealed interface Node {
        JsonNode render(Scope scope);

        void collect(List<Template> out);
    }

    record Leaf(Template template) implements Node {
        public JsonNode render(Scope scope) {
            Template.Ref single = template.single();
            if (single != null) {
                JsonNode v = scope.resolve(single);
                if (v.isMissingNode()) {
                    throw Scope.MissingValueException.missing("{" + single + "} has no value");
                }
                return v;
            }
            return JsonNodeFactory.instance.textNode(template.render(scope, false));
        }

        public void collect(List<Template> out) {
            out.add(template);
        }
    }

    record Const(JsonNode value) implements Node {
        public JsonNode render(Scope scope) {
            return value;
        }

        public void collect(List<Template> out) {
        }
    }

    record Obj(Map<String, Node> fields) implements Node {
        public JsonNode render(Scope scope) {
            ObjectNode o = JsonNodeFactory.instance.objectNode();
            fields.forEach((k, n) -> o.set(k, n.render(scope)));
            return o;
        }

        public void collect(List<Template> out) {
            fields.values().forEach(n -> n.collect(out));
        }
    }

    record Arr(List<Node> items) implements Node {
        public JsonNode render(Scope scope) {
            ArrayNode a = JsonNodeFactory.instance.arrayNode();
            items.forEach(n -> a.add(n.render(scope)));
            return a;
        }

        public void collect(List<Template> out) {
            items.forEach(n -> n.collect(out));
        }
    }
}
