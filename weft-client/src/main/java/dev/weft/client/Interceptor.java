package dev.weft.client;

import dev.weft.core.Deadline;
import dev.weft.client.policy.HedgePolicy;
import dev.weft.client.policy.RetryPolicy;

import java.util.ArrayList;
import java.util.List;

/**
 * One link of a call's path, in the spirit of OkHttp's interceptors: it does its part and hands the call
 * on with {@link Chain#proceed}, perhaps more than once (a retry) or on several threads at once (a hedge),
 * or answers by itself (an open breaker). The path of every call is {@link CallPath#LINKS}: metrics, retry,
 * hedge, permits, exchange; with exchange interceptors ({@link CallInterceptor}), their link runs between hedge
 * and permits ({@link CallPath#links}). This is the transport's own, package-private machinery; the public one
 * is {@link CallInterceptor}.
 */
interface Interceptor {
    CallResult intercept(Chain chain);

    /** A call on its way down the path: the call, the try it is on (below the retry link), and the links left. */
    final class Chain {
        private final List<Interceptor> links;
        private final int index;
        private final Call call;
        private final Try attempt;

        Chain(List<Interceptor> links, Call call) {
            this(links, 0, call, null);
        }

        private Chain(List<Interceptor> links, int index, Call call, Try attempt) {
            this.links = links;
            this.index = index;
            this.call = call;
            this.attempt = attempt;
        }

        Call call() {
            return call;
        }

        /** The try this part of the path runs for; null above the retry link. */
        Try attempt() {
            return attempt;
        }

        /** Runs the rest of the path for the same try. */
        CallResult proceed() {
            return proceed(attempt);
        }

        /** Runs the rest of the path for {@code t} (a new try, or a copy of one). */
        CallResult proceed(Try t) {
            return links.get(index).intercept(new Chain(links, index + 1, call, t));
        }
    }

    /**
     * What every link of one call shares: the request, its deadline and destination, the policies in force,
     * and the record of its tries (kept by the hedge link, on the call's own thread).
     */
    final class Call {
        final CallRequest request;
        /**
         * The call's own deadline: its budget from the start, moved later by the time its tries waited for a
         * pooled connection ({@link #waitedUntil}), never past {@link #outer}.
         */
        volatile Deadline deadline;
        /** The deadline of the whole request the call serves: it bounds the waits for a connection too. */
        final Deadline outer;
        final DestinationRuntime destination;
        final long startNanos;
        final RetryPolicy retry;
        /** Null when the call is not hedged. */
        final HedgePolicy hedge;
        final List<Attempt> attempts = new ArrayList<>(2);

        Call(CallRequest request, Deadline deadline, Deadline outer, DestinationRuntime destination, long startNanos) {
            this.request = request;
            this.deadline = deadline;
            this.outer = outer;
            this.destination = destination;
            this.startNanos = startNanos;
            DestinationConfig cfg = destination.config();
            // a sink may have seen part of an answer; a request stream's runs cannot be read again
            boolean streamed = request.tag(AnswerSink.class) != null || request.tag(RequestStream.class) != null;
            this.retry = streamed ? RetryPolicy.NONE : request.retry() != null ? request.retry() : cfg.retry();
            HedgePolicy h = streamed ? null : request.hedge() != null ? request.hedge() : cfg.hedge();
            this.hedge = h != null && h.allows(request.method()) ? h : null;
        }

        /**
         * A try that waited for a pooled connection now ends at {@code nanoTime} (its own deadline moved by the
         * wait, within {@link #outer}); the call's deadline moves with it, never earlier. Copies of a hedge each
         * move it by their own wait, so the latest of them counts once.
         */
        void waitedUntil(long nanoTime) {
            long d = nanoTime - outer.nanoTime() < 0 ? nanoTime : outer.nanoTime();
            Deadline later = Deadline.at(d);
            while (true) {
                Deadline now = deadline;
                if (d - now.nanoTime() <= 0 || DEADLINE.compareAndSet(this, now, later)) {
                    return;
                }
            }
        }

        private static final java.util.concurrent.atomic.AtomicReferenceFieldUpdater<Call, Deadline> DEADLINE =
                java.util.concurrent.atomic.AtomicReferenceFieldUpdater.newUpdater(Call.class, Deadline.class,
                        "deadline");
    }

    /** One try of a call (or one copy of a hedged try): its kind, and the handle that cancels it. */
    final class Try {
        final Attempt.Kind kind;
        /** The request this try sends, when exchange interceptors changed it (set on the try's own thread). */
        CallRequest request;
        private volatile Exchange exchange;
        private volatile boolean cancelled;

        Try(Attempt.Kind kind) {
            this.kind = kind;
        }

        /** The request this try sends: the call's, or the one its exchange interceptors handed on. */
        CallRequest request(Call call) {
            return request != null ? request : call.request;
        }

        /** The exchange that carries this try; cancelled at once if the try already was. */
        void started(Exchange e) {
            exchange = e;
            if (cancelled) {
                e.cancel();
            }
        }

        /** Cancels the try from any thread: its exchange is aborted, or is cancelled as it starts. */
        void cancel() {
            cancelled = true;
            Exchange e = exchange;
            if (e != null) {
                e.cancel();
            }
        }
    }
}
