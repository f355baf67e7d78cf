package dev.weft.it;

import dev.weft.client.Transport;

/**
 * weft-client's HTTP/2 reader threads alive now in this JVM, through {@link Transport#http2ReadersRunning()}. (This
 * counted them in the JDK's in-process JSON thread dump before; dumping many virtual threads in transition, once a
 * try of a jqwik property, crashed JDK 25.0.3 in {@code ThreadSnapshot}: SIGSEGV in
 * {@code Continuation::is_continuation_entry_frame}.)
 */
final class H2Readers {
    private H2Readers() {
    }

    static int running() {
        return Transport.http2ReadersRunning();
    }
}
