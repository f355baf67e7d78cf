package dev.weft.client;

import java.io.IOException;

/**
 * A request body sent as it comes instead of whole: attach one with
 * {@code CallRequest.Builder.tag(RequestStream.class, stream)} (the request then has no {@code body}). Over HTTP/2 the
 * exchange sends the head at once, then each run in DATA frames within the server's windows as {@link #next} gives
 * it, on a virtual thread of its own, while the call reads the answer (with an {@link AnswerSink}, both stream at
 * once: a bidirectional stream). Over HTTP/1.1 the head goes at once too, then each run as it comes, from a virtual
 * thread of its own while the call reads the answer: with {@code Content-Length} when {@link #length} says it, else
 * chunked; a body that gives more or fewer bytes than its length stops the call (the connection is closed, never a
 * byte past the length written). The connection is reused only when the whole body went out before the answer
 * ended. A call with a request stream is neither retried nor hedged.
 */
public interface RequestStream {
    /** The next run of the body, waiting for it; null at the end. Throwing stops the call ({@code cancelled}). */
    byte[] next() throws IOException, InterruptedException;

    /** The call no longer sends the body (it ended, failed or was stopped): stop making it. */
    void cancel();

    /** The body's length in bytes when known before it comes ({@code Content-Length}), else -1 (the default). */
    default long length() {
        return -1;
    }
}
