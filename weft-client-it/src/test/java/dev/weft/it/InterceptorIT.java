package dev.weft.it;

import dev.weft.client.Attempt;
import dev.weft.client.CallInterceptor;
import dev.weft.client.CallRequest;
import dev.weft.client.CallResult;
import dev.weft.client.Destination;
import dev.weft.client.DestinationConfig;
import dev.weft.client.DestinationState;
import dev.weft.client.Transport;
import dev.weft.client.TransportListener;
import dev.weft.client.policy.HedgePolicy;
import dev.weft.client.policy.RetryPolicy;
import dev.weft.http.Headers;
import dev.weft.sim.SimConfig;
import dev.weft.sim.SimServer;
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
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The public interceptors ({@link CallInterceptor}) and the listener ({@link TransportListener}) of the transport,
 * against real servers over loopback: what each kind may change, where and how often it runs, and what the
 * listener hears.
 */
class InterceptorIT {
    private static final String OK = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
    private static final String UNAVAILABLE = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n";

    private Http1ClientIT.ScriptedServer server;
    private SimServer sim;

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
        sim = SimServer.start(SimConfig.local());
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

    @Test
    void aHedgedCopyWhoseInterceptorThrowsFailsAsIoErrorAndTheCallDoesNotWaitForIt() throws Exception {
        hedgedCopiesThatThrowFailAsIoError(chain -> {
            throw new IllegalStateException("no key for " + chain.attempt());
        }, "threw java.lang.IllegalStateException: no key for");
    }

    @Test
    void aHedgedCopyWhoseInterceptorThrowsAnErrorFailsAsIoErrorAndTheCallDoesNotWaitForIt() throws Exception {
        // before: the Error ended each copy's thread unreported, and the call waited its deadline and 5 s more for
        // copies that had died, then failed as a deadline
        hedgedCopiesThatThrowFailAsIoError(chain -> {
            throw new AssertionError("no key for " + chain.attempt());
        }, "threw java.lang.AssertionError: no key for");
    }

    /** Both copies of a hedged call go through {@code throwing}: the call fails at once as io-error, saying so. */
    private void hedgedCopiesThatThrowFailAsIoError(CallInterceptor throwing, String says) throws Exception {
        sim = SimServer.start(SimConfig.local());
        try (Transport t = Transport.builder().defaults(DestinationConfig.DEFAULT.withRetry(RetryPolicy.NONE)
                        .withHedge(new HedgePolicy(Duration.ofMillis(20), 2, false)))
                .exchangeInterceptor(throwing)
                .build()) {
            CallResult r = t.call(CallRequest.get(sim.url("/x")), Duration.ofSeconds(2));
            assertThat(r.outcome()).as(r.toString()).isEqualTo("io-error");
            assertThat(r.message()).contains(says);
            assertThat(r.attempts()).hasSize(2);
        }
    }

    @Test
    void anExchangeInterceptorMayChangeNeitherTheUrlNorProceedTwiceAndTheTransportStaysWhole() throws Exception {
        server = new Http1ClientIT.ScriptedServer(head -> OK);
        CallRequest get = CallRequest.get(server.url("/x"));
        try (Transport moves = Transport.builder()
                .exchangeInterceptor(chain -> chain.proceed(CallRequest.get(server.url("/elsewhere")))).build()) {
            assertThatThrownBy(() -> moves.call(get, Duration.ofSeconds(5)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("headers and the body only");
            assertThat(moves.inFlight(get.destination())).isZero();
        }
        try (Transport twice = Transport.builder().defaults(DestinationConfig.DEFAULT.withRetry(RetryPolicy.NONE))
                .exchangeInterceptor(chain -> {
                    chain.proceed(chain.request());
                    return chain.proceed(chain.request());
                }).build()) {
            assertThatThrownBy(() -> twice.call(get, Duration.ofSeconds(5)))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("at most once");
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
