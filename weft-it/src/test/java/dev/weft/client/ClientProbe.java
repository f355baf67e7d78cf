package dev.weft.client;

/**
 * What the integration tests may look at inside weft-client: its HTTP/2 readers are virtual threads, which
 * {@code Thread.getAllStackTraces()} does not list, so a test that checks none outlives its connection asks here;
 * and a destination's pool, whose waits a test must see begin before it goes on (a condition to wait on, not a
 * sleep).
 */
public final class ClientProbe {
    private ClientProbe() {
    }

    /** HTTP/2 reader threads running now in this JVM. */
    public static int http2ReadersRunning() {
        return Http2Connection.readersRunning();
    }

    /** Calls queued for a connection to {@code url}'s destination now (0 before its first call). */
    public static int waiting(Transport t, String url) {
        ConnectionPool p = pool(t, url);
        return p == null ? 0 : p.waiting();
    }

    /** Calls waiting for a lease of max_connections to {@code url}'s destination now. */
    public static int waitingForLease(Transport t, String url) {
        ConnectionPool p = pool(t, url);
        return p == null ? 0 : p.waitingForLease();
    }

    /** Leases of max_connections held now for {@code url}'s destination. */
    public static int leased(Transport t, String url) {
        ConnectionPool p = pool(t, url);
        return p == null ? 0 : p.leased();
    }

    /** How long the longest write in progress on an HTTP/2 connection to {@code url}'s destination has lasted (ns). */
    public static long longestHttp2WriteNanos(Transport t, String url) {
        ConnectionPool p = pool(t, url);
        return p == null ? 0 : p.longestHttp2WriteNanos();
    }

    /** HTTP/2 streams whose HEADERS have been sent (or are being sent) and that have not ended, to that destination. */
    public static int http2StreamsStarted(Transport t, String url) {
        ConnectionPool p = pool(t, url);
        return p == null ? 0 : p.http2StreamsStarted();
    }

    private static ConnectionPool pool(Transport t, String url) {
        DestinationRuntime rt = t.existing(Destination.of(url));
        return rt == null ? null : rt.pool();
    }
}
