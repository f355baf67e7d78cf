package dev.weft.agent.boot;

import java.lang.reflect.Method;
import java.util.Collections;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * With {@code concurrency=N} the bottleneck moves from the thread pools to the connection pools the tasks
 * use: calls past a connection pool's size wait there. This warns once per connection-pool class, at its
 * first use, when the pool is smaller than N: HikariCP's {@code HikariDataSource} (its MBeans are off by
 * default, so the agent reads it at {@code getConnection}) and Apache HttpClient 5's
 * {@code PoolingHttpClientConnectionManager} (5 connections per route, 25 in all, by default; at {@code lease}).
 * OkHttp's {@code Dispatcher} (4.x and 5.x: 64 calls at once, 5 per host, by default) is checked once per
 * dispatcher at its first asynchronous call ({@code enqueue}): its limits bound only those, a synchronous
 * {@code execute()} passes it by. Clients made with {@code newBuilder()} share their dispatcher.
 */
final class ConnectionPools {
    /** Checked once per class: a request path must not pay for reflection. */
    private static final ClassValue<AtomicBoolean> CHECKED = new ClassValue<>() {
        @Override
        protected AtomicBoolean computeValue(Class<?> type) {
            return new AtomicBoolean();
        }
    };

    /** OkHttp dispatchers checked, by identity (the class is final and keeps Object's equals). */
    private static final Map<Object, Boolean> DISPATCHERS = Collections.synchronizedMap(new WeakHashMap<>());
    static final String OKHTTP_DISPATCHER = "okhttp3.Dispatcher";

    private ConnectionPools() {
    }

    static void used(Object pool, int bound) throws ReflectiveOperationException {
        if (bound == 0) {
            return;
        }
        Class<?> type = pool.getClass();
        String name = type.getName();
        if (name.equals(OKHTTP_DISPATCHER)) {
            if (DISPATCHERS.putIfAbsent(pool, Boolean.TRUE) == null) {
                dispatcher(pool, type, bound);
            }
            return;
        }
        if (CHECKED.get(type).getAndSet(true)) {
            return;
        }
        if (name.startsWith("com.zaxxer.hikari.")) {
            int max = (int) method(type, "getMaximumPoolSize").invoke(pool);
            if (max < bound) {
                warn("HikariCP pool " + method(type, "getPoolName").invoke(pool) + " holds at most " + max
                        + " connections (maximumPoolSize)", bound, FOR_A_CONNECTION);
            }
        } else if (name.startsWith("org.apache.hc.client5.")) {
            int perRoute = (int) method(type, "getDefaultMaxPerRoute").invoke(pool);
            int total = (int) method(type, "getMaxTotal").invoke(pool);
            if (perRoute < bound || total < bound) {
                warn("Apache HttpClient 5 " + name.substring(name.lastIndexOf('.') + 1) + "@"
                        + Integer.toHexString(System.identityHashCode(pool)) + " allows " + perRoute
                        + " connections per route, " + total + " in all (setDefaultMaxPerRoute, setMaxTotal)", bound,
                        FOR_A_CONNECTION);
            }
        }
    }

    /** OkHttp's limits, read as its getters give them now (the application may have set them after creation). */
    private static void dispatcher(Object dispatcher, Class<?> type, int bound) throws ReflectiveOperationException {
        int max = (int) method(type, "getMaxRequests").invoke(dispatcher);
        int perHost = (int) method(type, "getMaxRequestsPerHost").invoke(dispatcher);
        if (max < bound || perHost < bound) {
            warn("OkHttp Dispatcher@" + Integer.toHexString(System.identityHashCode(dispatcher)) + " runs at most " + max
                    + " asynchronous calls at once, " + perHost + " per host (setMaxRequests, setMaxRequestsPerHost)", bound,
                    "in its queue of ready calls");
        }
    }

    private static Method method(Class<?> type, String name) throws NoSuchMethodException {
        return type.getMethod(name);
    }

    private static final String FOR_A_CONNECTION = "for a connection";

    private static void warn(String what, int bound, String waitWhere) {
        System.err.println("weft agent: warning: " + what + ", fewer than the " + bound
                + " tasks a converted pool may now run at once: calls past it wait there " + waitWhere);
    }
}
