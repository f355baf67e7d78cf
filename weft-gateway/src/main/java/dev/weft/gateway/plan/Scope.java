package dev.weft.gateway.plan;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.IntNode;
import com.fasterxml.jackson.databind.node.MissingNode;
import com.fasterxml.jackson.databind.node.TextNode;

import java.util.List;
import java.util.Map;
import java.util.function.Function;

/** The values a template can read while one request runs: path, query, headers, earlier calls, item. */
public final class Scope {
    /**
     * A template asked for a value that is not there ({@link Failure.Template}), or read into a body that is
     * not JSON ({@link Failure.NotJson}).
     */
    public static final class MissingValueException extends RuntimeException {
        private final Failure failure;

        private MissingValueException(Failure failure) {
            super(failure.message(), null, false, false);
            this.failure = failure;
        }

        /** A value the template asked for is not there. */
        public static MissingValueException missing(String message) {
            return new MissingValueException(new Failure.Template(message));
        }

        /** A value the template may not put where it would go (a dot-segment in a URL's path). */
        public static MissingValueException refused(String message) {
            return new MissingValueException(new Failure.Template(message));
        }

        /** The template reads into a body that is not JSON. */
        public static MissingValueException notJson(String message) {
            return new MissingValueException(new Failure.NotJson(message));
        }

        /** The call's failure: {@link Failure.Template} or {@link Failure.NotJson}. */
        public Failure failure() {
            return failure;
        }
    }

    private final Map<String, String> pathParams;
    private final Map<String, String> query;
    private final Function<String, String> header;
    private final Function<String, CallOutcome> calls;
    private final JsonNode item;

    public Scope(Map<String, String> pathParams, Map<String, String> query, Function<String, String> header,
                 Function<String, CallOutcome> calls, JsonNode item) {
        this.pathParams = pathParams;
        this.query = query;
        this.header = header;
        this.calls = calls;
        this.item = item;
    }

    public Scope withItem(JsonNode it) {
        return new Scope(pathParams, query, header, calls, it);
    }

    /** The value of a reference; MissingNode when absent. */
    public JsonNode resolve(Template.Ref ref) {
        return switch (ref.root()) {
            case "path" -> text(pathParams.get(ref.path().getFirst()));
            case "query" -> text(query.get(ref.path().getFirst()));
            case "header" -> text(header.apply(ref.path().getFirst()));
            case "item" -> walk(item == null ? MissingNode.getInstance() : item, ref.path());
            default -> {
                CallOutcome c = calls.apply(ref.root());
                if (c == null || !c.ok()) {
                    throw MissingValueException.missing("{" + ref + "}: call '" + ref.root() + "' has no answer");
                }
                if (ref.part().equals("status")) {
                    yield IntNode.valueOf(c.status());
                }
                JsonNode body = c.json();
                if (body == null) {
                    throw MissingValueException.notJson("{" + ref + "}: the body of '" + ref.root() + "' is not JSON");
                }
                yield walk(body, ref.path());
            }
        };
    }

    private static JsonNode text(String v) {
        return v == null ? MissingNode.getInstance() : TextNode.valueOf(v);
    }

    /** Follows field names and array indexes; MissingNode where the path leads nowhere. */
    public static JsonNode walk(JsonNode node, List<String> path) {
        JsonNode n = node;
        for (String p : path) {
            if (n == null || n.isMissingNode()) {
                return MissingNode.getInstance();
            }
            if (n.isArray()) {
                try {
                    n = n.path(Integer.parseInt(p));
                } catch (NumberFormatException e) {
                    return MissingNode.getInstance();
                }
            } else {
                n = n.path(p);
            }
        }
        return n == null ? MissingNode.getInstance() : n;
    }
}
