package dev.weft.it;

import dev.weft.client.Destination;
import dev.weft.client.PoolState;
import dev.weft.client.Transport;

/** A destination's pool as the tests wait on it: {@link Transport#poolState} by URL. */
final class ClientProbe {
    private ClientProbe() {
    }

    private static PoolState of(Transport t, String url) {
        return t.poolState(Destination.of(url));
    }

    static int waiting(Transport t, String url) {
        return of(t, url).waiting();
    }

    static int waitingForLease(Transport t, String url) {
        return of(t, url).waitingForLease();
    }

    static int idle(Transport t, String url) {
        return of(t, url).idle();
    }

    static int leased(Transport t, String url) {
        return of(t, url).leased();
    }

    static long longestHttp2WriteNanos(Transport t, String url) {
        return of(t, url).longestHttp2WriteNanos();
    }

    static int http2StreamsStarted(Transport t, String url) {
        return of(t, url).http2StreamsStarted();
    }
}
