package dev.weft.agent.boot;

import java.lang.reflect.Method;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * With {@code concurrency=N} the bottleneck moves from the thread pools to the connection pools the tasks
 * use: calls past a connection pool's size wait there. This warns once per connection-pool class, at its
 * first use, when the pool is smaller than N: HikariCP's {@code HikariDataSource} (its MBeans are off by
 * default, so the agent reads it at {@code getConnection}) and Apache HttpClient 5's
 * {@code PoolingHttpClientConnectionManager} (5 connections per route, 25 in all, by default; at {@code lease}).
 * OkHttp's {@code Dispatcher} (4.x and 5.x: 64 calls at once, 5 per host, by default) is checked at its
 * asynchronous calls ({@code enqueue}): its limits bound only those, a synchronous {@code execute()} passes it
 * by. It warns once per distinct pair of limits, not per dispatcher: an application that builds a client (and so
 * a dispatcher) per request gets one line, not one per request.
 */
final class ConnectionPools {
    /** Checked once per class: a request path must not pay for reflection. */
    private static final ClassValue<AtomicBoolean> CHECKED = new ClassValue<>() {
        @Override
        protected AtomicBoolean computeValue(Class<?> type) {
            return new AtomicBoolean();
        }
    };

    /** OkHttp's limit getters, per Dispatcher class (one per class loader that loaded OkHttp). */
    private static final ClassValue<Method[]> LIMITS = new ClassValue<>() {
        @Override
        protected Method[] computeValue(Class<?> type) {
            try {
                return new Method[]{method(type, "getMaxRequests"), method(type, "getMaxRequestsPerHost")};
            } catch (NoSuchMethodException e) {
                return new Method[0];
            }
        }
    };
    /** At most this many distinct (maxRequests, maxRequestsPerHost) pairs are remembered, and so named. */
    static final int OKHTTP_PAIRS = 64;
    /** The pairs checked (maxRequests in the high half, maxRequestsPerHost in the low one). */
    private static final Set<Long> PAIRS = ConcurrentHashMap.newKeySet();
    /** The last pair checked: the lock-free path of an application whose dispatchers all have the same limits. */
    private static volatile long lastPair = -1;
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
            dispatcher(pool, type, bound);
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

    /**
     * OkHttp's limits, read as its getters give them at this call (the application may have set them after
     * creation); named once per distinct pair below {@code bound}.
     */
    private static void dispatcher(Object dispatcher, Class<?> type, int bound) throws ReflectiveOperationException {
        Method[] limits = LIMITS.get(type);
        if (limits.length == 0) {
            return;
        }
        int max = (int) limits[0].invoke(dispatcher);
        int perHost = (int) limits[1].invoke(dispatcher);
        long pair = ((long) max << 32) | (perHost & 0xffffffffL);
        if (pair == lastPair) {
            return;
        }
        lastPair = pair;
        if (PAIRS.size() >= OKHTTP_PAIRS || !PAIRS.add(pair)) {
            return;
        }
        if (max < bound || perHost < bound) {
            warn("OkHttp Dispatcher@" + Integer.toHexString(System.identityHashCode(dispatcher)) + " (and any other with "
                    + "these limits) runs at most " + max + " asynchronous calls at once, " + perHost
                    + " per host (setMaxRequests, setMaxRequestsPerHost)", bound, "in its queue of ready calls");
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
