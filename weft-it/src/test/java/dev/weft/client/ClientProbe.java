package dev.weft.client;

/**
 * What the integration tests may look at inside weft-client: its HTTP/2 readers are virtual threads, which
 * {@code Thread.getAllStackTraces()} does not list, so a test that checks none outlives its connection asks here.
 */
public final class ClientProbe {
    private ClientProbe() {
    }

    /** HTTP/2 reader threads running now in this JVM. */
    public static int http2ReadersRunning() {
        return Http2Connection.readersRunning();
    }
}
