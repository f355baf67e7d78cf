package dev.weft.client;

import dev.weft.http.Headers;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which failures the breaker does not hear about because the gateway starved the attempt: its own pool, or its
 * scheduler (a ready thread waited long for a CPU).
 */
class StarvedByThePoolTest {
    private static final Destination D = Destination.of("https://127.0.0.1:9443");

    private static CallResult result(Reason reason, long totalMs, long connectMs) {
        return new CallResult(D, 0, Headers.EMPTY, CallResult.NO_BODY, CallFailure.of(reason, "m"),
                new CallResult.Timings(totalMs * 1_000_000, 0, connectMs < 0 ? -1 : connectMs * 1_000_000, -1), List.of());
    }

    @Test
    void aTimeoutAfterWaitingMoreThanHalfTheTimeForAConnectionIsTheGatewaysOwn() {
        assertThat(DestinationRuntime.starvedByThePool(result(Reason.TIMEOUT_HEADERS, 1000, 700))).isTrue();
        assertThat(DestinationRuntime.starvedByThePool(result(Reason.TIMEOUT_BODY, 1000, 501))).isTrue();
    }

    @Test
    void aTimeoutWithTheBudgetMostlyLeftToTheBackendCounts() {
        assertThat(DestinationRuntime.starvedByThePool(result(Reason.TIMEOUT_HEADERS, 1000, 100))).isFalse();
        assertThat(DestinationRuntime.starvedByThePool(result(Reason.TIMEOUT_HEADERS, 1000, -1))).isFalse();
    }

    @Test
    void aTimeoutDuringWhichAReadyThreadWaitedAnEighthOfItsTimeAndAtLeast100MsForACpuIsTheGatewaysOwn() {
        long ms = 1_000_000;
        assertThat(DestinationRuntime.starvedByTheScheduler(result(Reason.TIMEOUT_HEADERS, 1000, 10), 125 * ms)).isTrue();
        assertThat(DestinationRuntime.starvedByTheScheduler(result(Reason.TIMEOUT_BODY, 1000, 10), 400 * ms)).isTrue();
        assertThat(DestinationRuntime.starvedByTheScheduler(result(Reason.TIMEOUT_CONNECT, 2000, -1), 300 * ms)).isTrue();
        // a lag the backend's time dwarfs: the timeout counts
        assertThat(DestinationRuntime.starvedByTheScheduler(result(Reason.TIMEOUT_HEADERS, 1000, 10), 124 * ms)).isFalse();
        assertThat(DestinationRuntime.starvedByTheScheduler(result(Reason.TIMEOUT_HEADERS, 1000, 10), 0)).isFalse();
        // an eighth of a short budget, but under the 100 ms floor (a GC pause): the timeout counts
        assertThat(DestinationRuntime.starvedByTheScheduler(result(Reason.TIMEOUT_HEADERS, 400, 10), 60 * ms)).isFalse();
        assertThat(DestinationRuntime.starvedByTheScheduler(result(Reason.TIMEOUT_HEADERS, 400, 10), 100 * ms)).isTrue();
        // not a timeout, or one that never counts anyway
        assertThat(DestinationRuntime.starvedByTheScheduler(result(Reason.RESET, 1000, 10), 900 * ms)).isFalse();
        assertThat(DestinationRuntime.starvedByTheScheduler(result(Reason.DEADLINE, 1000, 10), 900 * ms)).isFalse();
        assertThat(DestinationRuntime.starvedByTheScheduler(result(Reason.CONNECT_WAIT, 1000, 10), 900 * ms)).isFalse();
    }

    @Test
    void onlyTimeoutsAreExcused() {
        assertThat(DestinationRuntime.starvedByThePool(result(Reason.RESET, 1000, 900))).isFalse();
        assertThat(DestinationRuntime.starvedByThePool(result(Reason.REFUSED, 1000, 900))).isFalse();
    }

    @Test
    void connectWaitNeverCountsAgainstTheDestination() {
        assertThat(Reason.CONNECT_WAIT.countsAgainstBackend(0)).isFalse();
        assertThat(Reason.CONNECT_WAIT.label()).isEqualTo("connect-wait");
        assertThat(Reason.TLS.countsAgainstBackend(0)).isTrue();
    }

    @Test
    void noDescriptorsIsTheGatewaysOwnAndNotRetried() {
        assertThat(Reason.NO_DESCRIPTORS.countsAgainstBackend(0)).isFalse();
        assertThat(Reason.NO_DESCRIPTORS.label()).isEqualTo("no-descriptors");
        assertThat(Reason.NO_DESCRIPTORS.isTimeout()).isFalse();
    }
}
