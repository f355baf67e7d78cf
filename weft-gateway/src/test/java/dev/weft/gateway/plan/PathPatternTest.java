package dev.weft.gateway.plan;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class PathPatternTest {
    static Stream<Arguments> matches() {
        return Stream.of(
                // pattern, path, captured values (null: no match)
                Arguments.of("/", "/", Map.of()),
                Arguments.of("/", "/x", null),
                Arguments.of("/orders", "/orders", Map.of()),
                Arguments.of("/orders", "/orders/", Map.of()),
                Arguments.of("/orders/", "/orders", Map.of()),
                Arguments.of("/orders", "/Orders", null),
                Arguments.of("/orders", "/orders/7", null),
                Arguments.of("/orders/{id}", "/orders/7", Map.of("id", "7")),
                Arguments.of("/orders/{id}", "/orders/7/", Map.of("id", "7")),
                Arguments.of("/orders/{id}", "/orders", null),
                Arguments.of("/orders/{id}", "/orders/", null),
                Arguments.of("/orders/{id}", "/orders//", null),
                Arguments.of("/orders/{id}", "/orders/7/items", null),
                Arguments.of("/orders/{id}/items", "/orders/7/items", Map.of("id", "7")),
                Arguments.of("/orders/{id}/items", "/orders//items", null),
                Arguments.of("/orders/{id}/items", "/orders/7/other", null),
                Arguments.of("/a/{x}/b/{y-2}", "/a/1/b/2", Map.of("x", "1", "y-2", "2")),
                Arguments.of("/u/{name}", "/u/a%20b", Map.of("name", "a b")),
                Arguments.of("/u/{name}", "/u/caf%C3%A9", Map.of("name", "café")),
                Arguments.of("/u/{name}", "/u/a%2Fb", Map.of("name", "a/b")),
                Arguments.of("/u/{name}", "/u/a+b", Map.of("name", "a+b")),
                Arguments.of("/u/{name}", "/u/100%25", Map.of("name", "100%")),
                Arguments.of("/u/{name}", "/u/%zz", null),
                Arguments.of("/u/{name}", "/u/%4", null),
                Arguments.of("/u/{name}", "/u/ab%", null),
                Arguments.of("/a%20b", "/a%20b", Map.of()),
                Arguments.of("/a%20b", "/a b", null));
    }

    @ParameterizedTest(name = "{0} against {1}")
    @MethodSource("matches")
    void match(String pattern, String path, Map<String, String> expected) {
        assertThat(PathPattern.parse(pattern).match(path)).isEqualTo(expected);
    }

    @Test
    void capturesKeepTheirOrder() {
        PathPattern p = PathPattern.parse("/{b}/x/{a}");
        assertThat(p.parameterNames()).containsExactly("b", "a");
        assertThat(p.match("/2/x/1").keySet()).containsExactly("b", "a");
        assertThat(PathPattern.parse("/x").parameterNames()).isEmpty();
        assertThat(p).hasToString("/{b}/x/{a}");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
            orders            | a route path starts with /, got 'orders'
            ''                | a route path starts with /
            /o/{}             | path parameter '{}' needs a name
            /o/{1x}           | path parameter '{1x}' needs a name
            /o/{a b}          | path parameter '{a b}' needs a name
            /o/{a.b}          | path parameter '{a.b}' needs a name
            /o/{id}/{id}      | path parameter {id} appears twice
            /o/x{id}          | a path parameter takes a whole segment, got 'x{id}'
            /o/{id}x          | a path parameter takes a whole segment, got '{id}x'
            /o/{id            | a path parameter takes a whole segment, got '{id'
            /o/id}            | a path parameter takes a whole segment, got 'id}'
            """)
    void badPatternsAreRefusedSayingWhy(String pattern, String message) {
        assertThatThrownBy(() -> PathPattern.parse(pattern)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(message);
    }

    @Test
    void decodeLeavesPlainSegmentsAlone() {
        String plain = "plain-segment";
        assertThat(PathPattern.decode(plain)).isSameAs(plain);
        assertThat(PathPattern.decode("%41%62c")).isEqualTo("Abc");
        assertThat(PathPattern.decode("é%20x")).as("a non-ASCII character kept as it is").isEqualTo("é x");
        assertThat(List.of("%", "%%", "%g0", "a%0")).allSatisfy(s -> assertThat(PathPattern.decode(s)).isNull());
    }
}
