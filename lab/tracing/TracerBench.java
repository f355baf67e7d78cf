import dev.weft.config.ObserveReaders;
import dev.weft.gateway.observe.Tracer;

import java.net.URI;

/**
 * The tracer's own work on a request's path, in one process: begin, three calls' traceparent, the trace id,
 * end; 2,000,000 requests a round, six rounds, propagation only ({@code Tracer.propagating()}) against the
 * OpenTelemetry tracer with {@code sample: 0} (every request unsampled: the path nine requests in ten take at
 * {@code sample: 0.1}; nothing is exported). Run from the repository's root after a build:
 * <pre>
 * java -cp weft-cli/target/weft.jar lab/tracing/TracerBench.java
 * </pre>
 */
public class TracerBench {
    static long sink;

    static long nanosPerRequest(Tracer t, int n) {
        URI u = URI.create("http://127.0.0.2:19001/b/1?latency=0ms");
        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++) {
            Tracer.RequestTrace r = t.begin(null, null, "GET", "/a/1");
            for (int c = 0; c < 3; c++) {
                sink += r.call("b", u).traceparent().length();
            }
            sink += r.traceId().length();
            r.end("GET /a/{id}", 200);
        }
        return (System.nanoTime() - t0) / n;
    }

    public static void main(String[] args) {
        System.out.println("command: java -cp weft-cli/target/weft.jar lab/tracing/TracerBench.java");
        System.out.println("machine: " + Runtime.getRuntime().availableProcessors() + " cores, "
                + System.getProperty("os.name") + " " + System.getProperty("os.version") + ", JDK "
                + Runtime.version());
        Tracer propagating = Tracer.propagating();
        Tracer unsampled = Tracer.of(new ObserveReaders.Tracing(URI.create("http://127.0.0.1:9"), 0.0), "bench");
        for (int round = 0; round < 6; round++) {
            System.out.println("round " + round + ": propagating " + nanosPerRequest(propagating, 2_000_000)
                    + " ns/request, otel unsampled " + nanosPerRequest(unsampled, 2_000_000) + " ns/request");
        }
        unsampled.close();
        System.out.println("(sink " + sink + ")");
    }
}
