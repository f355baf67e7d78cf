package dev.weft.client;

import dev.weft.http.Headers;

import java.io.IOException;

/**
 * Takes an answer as it arrives instead of whole: attach one to a call with
 * {@code CallRequest.Builder.tag(AnswerSink.class, sink)}. The exchange then gives the sink the answer's head, each run
 * of its body as it is read, and its trailers. Over HTTP/2 the server's stream window is opened only as the sink takes
 * the bytes; over HTTP/1.1 each run is what one read of the socket gave (a chunked body's trailers come at its end),
 * and TCP holds the server back meanwhile; so a sink that blocks holds the server back instead of filling memory. An
 * HTTP/1.1 connection that streamed an answer is closed after it, not reused. The call's {@link CallResult} comes when
 * the answer has ended, with an empty body. For a HEAD, and for an answer that ended with its head, the sink is not
 * used and the call reads the body whole as usual.
 *
 * <p>A call with a sink is never retried or hedged (the sink may have seen part of an answer). Its deadline bounds
 * the whole answer: a stream still open when it passes fails the call with {@code deadline} (not counted against the
 * destination's breaker: a long stream is not the backend's failure), after the sink took what came before. The methods are called on the call's own thread, in order: {@link #head} once, then
 * {@link #data} any number of times, then {@link #end} once, unless the answer fails part way (then the call's
 * result says why, and {@code end} is not called).
 */
public interface AnswerSink {
    /**
     * The final answer's head.
     *
     * @param stop stops the call from any thread (as its deadline would, but counted {@code cancelled}): a wait for
     *             the server's next bytes ends at once and the stream is reset. No thread is interrupted, so no
     *             socket write of the shared connection is cut
     * @return true to take the body as it comes; false to have the call read it whole (nothing more is called)
     */
    boolean head(int status, Headers headers, Runnable stop);

    /**
     * A run of the body, a new array the sink may keep. May block (the server is held back meanwhile); throwing
     * stops the call: its stream is reset and the call fails {@code cancelled}.
     */
    void data(byte[] bytes) throws IOException;

    /** The answer ended: its trailers (empty when none came). */
    void end(Headers trailers) throws IOException;
}
