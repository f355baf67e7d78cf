package dev.weft.agent.boot;

import java.lang.reflect.Method;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * With {@code concurrency=N} the bottleneck moves from the thread pools to the connection pools the tasks
 * use: calls past a connection pool's size wait there. This warns once per connection-pool class, at its
 * first use, when the pool is smaller than N: HikariCP's {@code HikariDataSource} (its MBeans are off by
 * default, so the agent reads it at {@code getConnection}) and Apache HttpClient 5's
 * {@code PoolingHttpClientConnectionManager} (5 connections per route, 25 in all, by default; at {@code lease}).
 */
final class ConnectionPools {
    /** Checked once per class: a request path must not pay for reflection. */
    private static final ClassValue<AtomicBoolean> CHECKED = new ClassValue<>() {
        @Override
        protected AtomicBoolean computeValue(Class<?> type) {
            return new AtomicBoolean();
        }
    };

    private ConnectionPools() {
    }

    static void used(Object pool, int bound) throws ReflectiveOperationException {
        if (bound == 0 || CHECKED.get(pool.getClass()).getAndSet(true)) {
            return;
        }
        Class<?> type = pool.getClass();
        String name = type.getName();
        if (name.startsWith("com.zaxxer.hikari.")) {
            int max = (int) method(type, "getMaximumPoolSize").invoke(pool);
            if (max < bound) {
                warn("HikariCP pool " + method(type, "getPoolName").invoke(pool) + " holds at most " + max
                        + " connections (maximumPoolSize)", bound);
            }
        } else if (name.startsWith("org.apache.hc.client5.")) {
            int perRoute = (int) method(type, "getDefaultMaxPerRoute").invoke(pool);
            int total = (int) method(type, "getMaxTotal").invoke(pool);
            if (perRoute < bound || total < bound) {
                warn("Apache HttpClient 5 " + name.substring(name.lastIndexOf('.') + 1) + "@"
                        + Integer.toHexString(System.identityHashCode(pool)) + " allows " + perRoute
                        + " connections per route, " + total + " in all (setDefaultMaxPerRoute, setMaxTotal)", bound);
            }
        }
    }

    private static Method method(Class<?> type, String name) throws NoSuchMethodException {
        return type.getMethod(name);
    }

    private static void warn(String what, int bound) {
        System.err.println("weft agent: warning: " + what + ", fewer than the " + bound
                + " tasks a converted pool may now run at once: calls past it wait there for a connection");
    }
}
