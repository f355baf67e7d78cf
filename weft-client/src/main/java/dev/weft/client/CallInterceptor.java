package dev.weft.client;

import dev.weft.core.Deadline;

/**
 * A step of your own on a call's path, in the spirit of OkHttp's interceptors: it sees the request, may hand on a
 * changed one with {@link Chain#proceed}, and sees what came back; or it answers by itself without proceeding.
 * Set on {@link Transport.Builder}, in one of two places; each list runs in the order the interceptors were added
 * (the first added sees the request first and the result last).
 *
 * <h2>Request interceptors ({@link Transport.Builder#interceptor})</h2>
 * Run once per call, before anything else, on the thread that called {@link Transport#call} (meant to be a
 * virtual thread; a blocking interceptor blocks only its own call). The destination is looked up after them, so
 * they may change anything of the request (method, URL, headers, body, retry and hedge policies). They see the
 * call's final result, after its retries and hedges; they may proceed more than once, or not at all. A call a
 * request interceptor answers by itself is not reported to the {@link TransportListener} (nothing was called).
 *
 * <h2>Exchange interceptors ({@link Transport.Builder#exchangeInterceptor})</h2>
 * Run once per try: the first, each retry and each copy of a hedged try, just before the try takes the
 * destination's permits (circuit breaker and bulkhead), so a slow interceptor holds no permit. They may change the
 * headers and the body only: the method and URL are fixed (the try's destination, policies and permits are
 * chosen by then), and {@link Chain#proceed} refuses a request with another method or URL. They must proceed at
 * most once. They run on the try's thread: the caller's virtual thread, except that each copy of a hedged try
 * runs on a virtual thread of its own. This is the place for what must be fresh on every try: a signature with a
 * timestamp, a span id per try.
 *
 * <p>An interceptor should not throw, nor return null: the transport never throws for a failed call, so what an
 * interceptor throws (an {@link Error} too), or a null it returns, fails the call (or the try, for an exchange
 * interceptor) with {@link Reason#INTERCEPTOR}, whose message names the interceptor and what it threw. The answer
 * is the same on the caller's thread and on a hedge's copy; an interceptor before it that proceeded gets that
 * result, as the caller would. The transport tries it again neither by retry nor by hedge (a copy of a hedged try
 * that fails so is followed by the next copy at once, as any copy that fails fast), and it never counts against
 * the destination. When no interceptor is set, a call pays nothing for this.
 *
 * <pre>{@code
 * Transport t = Transport.builder()
 *         .exchangeInterceptor(chain -> chain.proceed(chain.request().withHeaders(
 *                 chain.request().headers().with("x-try", chain.attempt().name().toLowerCase()))))
 *         .build();
 * }</pre>
 */
@FunctionalInterface
public interface CallInterceptor {
    CallResult intercept(Chain chain);

    /** The call (or try) on its way: what the interceptor sees, and the rest of the path. */
    interface Chain {
        /** The request as the interceptors before this one handed it on. */
        CallRequest request();

        /**
         * The deadline the call runs under: for a request interceptor, the call's own (its budget within the
         * request's deadline); for an exchange interceptor, the same as it stands for this try (moved later by the
         * time earlier tries waited for a pooled connection, never past the request's deadline).
         */
        Deadline deadline();

        /** The try an exchange interceptor runs for: first, retry or hedge; null for a request interceptor. */
        Attempt.Kind attempt();

        /**
         * Runs the rest of the path with {@code request} and returns its result.
         *
         * @throws IllegalArgumentException from an exchange interceptor, for a request with another method or URL
         * @throws IllegalStateException    from an exchange interceptor, when it already proceeded
         */
        CallResult proceed(CallRequest request);
    }
}
