package dev.weft.it;

import dev.weft.core.Deadline;
import dev.weft.client.Attempt;
import dev.weft.client.CallRequest;
import dev.weft.client.CallResult;
import dev.weft.client.Destination;
import dev.weft.client.DestinationConfig;
import dev.weft.client.DestinationLimits;
import dev.weft.client.Reason;
import dev.weft.client.Transport;
import dev.weft.client.policy.BreakerPolicy;
import dev.weft.client.policy.CircuitBreaker;
import dev.weft.client.policy.HedgePolicy;
import dev.weft.client.policy.RetryPolicy;
import dev.weft.upstream.UpstreamConfig;
import dev.weft.upstream.UpstreamServer;
import dev.weft.observe.ClientMeters;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The call engine against a real weft-upstream server over loopback. No timing is asserted as speed: where
 * time appears, it is a bound the engine promises (a deadline it must not pass, a Retry-After it must
 * wait), with margins far wider than scheduling noise.
 */
class TransportIT {
    private UpstreamServer sim;
    private SimpleMeterRegistry registry;

    @BeforeEach
    void start() throws Exception {
        sim = UpstreamServer.start(UpstreamConfig.local());
        registry = new SimpleMeterRegistry();
    }

    @AfterEach
    void stop() {
        sim.close();
    }

    private Transport transport(DestinationConfig cfg) {
        return Transport.builder().defaults(cfg).listener(new ClientMeters(registry)).build();
    }

    private static DestinationConfig noRetry() {
        return DestinationConfig.DEFAULT.withRetry(RetryPolicy.NONE);
    }

    @Test
    void answersWithStatusHeadersBodyAndTimings() {
        try (Transport t = transport(noRetry())) {
            CallResult r = t.call(CallRequest.get(sim.url("/b?latency=50ms&items=2")), Duration.ofSeconds(5));
            assertThat(r.ok()).as(r.toString()).isTrue();
            assertThat(r.status()).isEqualTo(200);
            assertThat(r.headers().first("content-type")).isEqualTo("application/json");
            assertThat(r.bodyText()).isEqualTo("{\"path\":\"/b\",\"items\":[{\"id\":1,\"name\":\"item-1\"},"
                    + "{\"id\":2,\"name\":\"item-2\"}]}");
            assertThat(r.timings().totalNanos()).isGreaterThanOrEqualTo(Duration.ofMillis(50).toNanos());
            assertThat(r.timings().headersNanos()).isGreaterThanOrEqualTo(r.timings().connectNanos());
            assertThat(r.attempts()).hasSize(1);
        }
    }

    @Test
    void deadlineHoldsWhileWaitingForHeaders() {
        try (Transport t = transport(noRetry())) {
            CallResult r = t.call(CallRequest.get(sim.url("/slow?latency=10s")), Duration.ofMillis(500));
            assertThat(r.reason()).as(r.toString()).isEqualTo(Reason.TIMEOUT_HEADERS);
            assertThat(r.outcome()).isEqualTo("timeout-headers");
            assertThat(r.timings().totalNanos()).as("returns at the deadline, long before the backend answers")
                    .isLessThan(Duration.ofSeconds(5).toNanos());
        }
        awaitAborted(1); // the backend saw the connection close
    }

    @Test
    void deadlineHoldsOnADrippingBody() {
        // 1 byte every 200 ms of a ~100-byte body: every read succeeds, the whole body takes ~20 s.
        try (Transport t = transport(noRetry())) {
            CallResult r = t.call(CallRequest.get(sim.url("/drip?fault=drip&drip=200ms")), Duration.ofSeconds(1));
            assertThat(r.reason()).as(r.toString()).isEqualTo(Reason.TIMEOUT_BODY);
            assertThat(r.timings().headersNanos()).as("headers did arrive").isGreaterThan(0);
            assertThat(r.timings().totalNanos()).isLessThan(Duration.ofSeconds(10).toNanos());
        }
        awaitAborted(1);
    }

    @Test
    void retryHonoursRetryAfter() {
        DestinationConfig cfg = DestinationConfig.DEFAULT.withRetry(RetryPolicy.DEFAULT.withAttempts(3)
                .withBackoff(Duration.ofMillis(1), Duration.ofMillis(5)));
        try (Transport t = transport(cfg)) {
            CallResult r = t.call(CallRequest.get(sim.url("/ra?status=seq:503,200&retry_after=1")),
                    Duration.ofSeconds(10));
            assertThat(r.ok()).as(r.toString()).isTrue();
            assertThat(r.attempts()).extracting(Attempt::outcome).containsExactly("status-503", "ok");
            Attempt second = r.attempts().get(1);
            assertThat(second.kind()).isEqualTo(Attempt.Kind.RETRY);
            assertThat(second.startNanos()).as("the retry waited the 1 s the backend asked for")
                    .isGreaterThanOrEqualTo(Duration.ofSeconds(1).toNanos());
        }
        assertThat(sim.stats().requests("/ra")).isEqualTo(2);
    }

    @Test
    void retryNeverPassesTheDeadline() {
        DestinationConfig cfg = DestinationConfig.DEFAULT.withRetry(RetryPolicy.DEFAULT.withAttempts(5));
        try (Transport t = transport(cfg)) {
            Deadline deadline = Deadline.in(Duration.ofSeconds(3));
            CallResult r = t.call(CallRequest.get(sim.url("/busy?status=503&retry_after=5")), deadline);
            assertThat(r.outcome()).isEqualTo("status-503");
            assertThat(r.attempts()).as("waiting 5 s would pass the 3 s deadline: no retry").hasSize(1);
            assertThat(r.message()).contains("would pass the deadline");
            assertThat(deadline.expired()).as("gave up at once instead of waiting").isFalse();
        }
    }

    @Test
    void retriesWithBackoffUntilSuccessButNeverRepeatsAPost() {
        DestinationConfig cfg = DestinationConfig.DEFAULT.withRetry(RetryPolicy.DEFAULT.withAttempts(3)
                .withBackoff(Duration.ofMillis(10), Duration.ofMillis(50)));
        try (Transport t = transport(cfg)) {
            CallResult get = t.call(CallRequest.get(sim.url("/flaky?status=seq:502,503,200")), Duration.ofSeconds(5));
            assertThat(get.ok()).as(get.toString()).isTrue();
            assertThat(get.attempts()).hasSize(3);

            CallResult post = t.call(CallRequest.post(sim.url("/flaky-post?status=seq:503,200"), "{}"),
                    Duration.ofSeconds(5));
            assertThat(post.outcome()).isEqualTo("status-503");
            assertThat(post.attempts()).as("POST is not idempotent: one attempt").hasSize(1);
        }
        assertThat(sim.stats().requests("/flaky-post")).isEqualTo(1);
    }

    @Test
    void hedgeWinsWithTheSecondCopyAndCancelsTheLoser() {
        DestinationConfig cfg = noRetry().withHedge(HedgePolicy.after(Duration.ofMillis(100)));
        try (Transport t = transport(cfg)) {
            // the first request to this path and query takes 5 s, the second answers at once
            CallResult r = t.call(CallRequest.get(sim.url("/hedge?latency=seq:5s,0ms")), Duration.ofSeconds(4));
            assertThat(r.ok()).as(r.toString()).isTrue();
            assertThat(r.attempts()).hasSize(2);
            Attempt first = r.attempts().get(0);
            Attempt hedge = r.attempts().get(1);
            assertThat(hedge.kind()).isEqualTo(Attempt.Kind.HEDGE);
            assertThat(hedge.won()).isTrue();
            assertThat(first.won()).isFalse();
            assertThat(first.reason()).isEqualTo(Reason.CANCELLED);
            assertThat(hedge.startNanos()).isGreaterThanOrEqualTo(Duration.ofMillis(100).toNanos());
        }
        // the loser's connection was closed, not returned to the pool: the backend sees the abort
        awaitAborted(1);
        assertThat(sim.stats().requests("/hedge")).isEqualTo(2);
    }

    @Test
    void breakerOpensAfterFailuresAndRecoversAfterOpenFor() throws Exception {
        DestinationConfig cfg = noRetry().withBreaker(BreakerPolicy.DEFAULT.withConsecutiveFailures(3)
                .withOpenFor(Duration.ofMillis(500)));
        Destination d = Destination.of(sim.url());
        try (Transport t = transport(cfg)) {
            for (int i = 0; i < 3; i++) {
                assertThat(t.call(CallRequest.get(sim.url("/down?status=500")), Duration.ofSeconds(2)).outcome())
                        .isEqualTo("status-500");
            }
            assertThat(t.breakerState(d)).isEqualTo(CircuitBreaker.State.OPEN);
            long before = sim.stats().requests();
            CallResult rejected = t.call(CallRequest.get(sim.url("/up")), Duration.ofSeconds(2));
            assertThat(rejected.reason()).isEqualTo(Reason.CIRCUIT_OPEN);
            assertThat(rejected.message()).contains(d.key());
            assertThat(sim.stats().requests()).as("an open breaker sends nothing").isEqualTo(before);

            Thread.sleep(600); // the time under test: open_for (500 ms) passes; the breaker moves only on a call
            CallResult probe = t.call(CallRequest.get(sim.url("/up")), Duration.ofSeconds(2));
            assertThat(probe.ok()).as(probe.toString()).isTrue();
            assertThat(t.breakerState(d)).isEqualTo(CircuitBreaker.State.CLOSED);
        }
    }

    @Test
    void closingTheTransportCancelsTheCallsStillOutAndOnlyItsOwn() throws Exception {
        Transport closing = transport(noRetry());
        try (Transport other = transport(noRetry()); ExecutorService vt = Executors.newVirtualThreadPerTaskExecutor()) {
            Future<CallResult> out = vt.submit(() -> closing.call(CallRequest.get(sim.url("/long?latency=30s")),
                    Duration.ofSeconds(60)));
            awaitUntil("the long call reached the backend", () -> sim.stats().requests("/long") >= 1);
            closing.close();
            CallResult r = out.get(20, TimeUnit.SECONDS); // a bound: left alone, the call would run 30 s
            assertThat(r.reason()).as(r.toString()).isEqualTo(Reason.CANCELLED);
            assertThat(closing.call(CallRequest.get(sim.url("/b")), Duration.ofSeconds(5)).message())
                    .isEqualTo("the transport is closed");

            CallResult slow = other.call(CallRequest.get(sim.url("/slow?latency=10s")), Duration.ofMillis(300));
            assertThat(slow.reason()).as("the other transport still enforces its deadlines: " + slow)
                    .isEqualTo(Reason.TIMEOUT_HEADERS);
        }
    }

    @Test
    void bulkheadRejectsPastItsBoundWithItsReason() throws Exception {
        DestinationConfig cfg = noRetry().withLimits(DestinationLimits.DEFAULT.withMaxInFlight(2)
                .withMaxWait(Duration.ofMillis(50)));
        Destination d = Destination.of(sim.url());
        try (Transport t = transport(cfg); ExecutorService vt = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<CallResult>> busy = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                busy.add(vt.submit(() -> t.call(CallRequest.get(sim.url("/hold?latency=2s")), Duration.ofSeconds(10))));
            }
            awaitUntil("both holding calls in flight", () -> t.inFlight(d) >= 2);
            assertThat(t.inFlight(d)).isEqualTo(2);
            CallResult third = t.call(CallRequest.get(sim.url("/b")), Duration.ofSeconds(5));
            assertThat(third.reason()).isEqualTo(Reason.BULKHEAD_FULL);
            assertThat(third.outcome()).isEqualTo("bulkhead-full");
            assertThat(third.message()).contains("max_in_flight");
            for (Future<CallResult> f : busy) {
                assertThat(f.get().ok()).isTrue();
            }
            assertThat(t.call(CallRequest.get(sim.url("/b")), Duration.ofSeconds(5)).ok())
                    .as("permits come back").isTrue();
        }
    }

    @Test
    void failuresHaveNamedReasons() throws Exception {
        int closedPort;
        try (ServerSocket s = new ServerSocket(0)) {
            closedPort = s.getLocalPort();
        }
        DestinationConfig cfg = noRetry().withLimits(DestinationLimits.DEFAULT.withMaxBodyBytes(1024 * 1024));
        try (Transport t = transport(cfg)) {
            assertThat(t.call(CallRequest.get("http://127.0.0.1:" + closedPort + "/x"), Duration.ofSeconds(2))
                    .outcome()).isEqualTo("refused");
            assertThat(t.call(CallRequest.get(sim.url("/r?fault=reset")), Duration.ofSeconds(2)).outcome())
                    .isEqualTo("reset");
            assertThat(t.call(CallRequest.get(sim.url("/c?fault=close")), Duration.ofSeconds(2)).outcome())
                    .isEqualTo("reset");
            CallResult big = t.call(CallRequest.get(sim.url("/big?bytes=2000000")), Duration.ofSeconds(5));
            assertThat(big.outcome()).isEqualTo("too-large");
            assertThat(big.message()).contains("1048576");
            CallResult missing = t.call(CallRequest.get(sim.url("/nf?status=404")), Duration.ofSeconds(2));
            assertThat(missing.outcome()).isEqualTo("status-404");
            assertThat(missing.bodyText()).contains("simulated 404");
            assertThat(t.call(CallRequest.get(sim.url("/ok")), Duration.ofMillis(-1)).outcome())
                    .isEqualTo("deadline");
        }
        assertThat(registry.find("weft.calls").tag("outcome", "refused").counter()).isNotNull();
        assertThat(registry.find("weft.calls").tag("destination", Destination.of(sim.url()).key())
                .tag("outcome", "too-large").counter().count()).isEqualTo(1.0);
    }

    @Test
    void fiveThousandConcurrentCallsToASlowBackendAllComplete() throws Exception {
        int n = 5000;
        DestinationConfig cfg = noRetry().withLimits(DestinationLimits.DEFAULT.withMaxInFlight(n));
        try (Transport t = transport(cfg); ExecutorService vt = Executors.newVirtualThreadPerTaskExecutor()) {
            List<CompletableFuture<CallResult>> calls = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                calls.add(CompletableFuture.supplyAsync(
                        () -> t.call(CallRequest.get(sim.url("/many?latency=500ms")), Duration.ofSeconds(60)), vt));
            }
            long ok = 0;
            List<String> failures = new ArrayList<>();
            for (CompletableFuture<CallResult> c : calls) {
                CallResult r = c.get();
                if (r.ok()) {
                    ok++;
                } else if (failures.size() < 5) {
                    failures.add(r.toString());
                }
            }
            assertThat(failures).isEmpty();
            assertThat(ok).isEqualTo(n);
        }
        assertThat(sim.stats().answered("/many", "200")).isEqualTo(n);
    }

    private void awaitAborted(long n) {
        awaitUntil("the backend saw " + n + " call(s) abandoned", () -> sim.stats().aborted() >= n);
        assertThat(sim.stats().aborted()).as("calls the backend saw abandoned").isEqualTo(n);
    }

    /** Waits for {@code condition}, at most 10 s; fails naming {@code what} when it does not come. */
    private static void awaitUntil(String what, java.util.concurrent.Callable<Boolean> condition) {
        await(what).atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(5)).until(condition);
    }

    @Test
    void aTimeoutWhileTheGatewayIsShortOfCpuDoesNotCountAgainstTheBackendOneOnAQuietGatewayDoes() throws Exception {
        // one counted failure opens it: were the starved timeout counted, the breaker would be open after it
        DestinationConfig cfg = noRetry().withBreaker(BreakerPolicy.DEFAULT.withConsecutiveFailures(1));
        Destination d = Destination.of(sim.url());
        try (Transport t = transport(cfg)) {
            assertThat(t.call(CallRequest.get(sim.url("/warm")), Duration.ofSeconds(5)).ok())
                    .as("a pooled connection: the starved call below needs no connect").isTrue();
            // Every carrier spins for 900 ms: this platform thread sends and waits, the watchdog (a platform
            // thread) stops it at 400 ms, and the scheduler's probe has not run since before.
            List<Thread> spinners = dev.weft.os.Spinners.occupyEveryCarrier(Duration.ofMillis(900));
            CallResult starved = t.call(CallRequest.get(sim.url("/slow?latency=5s")), Duration.ofMillis(400));
            for (Thread s : spinners) {
                s.join();
            }
            assertThat(starved.reason()).as(starved.toString()).isEqualTo(Reason.TIMEOUT_HEADERS);
            assertThat(t.breakerState(d)).as("the gateway's own lateness is not the backend's")
                    .isEqualTo(CircuitBreaker.State.CLOSED);
            assertThat(registry.get("weft.destination.starved").tag("by", "scheduler").counter().count()).isEqualTo(1);

            // The same timeout on a quiet gateway counts (a few tries: a GC pause of an eighth of a second on a
            // shared machine would excuse one)
            for (int i = 0; i < 5 && t.breakerState(d) == CircuitBreaker.State.CLOSED; i++) {
                CallResult r = t.call(CallRequest.get(sim.url("/slow?latency=5s")), Duration.ofSeconds(1));
                assertThat(r.reason()).as(r.toString()).isEqualTo(Reason.TIMEOUT_HEADERS);
            }
            assertThat(t.breakerState(d)).as("a backend that does not answer").isEqualTo(CircuitBreaker.State.OPEN);
        }
    }
}
