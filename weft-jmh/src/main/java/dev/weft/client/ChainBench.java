package dev.weft.client;

import dev.weft.http.Headers;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * What the interceptor chain itself costs a call: five links of distinct classes (as {@link CallPath#LINKS}: the
 * call site that runs them sees five), four that hand the call on and one that answers, so that the figure is the
 * chain's frames and its objects alone.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Thread)
public class ChainBench {
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
