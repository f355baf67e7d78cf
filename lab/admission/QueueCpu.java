import dev.weft.http.RequestHead;
import dev.weft.server.ServerRequest;
import dev.weft.server.admission.AdaptiveAdmission;
import dev.weft.server.admission.AdmissionPolicy;
import dev.weft.server.admission.FixedAdmission;

import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;

/**
 * The CPU a full admission queue costs while it waits: one route with a limit of 1 (taken), WAITERS requests
 * queued behind it (each may wait 30 s), then the process's CPU time over 10 s. With 0 waiters: the JVM's own
 * idle CPU (its lag probe, GC and JIT threads). Run with lab/admission/queue-cpu.sh [WAITERS].
 */
public class QueueCpu {
    public static void main(String[] args) throws Exception {
        int waiters = args.length > 0 ? Integer.parseInt(args[0]) : 100;
        var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        AdmissionPolicy policy = new AdmissionPolicy(true, 1, 1, Math.max(waiters, 1), Duration.ofSeconds(30),
                Duration.ofMillis(20), Map.of());
        RequestHead head = new RequestHead("GET", "/r", "/r", null, dev.weft.http.Headers.of("host", "x"));
        ServerRequest r = new ServerRequest(head, new byte[0], new InetSocketAddress("127.0.0.1", 1), System.nanoTime());
        try (AdaptiveAdmission admission = new AdaptiveAdmission(policy, new FixedAdmission(10_000, Duration.ZERO),
                x -> "/r", k -> { })) {
            admission.enter(r); // the one place
            for (int i = 0; i < waiters; i++) {
                Thread.ofVirtual().start(() -> admission.enter(r));
            }
            while (admission.queued("/r") < waiters) {
                Thread.sleep(10);
            }
            Thread.sleep(1000);
            long cpu0 = os.getProcessCpuTime();
            long t0 = System.nanoTime();
            Thread.sleep(10_000);
            long cpu1 = os.getProcessCpuTime();
            long t1 = System.nanoTime();
            System.out.printf("java %s, %d CPUs; %d requests queued: process CPU %.1f ms per second%n",
                    Runtime.version(), Runtime.getRuntime().availableProcessors(), admission.queued("/r"),
                    (cpu1 - cpu0) / 1e6 / ((t1 - t0) / 1e9));
            System.exit(0); // the waiters would wait out their 30 s
        }
    }
}
