package dev.weft.gateway.plan;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

import java.net.URI;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A call's URL, as the plan runner makes it for each call: the template rendered with the request's values, then
 * parsed into the URI the client takes. {@code parseWhole}: the rendered text parsed whole ({@link URI#create}, the
 * host's address parsed for every call); {@code toUri}: only what follows the origin written in the config.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(org.openjdk.jmh.annotations.Scope.Thread)
public class UrlBench {
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
