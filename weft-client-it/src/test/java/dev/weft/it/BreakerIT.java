package dev.weft.it;

import dev.weft.client.CallRequest;
import dev.weft.client.CallResult;
import dev.weft.client.Destination;
import dev.weft.client.DestinationConfig;
import dev.weft.client.Reason;
import dev.weft.client.Transport;
import dev.weft.client.policy.BreakerPolicy;
import dev.weft.client.policy.CircuitBreaker;
import dev.weft.client.policy.RetryPolicy;
import dev.weft.upstream.UpstreamConfig;
import dev.weft.upstream.UpstreamServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.net.ServerSocket;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Which failures open a destination's breaker, against real weft-upstream servers and real closed ports: the
 * backend's own (refused, 5xx) do; the gateway's own (bulkhead-full, deadline) never do. The default breaker
 * policy is used throughout (10 s window, judged past 100 calls at 50%).
 */
class BreakerIT {
    private UpstreamServer sim;

    @BeforeEach
    void start() throws Exception {
        sim = UpstreamServer.start(UpstreamConfig.local());
    }

    @AfterEach
    void stop() {
        sim.close();
    }

    private static Transport transport(DestinationConfig cfg) {
        return Transport.builder().defaults(cfg).build();
    }

    private static DestinationConfig noRetry() {
        return DestinationConfig.DEFAULT.withRetry(RetryPolicy.NONE).withBreaker(BreakerPolicy.DEFAULT);
    }

    @Test
    void opensForABackendThatAnswers5xxAndThenSendsNothing() {
        Destination d = Destination.of(sim.url());
        try (Transport t = transport(noRetry())) {
            for (int i = 0; i < BreakerPolicy.DEFAULT.minCalls(); i++) {
                assertThat(t.breakerState(d)).as("after %d calls", i).isEqualTo(CircuitBreaker.State.CLOSED);
                assertThat(t.call(CallRequest.get(sim.url("/down?status=503")), Duration.ofSeconds(5)).outcome())
                        .isEqualTo("status-503");
            }
            assertThat(t.breakerState(d)).isEqualTo(CircuitBreaker.State.OPEN);
            long before = sim.stats().requests();
            CallResult r = t.call(CallRequest.get(sim.url("/up")), Duration.ofSeconds(5));
            assertThat(r.reason()).isEqualTo(Reason.CIRCUIT_OPEN);
            assertThat(sim.stats().requests()).as("an open breaker sends nothing").isEqualTo(before);
        }
    }

    @Test
    void opensForABackendThatRefuses() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort(); // closed when the block ends: connects are refused
        }
        String url = "http://127.0.0.1:" + port;
        Destination d = Destination.of(url);
        try (Transport t = transport(noRetry())) {
            for (int i = 0; i < BreakerPolicy.DEFAULT.minCalls(); i++) {
                assertThat(t.call(CallRequest.get(url + "/x"), Duration.ofSeconds(5)).reason()).isEqualTo(Reason.REFUSED);
            }
            assertThat(t.breakerState(d)).isEqualTo(CircuitBreaker.State.OPEN);
            assertThat(t.call(CallRequest.get(url + "/x"), Duration.ofSeconds(5)).reason()).isEqualTo(Reason.CIRCUIT_OPEN);
        }
    }

    @Test
    void ignoresBulkheadFullAndDeadline() throws Exception {
        DestinationConfig cfg = noRetry().withLimits(DestinationConfig.DEFAULT.limits().withMaxInFlight(1)
                .withMaxWait(Duration.ZERO));
        Destination d = Destination.of(sim.url());
        try (Transport t = transport(cfg); ExecutorService vt = Executors.newVirtualThreadPerTaskExecutor()) {
            Future<CallResult> holder = vt.submit(() -> t.call(CallRequest.get(sim.url("/hold?latency=3s")),
                    Duration.ofSeconds(30)));
            await("the holding call reached the backend").atMost(Duration.ofSeconds(20))
                    .pollInterval(Duration.ofMillis(5)).until(() -> sim.stats().requests("/hold") >= 1);
            int n = 3 * BreakerPolicy.DEFAULT.minCalls();
            for (int i = 0; i < n; i++) {
                CallResult r = t.call(CallRequest.get(sim.url("/more")), Duration.ofSeconds(5));
                assertThat(r.reason()).as(r.toString()).isEqualTo(Reason.BULKHEAD_FULL);
            }
            assertThat(t.breakerState(d)).as(n + " bulkhead-full failures").isEqualTo(CircuitBreaker.State.CLOSED);
            assertThat(holder.get().ok()).isTrue();
            for (int i = 0; i < n; i++) {
                CallResult r = t.call(CallRequest.get(sim.url("/late")), Duration.ZERO);
                assertThat(r.reason()).as(r.toString()).isEqualTo(Reason.DEADLINE);
            }
            assertThat(t.breakerState(d)).as(n + " deadline failures").isEqualTo(CircuitBreaker.State.CLOSED);
            assertThat(sim.stats().requests("/more") + sim.stats().requests("/late")).isZero();
            assertThat(t.call(CallRequest.get(sim.url("/up")), Duration.ofSeconds(5)).ok()).isTrue();
        }
    }

    @Test
    void anInterruptedCallIsCancelledAndNotCountedAgainstTheBackend() throws Exception {
        // one counted failure would open it
        DestinationConfig cfg = DestinationConfig.DEFAULT.withRetry(RetryPolicy.NONE)
                .withBreaker(BreakerPolicy.DEFAULT.withConsecutiveFailures(1));
        Destination d = Destination.of(sim.url());
        try (Transport t = transport(cfg)) {
            java.util.concurrent.CompletableFuture<CallResult> result = new java.util.concurrent.CompletableFuture<>();
            Thread caller = Thread.ofVirtual().start(() -> result.complete(
                    t.call(CallRequest.get(sim.url("/slow?latency=5s")), Duration.ofSeconds(30))));
            await("the call reached the backend").atMost(Duration.ofSeconds(20))
                    .pollInterval(Duration.ofMillis(5)).until(() -> sim.stats().requests("/slow") >= 1);
            caller.interrupt(); // as a stopping dispatch lane does
            CallResult r = result.get(20, java.util.concurrent.TimeUnit.SECONDS);
            // before: the interrupt closed the socket, the call failed "reset" and the breaker opened
            assertThat(r.reason()).as(r.toString()).isEqualTo(Reason.CANCELLED);
            assertThat(t.breakerState(d)).isEqualTo(CircuitBreaker.State.CLOSED);
        }
    }
}
