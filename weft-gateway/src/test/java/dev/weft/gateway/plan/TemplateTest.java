package dev.weft.gateway.plan;

import com.fasterxml.jackson.databind.JsonNode;
import dev.weft.json.Json;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.net.URI;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TemplateTest {
    /** path {id=7, sp="a b"}, query {page=2}, header {x-id=h1}, call 'user' answered with a JSON body. */
    private static final Scope SCOPE = scope();

    private static Scope scope() {
        JsonNode user = json("{\"id\":42,\"name\":\"Zoë\",\"tags\":[\"a\",\"b/c\"],\"none\":null,\"obj\":{\"k\":1}}");
        CallOutcome ok = new CallOutcome("user", 201, new byte[0], user, null, 0, 1);
        return new Scope(Map.of("id", "7", "sp", "a b"), Map.of("page", "2"),
                h -> h.equals("x-id") ? "h1" : null, n -> n.equals("user") ? ok : null, json("{\"sku\":\"s-1\"}"));
    }

    static JsonNode json(String s) {
        try {
            return Json.MAPPER.readTree(s);
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * A value that holds a dot-segment is refused in a URL's path, encoded or not ({@code ..} stays {@code ..} when
     * encoded, {@code ../x} becomes {@code ..%2Fx}: a step up for a backend that resolves it, or decodes {@code %2F}
     * first); in a query, and in text, it is a value like any other.
     */
    @org.junit.jupiter.params.ParameterizedTest(name = "{0}")
    @org.junit.jupiter.params.provider.ValueSource(strings = {"..", ".", "../admin", "a/../b", "x\\..", "./x"})
    void aValueWithADotSegmentIsRefusedInAUrlsPath(String value) {
        Scope s = new Scope(Map.of("id", value), Map.of("q", value), h -> null, n -> null, null);
        assertThatThrownBy(() -> Template.parse("http://h/items/{path.id}/detail").render(s, true))
                .isInstanceOfSatisfying(Scope.MissingValueException.class, e -> {
                    assertThat(e.failure()).isInstanceOf(Failure.Template.class);
                    assertThat(e.getMessage()).contains("dot-segment");
                });
        assertThat(Template.parse("http://h/items?q={query.q}").render(s, true)).startsWith("http://h/items?q=");
        assertThat(Template.parse("{path.id}").render(s, false)).isEqualTo(value);
    }

    @org.junit.jupiter.params.ParameterizedTest(name = "{0}")
    @org.junit.jupiter.params.provider.ValueSource(strings = {"...", "a..b", ".x", "..x", "x.", "a.b/c"})
    void aValueWithDotsThatIsNoDotSegmentGoesIntoAPath(String value) {
        Scope s = new Scope(Map.of("id", value), Map.of(), h -> null, n -> null, null);
        assertThat(Template.parse("http://h/items/{path.id}").render(s, true)).isEqualTo("http://h/items/"
                + Template.encode(value));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', quoteCharacter = '`', textBlock = """
            # template                          | rendered as text                | rendered for a URL
            plain text                          | plain text                      | plain text
            ``                                  | ``                              | ``
            /users/{path.id}                    | /users/7                        | /users/7
            /s/{path.sp}?q={query.page}         | /s/a b?q=2                      | /s/a%20b?q=2
            {header.x-id}                       | h1                              | h1
            { path.id }                         | 7                               | 7
            {user.body.id}                      | 42                              | 42
            {user.body.name}                    | Zoë                             | Zo%C3%AB
            {user.body.tags.1}                  | b/c                             | b%2Fc
            {user.body.tags}                    | `["a","b/c"]`                   | %5B%22a%22%2C%22b%2Fc%22%5D
            {user.body.obj}                     | `{"k":1}`                       | %7B%22k%22%3A1%7D
            {user.status}                       | 201                             | 201
            {item.sku}                          | s-1                             | s-1
            {{literal}}                         | {literal}                       | {literal}
            {{{path.id}}}                       | {7}                             | {7}
            a}b                                 | a}b                             | a}b
            {path.id}}                          | 7}                              | 7}
            a b/{path.id}?x=~                   | a b/7?x=~                       | a b/7?x=~
            """)
    void renders(String template, String text, String url) {
        Template t = Template.parse(template);
        assertThat(t.render(SCOPE, false)).isEqualTo(text);
        assertThat(t.render(SCOPE, true)).as("literals are kept, values encoded").isEqualTo(url);
        assertThat(t.source()).isEqualTo(template);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
            {path.nope}          | {path.nope} has no value
            {query.nope}         | {query.nope} has no value
            {header.nope}        | {header.nope} has no value
            {user.body.nope}     | {user.body.nope} has no value
            {user.body.none}     | {user.body.none} has no value
            {user.body.tags.9}   | {user.body.tags.9} has no value
            {user.body.tags.x}   | {user.body.tags.x} has no value
            {user.body.id.deep}  | {user.body.id.deep} has no value
            {item.nope}          | {item.nope} has no value
            {other.body.x}       | {other.body.x}: call 'other' has no answer
            """)
    void aMissingValueFailsTheCallAsTemplate(String template, String message) {
        assertThatThrownBy(() -> Template.parse(template).render(SCOPE, false))
                .isInstanceOfSatisfying(Scope.MissingValueException.class, e -> {
                    assertThat(e.failure()).isInstanceOf(Failure.Template.class);
                    assertThat(e.failure().label()).isEqualTo("template");
                    assertThat(e.getMessage()).isEqualTo(message);
                });
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', quoteCharacter = '`', textBlock = """
            x{path.id                 | placeholder at offset 1 has no closing }
            {                         | placeholder at offset 0 has no closing }
            {}                        | empty placeholder {}
            {  }                      | empty placeholder {}
            {path}                    | expected {path.NAME}, got {path}
            {path.a.b}                | expected {path.NAME}, got {path.a.b}
            {query}                   | expected {query.NAME}, got {query}
            {path..a}                 | placeholder {path..a} has an empty segment
            {user.body.}              | placeholder {user.body.} has an empty segment
            {user}                    | expected {path.X}, {query.X}, {header.X}, {item...}, {CALL.body...} or {CALL.status}, got {user}
            {user.headers}            | got {user.headers}
            {user.status.code}        | {CALL.status} takes no path, got {user.status.code}
            `{a{b}`                   | expected {path.X}
            """)
    void badTemplatesAreRefusedSayingWhy(String template, String message) {
        assertThatThrownBy(() -> Template.parse(template)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(message);
    }

    @Test
    void referencesAndTheCallsTheyRead() {
        Template t = Template.parse("/{path.id}/{user.body.a.0}/{item}/{user.status}/{order.body}");
        assertThat(t.refs()).extracting(Template.Ref::toString)
                .containsExactly("path.id", "user.body.a.0", "item", "user.status", "order.body");
        assertThat(t.callsUsed()).containsExactly("user", "order");
        assertThat(t.refs().get(1)).isEqualTo(new Template.Ref("user", "body", List.of("a", "0")));
        assertThat(t.refs().get(1).isCall()).isTrue();
        assertThat(t.refs().get(0).isCall()).isFalse();
        assertThat(t.single()).as("more than one part").isNull();
        assertThat(Template.parse("{user.body.id}").single()).isEqualTo(new Template.Ref("user", "body", List.of("id")));
        assertThat(Template.parse("x{user.body.id}").single()).isNull();
        assertThat(Template.parse("no placeholders").refs()).isEmpty();
    }

    @Test
    void encodeKeepsOnlyUnreservedCharacters() {
        assertThat(Template.encode("AZaz09-._~")).isEqualTo("AZaz09-._~");
        assertThat(Template.encode(" !#$&'()*+,/:;=?@[]%")).isEqualTo(
                "%20%21%23%24%26%27%28%29%2A%2B%2C%2F%3A%3B%3D%3F%40%5B%5D%25");
        assertThat(Template.encode("é€😀")).isEqualTo("%C3%A9%E2%82%AC%F0%9F%98%80");
        assertThat(Template.encode("")).isEmpty();
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', quoteCharacter = '`', textBlock = """
            # URL template                                 | origin parsed once (-: none, parsed whole)
            http://b:9001/users/{path.id}                  | http://b:9001
            http://127.0.0.1:9001/s/{path.sp}?q={query.page}#f | http://127.0.0.1:9001
            https://[::1]:8443/x/{user.body.name}          | https://[::1]:8443
            http://user@b/x?a={user.body.tags}             | http://user@b
            HTTP://B:1/{user.body.obj}                     | HTTP://B:1
            http://b:9001//{path.id}                       | http://b:9001
            http://b:9001/a b/{path.id}                    | http://b:9001
            http://b:9001/a/../{path.id}/./c               | http://b:9001
            http://{path.id}:9001/x                        | -
            http://b:{path.id}/x                           | -
            http://b:9001{path.id}                         | -
            http://b:9001?q={path.id}                      | -
            {header.x-id}/x                                | -
            /relative/{path.id}                            | -
            http://b:99999999999/x/{path.id}               | -
            """)
    void aUrlIsTheUriTheWholeRenderedTextParsesTo(String source, String origin) {
        Template t = Template.parse(source);
        assertThat(t.origin() == null ? "-" : t.origin().toString()).isEqualTo(origin);
        String rendered = t.render(SCOPE, true);
        URI whole;
        try {
            whole = URI.create(rendered);
        } catch (IllegalArgumentException e) {
            // the same failure, with the same message (it names the whole URL and where it broke)
            assertThatThrownBy(() -> t.toUri(rendered)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessage(e.getMessage());
            return;
        }
        URI u = t.toUri(rendered);
        assertThat(u).isEqualTo(whole);
        assertThat(u.toString()).isEqualTo(whole.toString());
        assertThat(u.getScheme()).isEqualTo(whole.getScheme());
        assertThat(u.getHost()).isEqualTo(whole.getHost());
        assertThat(u.getPort()).isEqualTo(whole.getPort());
        assertThat(u.getRawAuthority()).isEqualTo(whole.getRawAuthority());
        assertThat(u.getRawPath()).isEqualTo(whole.getRawPath());
        assertThat(u.getRawQuery()).isEqualTo(whole.getRawQuery());
        assertThat(u.getRawFragment()).isEqualTo(whole.getRawFragment());
    }
}
