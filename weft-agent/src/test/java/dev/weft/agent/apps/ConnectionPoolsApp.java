package dev.weft.agent.apps;

import com.zaxxer.hikari.HikariDataSource;
import org.apache.hc.client5.http.HttpRoute;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManager;
import org.apache.hc.core5.http.HttpHost;

/**
 * Connection pools at their defaults, used once: Apache HttpClient 5's pooling manager leases a connection
 * request (not awaited: no server is needed), HikariCP is asked for a connection to a database that does not
 * exist (the failure is expected). Prints done.
 */
public final class ConnectionPoolsApp {
    private ConnectionPoolsApp() {
    }

    public static void main(String[] args) throws Exception {
        try (PoolingHttpClientConnectionManager apache = new PoolingHttpClientConnectionManager()) {
            apache.lease("1", new HttpRoute(new HttpHost("127.0.0.1", 9)), null).cancel();
            apache.lease("2", new HttpRoute(new HttpHost("127.0.0.1", 9)), null).cancel();
        }
        try (HikariDataSource hikari = new HikariDataSource()) {
            hikari.setPoolName("orders-db");
            hikari.setJdbcUrl("jdbc:weft-none://nowhere");
            hikari.setInitializationFailTimeout(-1);
            hikari.getConnection().close();
        } catch (Exception expected) {
            System.out.println("no database, as expected: " + expected.getClass().getSimpleName());
        }
        System.out.println("done");
    }
}
