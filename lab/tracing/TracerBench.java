import com.sun.net.httpserver.HttpServer;
import dev.weft.client.Attempt;
import dev.weft.client.CallResult;
import dev.weft.http.Headers;
import dev.weft.observe.ObserveReaders;
import dev.weft.gateway.observe.Tracer;

import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.List;

/**
 * The tracer's own work on a request's path, in one process: begin, three calls (traceparent, end), the trace id,
 * end; for propagation only ({@code Tracer.propagating()}), the OTLP tracer with every request unsampled
 * ({@code sample: 0}, the path nine requests in ten take at {@code sample: 0.1}) and with every request recorded
 * ({@code sample: 1.0}, exported to a receiver in this process that answers 200). Per request: the calling
 * thread's CPU time and the bytes it allocated, and the whole process's CPU time (the calling thread, the export
 * thread, the collector, the JIT, and the receiver, which only reads what it is sent).
 * Eight rounds of 200,000 requests each, pausing 1 ms every 64 requests so that the export keeps up (the last
 * figure, the bytes the receiver got per recorded request, says whether it did: ~870 when no span was dropped).
 * Run from the repository's root after a build:
 * <pre>
 * java -cp weft-cli/target/weft.jar lab/tracing/TracerBench.java
 * </pre>
 */
public class TracerBench {
    static long sink;
    static final com.sun.management.ThreadMXBean MX =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    static final com.sun.management.OperatingSystemMXBean OS =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    static final java.util.concurrent.atomic.AtomicLong RECEIVED = new java.util.concurrent.atomic.AtomicLong();
    static final URI BACKEND = URI.create("http://127.0.0.2:19001/b/1?latency=0ms");
    static final CallResult OK = new CallResult(null, 200, Headers.EMPTY, new byte[0], null, CallResult.Timings.NONE,
            List.of(new Attempt(1, Attempt.Kind.FIRST, 200, null, 0, 1_000, true)));

    /** CPU ns and allocated bytes per request on this thread. */
    static String perRequest(Tracer t, int n) throws InterruptedException {
        long b0 = MX.getCurrentThreadAllocatedBytes();
        long c0 = MX.getCurrentThreadCpuTime();
        long p0 = OS.getProcessCpuTime();
        for (int i = 0; i < n; i++) {
            Tracer.RequestTrace r = t.begin(null, null, "GET", "/a/1");
            for (int c = 0; c < 3; c++) {
                Tracer.CallTrace call = r.call("b", BACKEND);
                sink += call.traceparent().length();
                call.end(OK);
            }
            sink += r.traceId().length();
            r.end("GET /a/{id}", 200);
            if ((i & 63) == 0) {
                Thread.sleep(1); // at most ~256 spans a millisecond: the export keeps up, nothing is dropped
            }
        }
        long thread = (MX.getCurrentThreadCpuTime() - c0) / n;
        long process = (OS.getProcessCpuTime() - p0) / n;
        return thread + " ns, " + (MX.getCurrentThreadAllocatedBytes() - b0) / n + " B, process " + process + " ns";
    }

    public static void main(String[] args) throws Exception {
        System.out.println("command: java -cp weft-cli/target/weft.jar lab/tracing/TracerBench.java");
        System.out.println("machine: " + Runtime.getRuntime().availableProcessors() + " cores, "
                + System.getProperty("os.name") + " " + System.getProperty("os.version") + ", JDK "
                + Runtime.version());
        HttpServer receiver = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        receiver.createContext("/", ex -> {
            RECEIVED.addAndGet(ex.getRequestBody().readAllBytes().length);
            ex.sendResponseHeaders(200, -1);
            ex.close();
        });
        receiver.start();
        URI otlp = URI.create("http://127.0.0.1:" + receiver.getAddress().getPort());
        Tracer propagating = Tracer.propagating();
        Tracer unsampled = Tracer.of(new ObserveReaders.Tracing(otlp, 0.0), "bench");
        Tracer recorded = Tracer.of(new ObserveReaders.Tracing(otlp, 1.0), "bench");
        System.out.println("per request: the calling thread's CPU time and bytes allocated; the process's CPU time");
        for (int round = 0; round < 8; round++) {
            long r0 = RECEIVED.get();
            String line = "round " + round + ": propagating " + perRequest(propagating, 200_000)
                    + "; unsampled " + perRequest(unsampled, 200_000)
                    + "; recorded " + perRequest(recorded, 200_000);
            Thread.sleep(6_000); // a part batch is sent within 5 s
            System.out.println(line + ", received " + (RECEIVED.get() - r0) / 200_000 + " B");
        }
        unsampled.close();
        recorded.close();
        receiver.stop(0);
        System.out.println("(sink " + sink + ")");
    }
}
