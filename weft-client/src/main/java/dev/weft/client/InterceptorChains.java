package dev.weft.client;

import dev.weft.core.Deadline;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * The chains of the public {@link CallInterceptor}s: the request interceptors' and the exchange interceptors'. What an
 * interceptor throws (an {@link Error} too), or a null it returns, becomes a failed result of {@link Reason#INTERCEPTOR}
 * where it is called ({@link #run}), so a call answers the same whether a try runs on the caller's thread or as a
 * hedge's copy on a thread of its own: the transport never throws for a failed call.
 */
final class InterceptorChains {
    private InterceptorChains() {
    }

    /** Which list an interceptor is on, as its failures name it. */
    enum Kind {
        REQUEST("request"), EXCHANGE("exchange");

        private final String text;

        Kind(String text) {
            this.text = text;
        }
    }

    /**
     * Runs {@code interceptor} on {@code chain}; what it throws or a null it returns is a failed result for
     * {@code destination}. An interceptor before it that proceeded gets that result, as the caller would.
     */
    static CallResult run(CallInterceptor interceptor, CallInterceptor.Chain chain, Destination destination, Kind kind) {
        CallResult r;
        try {
            r = interceptor.intercept(chain);
        } catch (Throwable e) { // an Error too: on a hedge's copy it would end the copy's thread unreported
            return CallResult.failed(destination, CallFailure.of(Reason.INTERCEPTOR,
                    "the " + kind.text + " interceptor " + interceptor.getClass().getName() + " threw " + e));
        }
        if (r == null) {
            return CallResult.failed(destination, CallFailure.of(Reason.INTERCEPTOR,
                    "the " + kind.text + " interceptor " + interceptor.getClass().getName() + " returned no result"));
        }
        return r;
    }

    /** A call on its way through the request interceptors; the last one hands it to the transport's own path. */
    static final class RequestChain implements CallInterceptor.Chain {
        private final Transport transport;
        private final List<CallInterceptor> interceptors;
        /** The interceptor that {@link #proceed} runs next ({@code interceptors.size()}: the transport's path). */
        private final int index;
        private final CallRequest request;
        private final Deadline deadline;
        private final Duration budget;

        RequestChain(Transport transport, List<CallInterceptor> interceptors, int index, CallRequest request,
                     Deadline deadline, Duration budget) {
            this.transport = transport;
            this.interceptors = interceptors;
            this.index = index;
            this.request = request;
            this.deadline = deadline;
            this.budget = budget;
        }

        @Override
        public CallRequest request() {
            return request;
        }

        @Override
        public Deadline deadline() {
            return budget == null ? deadline : deadline.atMost(budget);
        }

        @Override
        public Attempt.Kind attempt() {
            return null;
        }

        @Override
        public CallResult proceed(CallRequest next) {
            Objects.requireNonNull(next, "request");
            if (index == interceptors.size()) {
                return transport.callPath(next, deadline, budget);
            }
            return run(interceptors.get(index), new RequestChain(transport, interceptors, index + 1, next, deadline,
                    budget), next.destination(), Kind.REQUEST);
        }

        /** Runs a call through {@code interceptors} (at least one), then its path. */
        static CallResult start(Transport transport, List<CallInterceptor> interceptors, CallRequest request,
                                Deadline deadline, Duration budget) {
            return run(interceptors.getFirst(), new RequestChain(transport, interceptors, 1, request, deadline, budget),
                    request.destination(), Kind.REQUEST);
        }
    }

    /** The link of the transport's path that runs the exchange interceptors of each try (before its permits). */
    static Interceptor exchangeLink(List<CallInterceptor> interceptors) {
        return chain -> {
            Interceptor.Try t = chain.attempt();
            return run(interceptors.getFirst(), new TryChain(interceptors, 1, chain, t.request(chain.call())),
                    chain.call().destination.destination(), Kind.EXCHANGE);
        };
    }

    /** One try on its way through the exchange interceptors. */
    private static final class TryChain implements CallInterceptor.Chain {
        private final List<CallInterceptor> interceptors;
        /** The interceptor that {@link #proceed} runs next. */
        private final int next;
        private final Interceptor.Chain path;
        private final CallRequest request;
        private boolean proceeded;

        TryChain(List<CallInterceptor> interceptors, int next, Interceptor.Chain path, CallRequest request) {
            this.interceptors = interceptors;
            this.next = next;
            this.path = path;
            this.request = request;
        }

        @Override
        public CallRequest request() {
            return request;
        }

        @Override
        public Deadline deadline() {
            return path.call().deadline;
        }

        @Override
        public Attempt.Kind attempt() {
            return path.attempt().kind;
        }

        @Override
        public CallResult proceed(CallRequest changed) {
            Objects.requireNonNull(changed, "request");
            if (proceeded) {
                throw new IllegalStateException("an exchange interceptor proceeds at most once per try");
            }
            if (!changed.method().equals(request.method()) || !changed.uri().equals(request.uri())) {
                throw new IllegalArgumentException("an exchange interceptor may change the headers and the body"
                        + " only, not " + request + " to " + changed);
            }
            proceeded = true;
            if (next < interceptors.size()) {
                return run(interceptors.get(next), new TryChain(interceptors, next + 1, path, changed),
                        path.call().destination.destination(), Kind.EXCHANGE);
            }
            path.attempt().request = changed;
            return path.proceed();
        }
    }
}
