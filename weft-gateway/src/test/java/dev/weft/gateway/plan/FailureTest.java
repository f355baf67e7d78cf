package dev.weft.gateway.plan;

import dev.weft.client.CallFailure;
import dev.weft.client.Reason;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/** Each kind of failure: the reason it shows on the wire, and whether it is a timeout or an error status. */
class FailureTest {
    static Stream<Arguments> failures() {
        Failure status503 = new Failure.Call(CallFailure.status(503));
        Failure headers = new Failure.Call(CallFailure.of(Reason.TIMEOUT_HEADERS, "deadline reached"));
        return Stream.of(
                // failure, label, timeout, status
                Arguments.of(status503, "status-503", false, true),
                Arguments.of(headers, "timeout-headers", true, false),
                Arguments.of(new Failure.Call(CallFailure.of(Reason.TIMEOUT_CONNECT, "m")), "timeout-connect", true, false),
                Arguments.of(new Failure.Call(CallFailure.of(Reason.TIMEOUT_BODY, "m")), "timeout-body", true, false),
                Arguments.of(new Failure.Call(CallFailure.of(Reason.DEADLINE, "m")), "deadline", true, false),
                Arguments.of(new Failure.Call(CallFailure.of(Reason.REFUSED, "m")), "refused", false, false),
                Arguments.of(new Failure.Call(new CallFailure(Reason.TOO_LARGE, 200, "m")), "too-large", false, false),
                Arguments.of(new Failure.Call(CallFailure.of(Reason.CIRCUIT_OPEN, "m")), "circuit-open", false, false),
                Arguments.of(new Failure.Deadline("m"), "deadline", true, false),
                Arguments.of(new Failure.Skipped("a", status503), "skipped", false, false),
                Arguments.of(new Failure.Skipped("a", headers), "skipped", false, false),
                Arguments.of(new Failure.Template("m"), "template", false, false),
                Arguments.of(new Failure.NotJson("m"), "not-json", false, false),
                Arguments.of(new Failure.BadUrl("x", "no host"), "bad-url", false, false),
                Arguments.of(new Failure.TooManyItems("m"), "too-many-items", false, false),
                Arguments.of(new Failure.Item(2, status503), "status-503", false, true),
                Arguments.of(new Failure.Item(0, headers), "timeout-headers", true, false),
                Arguments.of(new Failure.Internal("m"), "internal", false, false));
    }

    @ParameterizedTest
    @MethodSource("failures")
    void labelTimeoutAndStatus(Failure f, String label, boolean timeout, boolean status) {
        assertThat(f.label()).isEqualTo(label);
        assertThat(f.isTimeout()).as("timeout").isEqualTo(timeout);
        assertThat(f.isStatus()).as("status").isEqualTo(status);
    }

    @ParameterizedTest
    @MethodSource("failures")
    void everyFailureExplainsItself(Failure f, String label, boolean timeout, boolean status) {
        assertThat(f.message()).isNotBlank();
    }

    @org.junit.jupiter.api.Test
    void messagesOfWrappersNameWhatTheyWrap() {
        Failure status503 = new Failure.Call(CallFailure.status(503));
        assertThat(new Failure.Skipped("pay", status503).message()).isEqualTo("needs 'pay', which failed (status-503)");
        assertThat(new Failure.Item(3, status503).message()).isEqualTo("item 3: answered 503");
        assertThat(new Failure.BadUrl("http//x", "no host").message()).isEqualTo("'http//x' is not a valid URL: no host");
    }
}
