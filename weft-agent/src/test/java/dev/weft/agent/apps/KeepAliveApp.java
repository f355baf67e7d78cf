package dev.weft.agent.apps;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * An application kept alive only by a pool's non-daemon threads: main submits a task and returns. The task
 * waits for main's end, says so, waits for a line on stdin, says so, and shuts its pool down: the JVM must
 * live until then, and exit after.
 */
public final class KeepAliveApp {
    private KeepAliveApp() {
    }

    public static void main(String[] args) {
        Thread main = Thread.currentThread();
        main.setContextClassLoader(new ClassLoader(KeepAliveApp.class.getClassLoader()) {
            @Override
            public String toString() {
                return "main's-loader";
            }
        });
        ExecutorService pool = Executors.newFixedThreadPool(2);
        pool.execute(() -> {
            try {
                main.join();
                // the keep-alive thread starts with no context class loader, whatever main's was
                for (Thread t : Thread.getAllStackTraces().keySet()) {
                    if (t.getName().equals("weft-agent-keepalive")) {
                        System.out.println("keepalive loader " + t.getContextClassLoader());
                    }
                }
                System.out.println("main ended; task on " + (Thread.currentThread().isVirtual() ? "virtual" : "platform")
                        + " daemon=" + Thread.currentThread().isDaemon());
                String line = new BufferedReader(new InputStreamReader(System.in)).readLine();
                System.out.println("task finished after " + line);
            } catch (Exception e) {
                System.out.println("task failed: " + e);
            } finally {
                pool.shutdown();
            }
        });
    }
}
