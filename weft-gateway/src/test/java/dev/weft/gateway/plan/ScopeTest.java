package dev.weft.gateway.plan;

import com.fasterxml.jackson.databind.JsonNode;
import dev.weft.client.CallFailure;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static dev.weft.gateway.plan.TemplateTest.json;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ScopeTest {
    private static final JsonNode DOC = json("{\"a\":{\"b\":[10,{\"c\":\"x\"}]},\"n\":null,\"e\":[],\"1\":\"one\"}");

    private static CallOutcome answered(String name, int status, String body) {
        return new CallOutcome(name, status, body.getBytes(StandardCharsets.UTF_8), null, 0, 1); // parsed lazily
    }

    private static Scope scope(Map<String, CallOutcome> calls, JsonNode item) {
        return new Scope(Map.of("id", "7"), Map.of("q", ""), h -> h.equals("h") ? "v" : null, calls::get, item);
    }

    private static JsonNode resolve(Scope s, String expr) {
        return s.resolve(Template.Ref.parse(expr));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', quoteCharacter = '`', textBlock = """
            # path into DOC     | the value as JSON, or MISSING
            ``                  | `{"a":{"b":[10,{"c":"x"}]},"n":null,"e":[],"1":"one"}`
            a                   | `{"b":[10,{"c":"x"}]}`
            a.b                 | `[10,{"c":"x"}]`
            a.b.0               | 10
            a.b.1.c             | `"x"`
            a.b.2               | MISSING
            a.b.-1              | MISSING
            a.b.x               | MISSING
            a.b.0.c             | MISSING
            a.nope.c            | MISSING
            n                   | null
            n.x                 | MISSING
            e.0                 | MISSING
            1                   | `"one"`
            """)
    void walkFollowsFieldsAndIndexes(String path, String expected) {
        List<String> segs = path.isEmpty() ? List.of() : Arrays.asList(path.split("\\."));
        JsonNode v = Scope.walk(DOC, segs);
        assertThat(v.isMissingNode() ? "MISSING" : v.toString()).isEqualTo(expected);
    }

    @Test
    void requestValuesAreTextAndAbsentOnesMissing() {
        Scope s = scope(Map.of(), null);
        assertThat(resolve(s, "path.id").textValue()).isEqualTo("7");
        assertThat(resolve(s, "query.q").textValue()).as("present but empty is a value").isEmpty();
        assertThat(resolve(s, "header.h").textValue()).isEqualTo("v");
        assertThat(resolve(s, "path.nope").isMissingNode()).isTrue();
        assertThat(resolve(s, "query.nope").isMissingNode()).isTrue();
        assertThat(resolve(s, "header.nope").isMissingNode()).isTrue();
        assertThat(resolve(s, "item").isMissingNode()).as("no item outside foreach").isTrue();
        assertThat(resolve(s, "item.x").isMissingNode()).isTrue();
    }

    @Test
    void theItemIsPerScope() {
        Scope outer = scope(Map.of(), null);
        Scope first = outer.withItem(json("{\"id\":1}"));
        Scope second = outer.withItem(json("[\"x\"]"));
        assertThat(resolve(first, "item.id").intValue()).isEqualTo(1);
        assertThat(resolve(second, "item.0").textValue()).isEqualTo("x");
        assertThat(resolve(second, "item").isArray()).isTrue();
        assertThat(resolve(first, "path.id").textValue()).as("the rest is shared").isEqualTo("7");
        assertThat(resolve(outer, "item").isMissingNode()).isTrue();
    }

    @Test
    void earlierCallsGiveTheirStatusAndBody() {
        Scope s = scope(Map.of("u", answered("u", 203, " {\"id\":5,\"list\":[1,2]} \n")), null);
        assertThat(resolve(s, "u.status").intValue()).isEqualTo(203);
        assertThat(resolve(s, "u.body.id").intValue()).isEqualTo(5);
        assertThat(resolve(s, "u.body.list.1").intValue()).isEqualTo(2);
        assertThat(resolve(s, "u.body").isObject()).isTrue();
        assertThat(resolve(s, "u.body.nope").isMissingNode()).as("absent in the body: missing, not an error").isTrue();
    }

    @Test
    void aBodyThatIsNotOneJsonValueIsNotJson() {
        for (String body : List.of("hello", "", "  ", "{\"a\":1} trailing", "{\"a\":")) {
            Scope s = scope(Map.of("t", answered("t", 200, body)), null);
            assertThatThrownBy(() -> resolve(s, "t.body.a")).as(body)
                    .isInstanceOfSatisfying(Scope.MissingValueException.class, e -> {
                        assertThat(e.failure()).isInstanceOf(Failure.NotJson.class);
                        assertThat(e.failure().label()).isEqualTo("not-json");
                        assertThat(e.getMessage()).isEqualTo("{t.body.a}: the body of 't' is not JSON");
                    });
            assertThat(resolve(s, "t.status").intValue()).as("the status of a text answer is there").isEqualTo(200);
        }
    }

    @Test
    void aFailedOrUnknownCallHasNoAnswer() {
        CallOutcome failed = CallOutcome.failed("f", new Failure.Call(CallFailure.status(503)), 0);
        Scope s = scope(Map.of("f", failed), null);
        for (String expr : List.of("f.status", "f.body.x", "gone.body", "gone.status")) {
            assertThatThrownBy(() -> resolve(s, expr)).as(expr)
                    .isInstanceOfSatisfying(Scope.MissingValueException.class, e -> {
                        assertThat(e.failure()).isInstanceOf(Failure.Template.class);
                        assertThat(e.getMessage()).endsWith("has no answer");
                    });
        }
    }
}
