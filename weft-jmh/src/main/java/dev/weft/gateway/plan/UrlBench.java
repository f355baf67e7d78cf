package dev.weft.gateway.plan;

import dev.weft.jmh.Defaults;
import org.openjdk.jmh.annotations.Benchmark;

import java.net.URI;
import java.util.Map;

/**
 * A call's URL, as the plan runner makes it for each call: the template rendered with the request's values, then
 * parsed into the URI the client takes. {@code parseWhole}: the rendered text parsed whole ({@link URI#create}, the
 * host's address parsed for every call); {@code toUri}: only what follows the origin written in the config.
 */
public class UrlBench extends Defaults {
    private final Template url = Template.parse("http://127.0.0.1:9001/b/{path.id}?page={query.page}");
    private final Scope scope = new Scope(Map.of("id", "42"), Map.of("page", "2"), h -> null, n -> null, null);

    @Benchmark
    public String render() {
        return url.render(scope, true);
    }

    @Benchmark
    public URI renderAndParseWhole() {
        return URI.create(url.render(scope, true));
    }

    @Benchmark
    public URI renderToUri() {
        return url.toUri(url.render(scope, true));
    }
}
