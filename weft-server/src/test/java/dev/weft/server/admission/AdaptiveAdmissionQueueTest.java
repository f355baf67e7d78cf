package dev.weft.server.admission;

import dev.weft.http.RequestHead;
import dev.weft.server.ServerRequest;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The admission queue hands a freed place to a waiter: by a signal when the waiter's own route was full, by
 * looking again when the shared ceiling was. The waits are long (20 s): a waiter that is not woken is refused
 * at the end of it, so a lost wake-up fails these tests instead of passing late.
 */
class AdaptiveAdmissionQueueTest {
    private static final Duration LONG_WAIT = Duration.ofSeconds(20);

    private static ServerRequest request(String path) {
        RequestHead head = new RequestHead("GET", path, path, null, dev.weft.http.Headers.of("host", "x"));
        return new ServerRequest(head, new byte[0], new InetSocketAddress("127.0.0.1", 1), System.nanoTime());
    }

    private static AdaptiveAdmission admission(int routeLimit, int ceiling) {
        AdmissionPolicy p = new AdmissionPolicy(true, routeLimit, routeLimit, 10, LONG_WAIT, Duration.ofMillis(20),
                Map.of());
        return new AdaptiveAdmission(p, new FixedAdmission(ceiling, Duration.ZERO), ServerRequest::path, k -> { });
    }

    private static CompletableFuture<Admission.Ticket> enterLater(Admission a, String path) throws Exception {
        CompletableFuture<Admission.Ticket> f = new CompletableFuture<>();
        Thread.ofVirtual().start(() -> f.complete(a.enter(request(path))));
        return f;
    }

    private static void awaitQueued(AdaptiveAdmission a, String key, int n) {
        await(n + " requests queued on " + key).atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(5))
                .until(() -> a.queued(key) >= n);
    }

    @Test
    void aQueuedRequestWhoseConnectionWentAwayLeavesWithoutA503AndOneThatWaitedTooLongIsRefused() throws Exception {
        try (AdaptiveAdmission a = admission(1, 100)) {
            Admission.Ticket first = a.enter(request("/r"));
            assertThat(a.tryEnter(request("/r"))).as("at its limit, with room in the queue: only a wait can tell")
                    .isEqualTo(Admission.WouldWait.WOULD_WAIT);
            Admission.Queued gone = a.queue(request("/r"));
            Admission.Queued late = a.queue(request("/r"));
            assertThat(a.queued("/r")).isEqualTo(2);
            gone.leave();
            gone.leave(); // once only
            assertThat(a.queued("/r")).isEqualTo(1);
            assertThat(a.shed("/r")).as("nobody was there to get a 503").isZero();
            Admission.Ticket refused = late.expire();
            assertThat(refused.admitted()).isFalse();
            assertThat(why(refused)).isInstanceOf(Refusal.WaitedTooLong.class);
            assertThat(why(refused).message()).contains("waited");
            assertThat(a.queued("/r")).isZero();
            assertThat(a.shed("/r")).isEqualTo(1);
            first.exit();
        }
    }

    @Test
    void aWaiterHeldByItsRouteLimitGetsThePlaceOfAnExit() throws Exception {
        try (AdaptiveAdmission a = admission(1, 100)) {
            Admission.Ticket first = a.enter(request("/r"));
            assertThat(first.admitted()).isTrue();
            CompletableFuture<Admission.Ticket> second = enterLater(a, "/r");
            awaitQueued(a, "/r", 1);
            assertThat(second).isNotDone();
            long t0 = System.nanoTime();
            first.exit();
            Admission.Ticket t = second.get(15, TimeUnit.SECONDS);
            assertThat(t.admitted()).as("refusal: %s", t).isTrue();
            assertThat(a.inFlight("/r")).isEqualTo(1);
            assertThat(a.queued("/r")).isZero();
            t.exit();
            assertThat(a.inFlight("/r")).isZero();
            assertThat(System.nanoTime() - t0).as("woken, not refused at the end of its wait")
                    .isLessThan(LONG_WAIT.toNanos());
        }
    }

    @Test
    void waitersAreServedOneAPlaceEachAsRequestsExit() throws Exception {
        try (AdaptiveAdmission a = admission(2, 100)) {
            Admission.Ticket x = a.enter(request("/r"));
            Admission.Ticket y = a.enter(request("/r"));
            CompletableFuture<Admission.Ticket> w1 = enterLater(a, "/r");
            awaitQueued(a, "/r", 1);
            CompletableFuture<Admission.Ticket> w2 = enterLater(a, "/r");
            awaitQueued(a, "/r", 2);
            x.exit();
            Admission.Ticket first = CompletableFuture.anyOf(w1, w2).thenApply(Admission.Ticket.class::cast)
                    .get(15, TimeUnit.SECONDS);
            assertThat(first.admitted()).isTrue();
            assertThat(a.inFlight("/r")).isEqualTo(2);
            assertThat(a.queued("/r")).as("one place freed, one waiter still waiting").isEqualTo(1);
            y.exit();
            CompletableFuture<Admission.Ticket> rest = w1.getNow(null) == first ? w2 : w1;
            Admission.Ticket second = rest.get(15, TimeUnit.SECONDS);
            assertThat(second.admitted()).isTrue();
            assertThat(a.queued("/r")).isZero();
        }
    }

    @Test
    void aWaiterHeldByTheCeilingGetsAPlaceAnotherRouteFrees() throws Exception {
        try (AdaptiveAdmission a = admission(10, 1)) {
            Admission.Ticket other = a.enter(request("/other"));
            assertThat(other.admitted()).isTrue();
            CompletableFuture<Admission.Ticket> waiter = enterLater(a, "/r");
            awaitQueued(a, "/r", 1);
            other.exit();
            Admission.Ticket t = waiter.get(15, TimeUnit.SECONDS);
            assertThat(t.admitted()).as("refusal: %s", t).isTrue();
            t.exit();
        }
    }

    @Test
    void aFullQueueRefusesAtOnceAndAWaiterPastItsWaitIsRefused() throws Exception {
        AdmissionPolicy p = new AdmissionPolicy(true, 1, 1, 1, Duration.ofMillis(50), Duration.ofMillis(20), Map.of());
        try (AdaptiveAdmission a = new AdaptiveAdmission(p, new FixedAdmission(100, Duration.ZERO),
                ServerRequest::path, k -> { })) {
            Admission.Ticket held = a.enter(request("/r"));
            CompletableFuture<Admission.Ticket> waiter = enterLater(a, "/r");
            awaitQueued(a, "/r", 1);
            Admission.Ticket over = a.enter(request("/r"));
            assertThat(over.admitted()).isFalse();
            assertThat(why(over)).isInstanceOf(Refusal.QueueFull.class);
            assertThat(why(over).message()).contains("waiting (admission.queue)");
            Admission.Ticket late = waiter.get(15, TimeUnit.SECONDS);
            assertThat(late.admitted()).isFalse();
            assertThat(why(late).message()).contains("waited 50 ms");
            assertThat(a.shed("/r")).isEqualTo(2);
            held.exit();
        }
    }

    /** Why {@code t} was refused; fails the test when it was admitted. */
    private static Refusal why(Admission.Ticket t) {
        assertThat(t).isInstanceOf(Admission.Refused.class);
        return ((Admission.Refused) t).why();
    }
}
