package dev.weft.gateway.server;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.net.URI;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

/** The paths and queries the gateway refuses before it routes (RequestPaths), as a table of raw targets and a fuzz. */
class RequestPathsTest {
    static Stream<Arguments> targets() {
        return Stream.of(
                // path, query, refused because (a part of the message), or null when taken
                Arguments.of("/b/x", "", null),
                Arguments.of("/", "", null),
                Arguments.of("/b/", "", null),
                Arguments.of("/b/x.json", "a=1&b=%20", null),
                Arguments.of("/b/.well-known/x", "", null),
                Arguments.of("/b/...", "", null),
                Arguments.of("/b/%20x%3A", "", null),
                Arguments.of("/b/x", "filter[name]=a&a[]=1/2?3", null),
                Arguments.of("/b/x", "q={\"a\":1}&b=a|b", null), // encoded where the query is passed on
                Arguments.of("/b/x", "a=\u00ff", null),
                Arguments.of("*", "", null),
                Arguments.of("/b/../admin", "", "dot-segment"),
                Arguments.of("/b/x/../../admin", "", "dot-segment"),
                Arguments.of("/b/./x", "", "dot-segment"),
                Arguments.of("/b/..", "", "dot-segment"),
                Arguments.of("/b/.", "", "dot-segment"),
                Arguments.of("/b/..;/admin", "", "';'"),
                Arguments.of("/b/admin;x/1", "", "';'"),
                Arguments.of("/b/admin;", "", "';'"),
                Arguments.of("/b/a;v=1/c", "", "';'"),
                Arguments.of("/b/..%2fadmin", "", "encoded '/'"),
                Arguments.of("/b/..%2Fadmin", "", "encoded '/'"),
                Arguments.of("/b/..%5cadmin", "", "encoded '\\'"),
                Arguments.of("/projects/group%2Fname", "", "encoded '/'"),
                Arguments.of("/b/x%2f", "", "encoded '/'"),
                Arguments.of("/b/%2e%2e/admin", "", "percent-encoded '.'"),
                Arguments.of("/b/%2E./admin", "", "percent-encoded '.'"),
                Arguments.of("/b/%61dmin", "", "percent-encoded 'a'"),
                Arguments.of("/b/%7e", "", "percent-encoded '~'"),
                Arguments.of("/b//admin", "", "empty segment"),
                Arguments.of("//admin", "", "empty segment"),
                Arguments.of("/b/%00", "", "NUL"),
                Arguments.of("/b/x%zz", "", "two hex digits"),
                Arguments.of("/b/x%2", "", "two hex digits"),
                Arguments.of("/b/x%", "", "two hex digits"),
                Arguments.of("/b/a|b", "", "'|'"),
                Arguments.of("/b/{x}", "", "'{'"),
                Arguments.of("/b/a\\..\\admin", "", "'\\'"),
                Arguments.of("/b/[x]", "", "'['"),
                Arguments.of("/b/caf\u00e9", "", "0xE9"),
                Arguments.of("/b/x", "a=%zz", "the query"),
                Arguments.of("/b/x", "q=100%", "the query"),
                Arguments.of("/b/x", "a=%00", "NUL"));
    }

    @ParameterizedTest(name = "{0} ? {1}")
    @MethodSource("targets")
    void refusesWhatABackendCouldReadAsAnotherPath(String path, String query, String why) {
        String problem = RequestPaths.problem(path, query);
        if (why == null) {
            assertThat(problem).as(path).isNull();
        } else {
            assertThat(problem).as(path).isNotNull().contains(why);
        }
    }

    /**
     * Whatever is taken makes a backend URL (a proxy route's, with the query's unencoded characters encoded) and stays
     * the same path when a backend resolves it: RFC 3986's remove_dot_segments ({@link URI#normalize}) changes nothing,
     * and no segment is empty but the last.
     */
    @Property(tries = 3000)
    void whatIsTakenIsAUriThatNormalisesToItself(@ForAll("paths") String path, @ForAll("queries") String query) {
        if (RequestPaths.problem(path, query) != null) {
            return;
        }
        dev.weft.gateway.plan.ProxyRoute route = new dev.weft.gateway.plan.ProxyRoute("/", URI.create("http://backend/"),
                java.time.Duration.ofSeconds(1), 1024, null, null, false, null, "test:1:1", false);
        assertThatCode(() -> route.backendUri(path, query)).as(path + " ? " + query).doesNotThrowAnyException();
        assertThat(URI.create("http://backend" + path).normalize().getRawPath()).as(path).isEqualTo(path);
        assertThat(path.substring(0, Math.max(0, path.length() - 1))).as(path).doesNotContain("//");
        assertThat(path).doesNotContain(";").doesNotContainIgnoringCase("%2f").doesNotContainIgnoringCase("%5c");
    }

    @Provide
    Arbitrary<String> paths() {
        Arbitrary<String> piece = Arbitraries.of("/", ".", "..", "a", "b", "%2e", "%2E", "%2f", "%2F", "%5c", ";", "=",
                "%", "%4", "%41", "%20", "%00", "|", "\\", "~", "-", ":", "@", "[", "é", "?", " ");
        return piece.list().ofMinSize(0).ofMaxSize(12).map(l -> "/" + String.join("", l));
    }

    @Provide
    Arbitrary<String> queries() {
        Arbitrary<String> piece = Arbitraries.of("a", "=", "&", "%20", "%", "%zz", "[", "]", "|", "/", "?", "\u00ff", "",
                "{", "\"", "^", "`", "<", "\\");
        return piece.list().ofMaxSize(6).map(l -> String.join("", l));
    }
}
