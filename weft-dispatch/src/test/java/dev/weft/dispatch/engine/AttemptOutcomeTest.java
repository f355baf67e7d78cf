package dev.weft.dispatch.engine;

import dev.weft.client.CallFailure;
import dev.weft.client.CallResult;
import dev.weft.client.Destination;
import dev.weft.client.Reason;
import dev.weft.http.Headers;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What an attempt's result is called in the {@code weft.dispatch.attempts} counter, the attempt log and a parked
 * record: the client's {@link CallFailure} labels, and an answered attempt named by its status.
 */
class AttemptOutcomeTest {
    private static final Destination D = Destination.of("http://127.0.0.1:9/");

    private static AttemptOutcome of(int status, CallFailure failure) {
        return AttemptOutcome.of(new CallResult(D, status, Headers.EMPTY, new byte[0], failure,
                CallResult.Timings.NONE, List.of()));
    }

    private static void named(AttemptOutcome o, String label, String status, String reason) {
        assertThat(List.of(o.label(), o.status(), o.reason())).containsExactly(label, status, reason);
    }

    @Test
    void eachResultHasTheLabelStatusAndReasonDispatchHasAlwaysGivenIt() {
        named(of(204, null), "ok", "204", "ok");
        assertThat(of(200, null)).isInstanceOf(AttemptOutcome.Delivered.class);
        named(of(301, null), "status-301", "301", "status-301"); // the client's success, not a delivery
        named(of(503, CallFailure.status(503)), "status-503", "503", "answered 503");
        named(of(410, CallFailure.status(410)), "status-410", "410", "answered 410");
        // an answer whose body was over the limit is named by its status, as it always was
        named(of(200, new CallFailure(Reason.TOO_LARGE, 200, "body over 1048576 bytes")), "status-200", "200",
                "body over 1048576 bytes");
        named(of(0, CallFailure.of(Reason.TIMEOUT_HEADERS, "no headers in 5s")), "timeout-headers",
                "timeout-headers", "no headers in 5s");
        named(of(0, CallFailure.of(Reason.REFUSED, "connection refused")), "refused", "refused", "connection refused");
        named(new AttemptOutcome.TargetRefused("10.0.0.1 is private"), "target-refused", "target-refused",
                "refused target: 10.0.0.1 is private");
        named(new AttemptOutcome.InternalError(new IllegalStateException("boom")), "internal-error", "internal-error",
                "java.lang.IllegalStateException: boom");
    }
}
