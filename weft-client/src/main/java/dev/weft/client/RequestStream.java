package dev.weft.client;

import java.io.IOException;

/**
 * A request body sent as it comes instead of whole: attach one with
 * {@code CallRequest.Builder.tag(RequestStream.class, stream)} (the request then has no {@code body}). Over HTTP/2 the
 * exchange sends the head at once, then each run in DATA frames within the server's windows as {@link #next} gives
 * it, on a virtual thread of its own, while the call reads the answer (with an {@link AnswerSink}, both stream at
 * once: a bidirectional stream). Over HTTP/1.1 the body is read whole first (at most the destination's max_body)
 * and sent with Content-Length. A call with a request stream is neither retried nor hedged.
 */
public interface RequestStream {
    /** The next run of the body, waiting for it; null at the end. Throwing stops the call ({@code cancelled}). */
    byte[] next() throws IOException, InterruptedException;

    /** The call no longer sends the body (it ended, failed or was stopped): stop making it. */
    void cancel();
}
