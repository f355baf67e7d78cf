package dev.weft.dispatch.engine;

import dev.weft.client.CallInterceptor;
import dev.weft.client.CallRequest;
import dev.weft.client.CallResult;
import dev.weft.observe.TraceParent;

/**
 * Puts the W3C trace context on each try of a delivery: an exchange interceptor that reads the delivery's trace
 * from the request's {@link Context} tag (set by the lane, {@link AttemptLog#traceOf}) and sends a new span of it
 * per try ({@code traceparent}), with the record's {@code tracestate} when it has one. A request without the tag
 * goes as it is.
 */
final class TraceInterceptor implements CallInterceptor {
    /** The trace of a delivery, and the {@code tracestate} to pass on (null: none). */
    record Context(TraceParent trace, String state) {
    }

    @Override
    public CallResult intercept(Chain chain) {
        CallRequest r = chain.request();
        Context c = r.tag(Context.class);
        if (c == null) {
            return chain.proceed(r);
        }
        dev.weft.http.Headers h = r.headers().with(TraceParent.HEADER, c.trace().child().header());
        if (c.state() != null) {
            h = h.with(TraceParent.STATE_HEADER, c.state());
        }
        return chain.proceed(r.withHeaders(h));
    }
}
