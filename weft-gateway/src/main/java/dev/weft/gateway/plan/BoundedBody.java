package dev.weft.gateway.plan;

import dev.weft.http.Headers;
import dev.weft.http.HttpCodecException;
import dev.weft.server.BodySource;

import java.io.IOException;

/**
 * A streamed upload relayed within a bound ({@code max_body}): a body that runs over it stops the call, and so does
 * one the server refused as it read it (malformed chunks, over {@code max_body_bytes}); {@link #refusal} then says
 * why, for the client's 413 or 400 (docs/gateway.md, Proxy routes).
 */
public final class BoundedBody implements BodySource {
    private final BodySource inner;
    private final long max;
    private long bytes;
    private volatile HttpCodecException refusal;

    public BoundedBody(BodySource inner, long max) {
        this.inner = inner;
        this.max = max;
    }

    @Override
    public byte[] next() throws IOException, InterruptedException {
        byte[] run;
        try {
            run = inner.next();
        } catch (HttpCodecException e) {
            refusal = e;
            throw e;
        }
        if (run != null) {
            bytes += run.length;
            if (bytes > max) {
                HttpCodecException e = new HttpCodecException.BodyTooLarge(
                        "the body is over " + max
                        + " bytes, the most this route takes (its max_body, or the server's limits.max_body_bytes)");
                refusal = e;
                inner.cancel();
                throw e;
            }
        }
        return run;
    }

    @Override
    public Headers trailers() {
        return inner.trailers();
    }

    @Override
    public void cancel() {
        inner.cancel();
    }

    @Override
    public void liftTimeBounds() {
        inner.liftTimeBounds();
    }

    /** Why the body was refused as it came, or null. */
    public HttpCodecException refusal() {
        return refusal;
    }
}
