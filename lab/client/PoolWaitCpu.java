import dev.weft.client.CallRequest;
import dev.weft.client.DestinationConfig;
import dev.weft.client.DestinationLimits;
import dev.weft.client.Transport;

import java.lang.management.ManagementFactory;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * What calls waiting for a connection cost while they wait: WAITERS calls (default 5,000) to an https
 * destination whose one connect (max_connecting 1) never completes its handshake (a loopback server accepts
 * and stays silent), each with a 30 s budget; then the process's CPU over 10 s. With 0 waiters: the JVM's own
 * idle CPU. This is the wait of an HTTPS cold start, where thousands of calls wait for a few handshakes.
 * Run with lab/client/pool-wait-cpu.sh [WAITERS].
 */
public class PoolWaitCpu {
    public static void main(String[] args) throws Exception {
        int waiters = args.length > 0 ? Integer.parseInt(args[0]) : 5000;
        var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        List<Socket> held = new ArrayList<>();
        try (ServerSocket silent = new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
            Thread.ofPlatform().daemon().start(() -> {
                while (true) {
                    try {
                        held.add(silent.accept()); // never answers the ClientHello
                    } catch (Exception e) {
                        return;
                    }
                }
            });
            DestinationLimits limits = DestinationLimits.DEFAULT.withMaxConnecting(1)
                    .withConnectTimeout(Duration.ofSeconds(60));
            Transport t = Transport.builder().defaults(DestinationConfig.DEFAULT.withLimits(limits)).build();
            CallRequest r = CallRequest.get("https://127.0.0.1:" + silent.getLocalPort() + "/x");
            for (int i = 0; i < waiters; i++) {
                Thread.ofVirtual().start(() -> t.call(r, Duration.ofSeconds(30)));
            }
            Thread.sleep(3000); // all queued, the JIT settled
            long cpu0 = os.getProcessCpuTime();
            long t0 = System.nanoTime();
            Thread.sleep(10_000);
            long cpu1 = os.getProcessCpuTime();
            long t1 = System.nanoTime();
            System.out.printf("java %s, %d CPUs; %d calls waiting for a connection: process CPU %.1f ms per second%n",
                    Runtime.version(), Runtime.getRuntime().availableProcessors(), waiters,
                    (cpu1 - cpu0) / 1e6 / ((t1 - t0) / 1e9));
            System.exit(0); // the calls would wait out their 30 s
        }
    }
}
