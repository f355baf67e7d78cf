package dev.weft.agent.apps;

import java.lang.management.ManagementFactory;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.management.MBeanServer;
import javax.management.ObjectName;

/**
 * Run without the {@code jdk.jfr} module ({@code --limit-modules}), so it touches no JFR class itself: a fixed
 * pool of one, {@code plain-N}, runs a task ({@code task=NAME virtual|platform}), then its MBean's {@code Pinned}
 * is read ({@code pinned=...}) and {@code startPinnedCount} invoked ({@code started=...}). Prints done.
 */
public final class NoJfrApp {
    private NoJfrApp() {
    }

    public static void main(String[] args) throws Exception {
        AtomicInteger n = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(1, r -> new Thread(r, "plain-" + n.incrementAndGet()));
        System.out.println("jfr.module=" + ModuleLayer.boot().findModule("jdk.jfr").isPresent());
        System.out.println("task=" + pool.submit(() -> {
            Thread t = Thread.currentThread();
            return t.getName() + (t.isVirtual() ? " virtual" : " platform");
        }).get(30, TimeUnit.SECONDS));
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        ObjectName name = new ObjectName("dev.weft.agent:type=Pool,name=" + ObjectName.quote("plain-N"));
        System.out.println("pinned=" + server.getAttribute(name, "Pinned"));
        System.out.println("started=" + server.invoke(name, "startPinnedCount", null, null));
        pool.shutdown();
        System.out.println("terminated=" + pool.awaitTermination(30, TimeUnit.SECONDS));
        System.out.println("done");
    }
}
