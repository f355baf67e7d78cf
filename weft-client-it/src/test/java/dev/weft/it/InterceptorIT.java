package dev.weft.it;

import dev.weft.client.Attempt;
import dev.weft.client.CallInterceptor;
import dev.weft.client.CallRequest;
import dev.weft.client.CallResult;
import dev.weft.client.Destination;
import dev.weft.client.DestinationConfig;
import dev.weft.client.DestinationState;
import dev.weft.client.Reason;
import dev.weft.client.Transport;
import dev.weft.client.TransportListener;
import dev.weft.client.policy.HedgePolicy;
import dev.weft.client.policy.RetryPolicy;
import dev.weft.http.Headers;
import dev.weft.upstream.UpstreamConfig;
import dev.weft.upstream.UpstreamServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The public interceptors ({@link CallInterceptor}) and the listener ({@link TransportListener}) of the transport,
 * against real servers over loopback: what each kind may change, where and how often it runs, and what the
 * listener hears.
 */
class InterceptorIT {
    private static final String OK = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
    private static final String UNAVAILABLE = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n";

    private Http1ClientIT.ScriptedServer server;
    private UpstreamServer sim;

    @AfterEach
    void stop() throws IOException {
        if (server != null) {
            server.close();
        }
        if (sim != null) {
            sim.close();
        }
    }

    private static CallInterceptor header(String name, String value, List<String> seen) {
        return chain -> {
            seen.add("in " + name + " on " + Thread.currentThread());
            CallResult r = chain.proceed(chain.request().withHeaders(chain.request().headers().with(name, value)));
            seen.add("out " + name);
            return r;
        };
    }

    @Test
    void requestInterceptorsRunInOrderOnTheCallersThreadAndMayChangeTheUrl() throws Exception {
        server = new Http1ClientIT.ScriptedServer(head -> OK);
        int closed;
        try (ServerSocket s = new ServerSocket(0)) {
            closed = s.getLocalPort();
        }
        List<String> seen = new CopyOnWriteArrayList<>();
        CallInterceptor redirect = chain -> chain.proceed(new CallRequest(chain.request().method(),
                URI.create(server.url("/moved")), chain.request().headers(), null, null, null));
        try (Transport t = Transport.builder().defaults(DestinationConfig.DEFAULT.withRetry(RetryPolicy.NONE))
                .interceptor(header("x-a", "1", seen)).interceptor(redirect).interceptor(header("x-b", "2", seen))
                .build()) {
            String caller = Thread.currentThread().toString();
            CallResult r = t.call(CallRequest.get("http://127.0.0.1:" + closed + "/gone"), Duration.ofSeconds(5));
            assertThat(r.ok()).as(r.toString()).isTrue();
            assertThat(r.destination()).isEqualTo(Destination.of(server.url("/")));
            assertThat(seen).containsExactly("in x-a on " + caller, "in x-b on " + caller, "out x-b", "out x-a");
        }
        assertThat(server.heads).singleElement().satisfies(head -> {
            assertThat(head).startsWith("GET /moved HTTP/1.1\r\n");
            assertThat(head.indexOf("x-a: 1\r\n")).isPositive().isLessThan(head.indexOf("x-b: 2\r\n"));
        });
    }

    @Test
    void exchangeInterceptorsRunOncePerTryAndEachTrySendsWhatTheyHandedOn() throws Exception {
        server = new Http1ClientIT.ScriptedServer(head -> UNAVAILABLE);
        List<Attempt.Kind> kinds = new CopyOnWriteArrayList<>();
        AtomicInteger tries = new AtomicInteger();
        RetryPolicy three = new RetryPolicy(3, Duration.ofMillis(1), Duration.ofMillis(1), Set.of(503), false);
        try (Transport t = Transport.builder().defaults(DestinationConfig.DEFAULT.withRetry(three))
                .exchangeInterceptor(chain -> {
                    kinds.add(chain.attempt());
                    assertThat(chain.deadline().remainingNanos()).isPositive();
                    return chain.proceed(chain.request().withHeaders(
                            chain.request().headers().with("x-try", Integer.toString(tries.incrementAndGet()))));
                })
                .build()) {
            CallResult r = t.call(CallRequest.get(server.url("/x")), Duration.ofSeconds(5));
            assertThat(r.outcome()).isEqualTo("status-503");
            assertThat(r.attempts()).hasSize(3);
        }
        assertThat(kinds).containsExactly(Attempt.Kind.FIRST, Attempt.Kind.RETRY, Attempt.Kind.RETRY);
        assertThat(server.heads).hasSize(3);
        for (int i = 0; i < 3; i++) {
            assertThat(server.heads.get(i)).contains("x-try: " + (i + 1) + "\r\n").doesNotContain("x-try: " + i);
        }
    }

    @Test
    void eachCopyOfAHedgedTryRunsTheExchangeInterceptorsOnAThreadOfItsOwn() throws Exception {
        sim = UpstreamServer.start(UpstreamConfig.local());
        List<Attempt.Kind> kinds = new CopyOnWriteArrayList<>();
        List<Thread> threads = new CopyOnWriteArrayList<>();
        try (Transport t = Transport.builder().defaults(DestinationConfig.DEFAULT.withRetry(RetryPolicy.NONE)
                        .withHedge(new HedgePolicy(Duration.ofMillis(20), 2, false)))
                .exchangeInterceptor(chain -> {
                    kinds.add(chain.attempt());
                    threads.add(Thread.currentThread());
                    return chain.proceed(chain.request());
                })
                .build()) {
            CallResult r = t.call(CallRequest.get(sim.url("/slow?latency=300ms")), Duration.ofSeconds(5));
            assertThat(r.ok()).as(r.toString()).isTrue();
        }
        assertThat(kinds).containsExactlyInAnyOrder(Attempt.Kind.FIRST, Attempt.Kind.HEDGE);
        assertThat(threads).hasSize(2).doesNotHaveDuplicates().allMatch(Thread::isVirtual);
    }

    /**
     * An exchange interceptor that throws fails the call with {@code interceptor-error}, the same with and without a
     * hedge. Before, a call without a hedge threw the exception at the caller, and one with a hedge failed as
     * {@code io-error}: a caller saw two answers for one fault, depending on the destination's policy.
     */
    @Test
    void anExchangeInterceptorThatThrowsFailsTheCallAsInterceptorErrorWithAndWithoutAHedge() throws Exception {
        CallInterceptor throwing = chain -> {
            throw new IllegalStateException("no key for " + chain.attempt());
        };
        throwingInterceptorFails(throwing, null, "threw java.lang.IllegalStateException: no key for FIRST", 1);
        throwingInterceptorFails(throwing, new HedgePolicy(Duration.ofMillis(20), 2, false),
                "threw java.lang.IllegalStateException: no key for", 2);
    }

    @Test
    void anExchangeInterceptorThatThrowsAnErrorFailsTheCallAsInterceptorErrorWithAndWithoutAHedge() throws Exception {
        // a hedge's copy: before f8b28ca the Error ended each copy's thread unreported, and the call waited its deadline
        // and 5 s more for copies that had died, then failed as a deadline
        CallInterceptor throwing = chain -> {
            throw new AssertionError("no key for " + chain.attempt());
        };
        throwingInterceptorFails(throwing, null, "threw java.lang.AssertionError: no key for FIRST", 1);
        throwingInterceptorFails(throwing, new HedgePolicy(Duration.ofMillis(20), 2, false),
                "threw java.lang.AssertionError: no key for", 2);
    }

    @Test
    void anExchangeInterceptorThatReturnsNullFailsTheCallAsInterceptorError() throws Exception {
        throwingInterceptorFails(chain -> null, null, "returned no result", 1);
        throwingInterceptorFails(chain -> null, new HedgePolicy(Duration.ofMillis(20), 2, false),
                "returned no result", 2);
    }

    /**
     * A call through {@code throwing} (hedged by {@code hedge}, when not null; retries allowed, 2 attempts) fails at
     * once, without a throw, as {@code interceptor-error}, saying so; it is not tried again (one attempt per copy),
     * it holds no place at the destination, and the listener hears the failed call.
     */
    private void throwingInterceptorFails(CallInterceptor throwing, HedgePolicy hedge, String says, int attempts)
            throws Exception {
        sim = UpstreamServer.start(UpstreamConfig.local());
        Counting listener = new Counting();
        DestinationConfig cfg = DestinationConfig.DEFAULT.withRetry(
                new RetryPolicy(2, Duration.ofMillis(1), Duration.ofMillis(1), Set.of(503), false));
        try (Transport t = Transport.builder().listener(listener)
                .defaults(hedge == null ? cfg : cfg.withHedge(hedge))
                .exchangeInterceptor(throwing)
                .build()) {
            long start = System.nanoTime();
            CallResult r = t.call(CallRequest.get(sim.url("/x")), Duration.ofSeconds(2));
            Duration took = Duration.ofNanos(System.nanoTime() - start);
            assertThat(r.outcome()).as(r.toString()).isEqualTo("interceptor-error");
            assertThat(r.failure().reason()).isEqualTo(Reason.INTERCEPTOR);
            assertThat(r.message()).contains("the exchange interceptor ").contains(says);
            assertThat(r.attempts()).hasSize(attempts);
            assertThat(took).as("the call did not wait for its deadline").isLessThan(Duration.ofSeconds(1));
            assertThat(t.inFlight(Destination.of(sim.url("/")))).isZero();
        } finally {
            sim.close();
            sim = null;
        }
        assertThat(listener.outcomes).containsExactly("interceptor-error");
    }

    /** An interceptor before the one that threw sees the failed result, as the caller does. */
    @Test
    void anInterceptorBeforeTheOneThatThrewGetsTheFailedResult() throws Exception {
        server = new Http1ClientIT.ScriptedServer(head -> OK);
        List<String> seen = new CopyOnWriteArrayList<>();
        try (Transport t = Transport.builder().defaults(DestinationConfig.DEFAULT.withRetry(RetryPolicy.NONE))
                .interceptor(chain -> {
                    CallResult r = chain.proceed(chain.request());
                    seen.add("request interceptor saw " + r.outcome());
                    return r;
                })
                .exchangeInterceptor(chain -> {
                    CallResult r = chain.proceed(chain.request());
                    seen.add("exchange interceptor saw " + r.outcome());
                    return r;
                })
                .exchangeInterceptor(chain -> {
                    throw new IllegalStateException("inner");
                })
                .build()) {
            CallResult r = t.call(CallRequest.get(server.url("/x")), Duration.ofSeconds(5));
            assertThat(r.outcome()).isEqualTo("interceptor-error");
            assertThat(r.message()).contains("threw java.lang.IllegalStateException: inner");
        }
        assertThat(seen).containsExactly("exchange interceptor saw interceptor-error",
                "request interceptor saw interceptor-error");
        assertThat(server.heads).isEmpty();
    }

    /** A request interceptor that throws, or returns null, fails the call as an exchange interceptor's does. */
    @Test
    void aRequestInterceptorThatThrowsOrReturnsNullFailsTheCallAsInterceptorError() throws Exception {
        server = new Http1ClientIT.ScriptedServer(head -> OK);
        CallRequest get = CallRequest.get(server.url("/x"));
        try (Transport t = Transport.builder().interceptor(chain -> {
            throw new IllegalArgumentException("no tenant");
        }).build()) {
            CallResult r = t.call(get, Duration.ofSeconds(5));
            assertThat(r.outcome()).isEqualTo("interceptor-error");
            assertThat(r.message()).contains("the request interceptor ")
                    .contains("threw java.lang.IllegalArgumentException: no tenant");
            assertThat(r.destination()).isEqualTo(get.destination());
        }
        try (Transport t = Transport.builder().interceptor(chain -> null).build()) {
            CallResult r = t.call(get, Duration.ofSeconds(5));
            assertThat(r.outcome()).isEqualTo("interceptor-error");
            assertThat(r.message()).contains("returned no result");
        }
        assertThat(server.heads).isEmpty();
    }

    @Test
    void anExchangeInterceptorMayChangeNeitherTheUrlNorProceedTwiceAndTheTransportStaysWhole() throws Exception {
        server = new Http1ClientIT.ScriptedServer(head -> OK);
        CallRequest get = CallRequest.get(server.url("/x"));
        try (Transport moves = Transport.builder()
                .exchangeInterceptor(chain -> chain.proceed(CallRequest.get(server.url("/elsewhere")))).build()) {
            CallResult r = moves.call(get, Duration.ofSeconds(5));
            assertThat(r.outcome()).isEqualTo("interceptor-error");
            assertThat(r.message()).contains("IllegalArgumentException").contains("headers and the body only");
            assertThat(moves.inFlight(get.destination())).isZero();
        }
        try (Transport twice = Transport.builder().defaults(DestinationConfig.DEFAULT.withRetry(RetryPolicy.NONE))
                .exchangeInterceptor(chain -> {
                    chain.proceed(chain.request());
                    return chain.proceed(chain.request());
                }).build()) {
            CallResult r = twice.call(get, Duration.ofSeconds(5));
            assertThat(r.outcome()).isEqualTo("interceptor-error");
            assertThat(r.message()).contains("IllegalStateException").contains("at most once");
            assertThat(twice.inFlight(get.destination())).isZero();
        }
        assertThat(server.heads).hasSize(1); // the one proceed of the second transport; the first sent nothing
    }

    @Test
    void tagsReachTheInterceptorsAndAreNeverSent() throws Exception {
        server = new Http1ClientIT.ScriptedServer(head -> OK);
        record Tenant(String id) {
        }
        try (Transport t = Transport.builder().exchangeInterceptor(chain -> {
            Tenant tenant = chain.request().tag(Tenant.class);
            return chain.proceed(chain.request().withHeaders(chain.request().headers().with("x-tenant", tenant.id())));
        }).build()) {
            CallRequest r = CallRequest.builder("GET", server.url("/t")).tag(Tenant.class, new Tenant("t7")).build();
            assertThat(t.call(r, Duration.ofSeconds(5)).ok()).isTrue();
        }
        assertThat(server.heads).singleElement().satisfies(head -> assertThat(head).contains("x-tenant: t7\r\n")
                .doesNotContainIgnoringCase("tenant[").doesNotContain("t7\r\nx-tenant"));
    }

    /** Counts what one destination's listener hears. */
    private static final class Counting implements TransportListener {
        final AtomicInteger calls = new AtomicInteger();
        final List<String> outcomes = new CopyOnWriteArrayList<>();
        final List<Attempt.Kind> attempts = new CopyOnWriteArrayList<>();
        final AtomicInteger detached = new AtomicInteger();
        final List<DestinationState> states = new CopyOnWriteArrayList<>();

        @Override
        public DestinationListener destinationOpened(DestinationState state) {
            states.add(state);
            return new DestinationListener() {
                @Override
                public void callEnded(CallResult result) {
                    calls.incrementAndGet();
                    outcomes.add(result.outcome());
                }

                @Override
                public void attemptStarted(Attempt.Kind kind) {
                    attempts.add(kind);
                }

                @Override
                public void detached() {
                    detached.incrementAndGet();
                }
            };
        }
    }

    @Test
    void theListenerHearsEachCallAndTryButNotACallARequestInterceptorAnsweredItself() throws Exception {
        server = new Http1ClientIT.ScriptedServer(head -> head.startsWith("GET /busy") ? UNAVAILABLE : OK);
        Counting listener = new Counting();
        CallInterceptor cache = chain -> chain.request().uri().getPath().equals("/cached")
                ? new CallResult(chain.request().destination(), 200, Headers.EMPTY, new byte[0], null,
                        CallResult.Timings.NONE, List.of())
                : chain.proceed(chain.request());
        try (Transport t = Transport.builder().listener(listener).interceptor(cache)
                .defaults(DestinationConfig.DEFAULT.withRetry(
                        new RetryPolicy(2, Duration.ofMillis(1), Duration.ofMillis(1), Set.of(503), false)))
                .build()) {
            assertThat(t.call(CallRequest.get(server.url("/ok")), Duration.ofSeconds(5)).ok()).isTrue();
            assertThat(t.call(CallRequest.get(server.url("/busy")), Duration.ofSeconds(5)).outcome())
                    .isEqualTo("status-503");
            assertThat(t.call(CallRequest.get(server.url("/cached")), Duration.ofSeconds(5)).ok()).isTrue();
            assertThat(listener.states).singleElement().satisfies(s -> {
                assertThat(s.destination()).isEqualTo(Destination.of(server.url("/")));
                assertThat(s.maxInFlight()).isEqualTo(DestinationConfig.DEFAULT.limits().maxInFlight());
                assertThat(s.inFlight()).isZero();
                assertThat(s.connectsOk()).isPositive();
                assertThat(s.connectsFailed()).isZero();
                assertThat(s.breakerOpen()).isFalse();
            });
            t.detachListener();
            assertThat(listener.detached).hasValue(1);
            assertThat(t.call(CallRequest.get(server.url("/ok")), Duration.ofSeconds(5)).ok()).isTrue();
        }
        assertThat(listener.calls).hasValue(2);
        assertThat(listener.outcomes).containsExactly("ok", "status-503");
        assertThat(listener.attempts).containsExactly(Attempt.Kind.FIRST, Attempt.Kind.FIRST, Attempt.Kind.RETRY);
        assertThat(server.heads).hasSize(4); // ok, busy twice, ok after the detach; the cached one never went out
    }
}
