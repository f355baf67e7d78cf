package dev.weft.client;

import dev.weft.http.Headers;
import dev.weft.jmh.Defaults;
import org.openjdk.jmh.annotations.Benchmark;

import java.util.List;

/**
 * What the interceptor chain itself costs a call: five links of distinct classes (as {@link CallPath#LINKS}: the
 * call site that runs them sees five), four that hand the call on and one that answers, so that the figure is the
 * chain's frames and its objects alone.
 */
public class ChainBench extends Defaults {
    private static final CallResult ANSWER = new CallResult(Destination.of("http://127.0.0.1:9001"), 200,
            Headers.EMPTY, new byte[0], null, new CallResult.Timings(0, 0, 0, 0), List.of());

    private final List<Interceptor> links = List.of(
            chain -> chain.proceed(),
            chain -> chain.proceed(new Interceptor.Try(Attempt.Kind.FIRST)),
            chain -> chain.proceed(),
            chain -> chain.proceed(),
            chain -> ANSWER);

    @Benchmark
    public CallResult fiveLinks() {
        return new Interceptor.Chain(links, null).proceed();
    }
}
