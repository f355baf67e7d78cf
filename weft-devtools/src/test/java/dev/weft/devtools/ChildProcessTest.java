package dev.weft.devtools;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A child that dies before its READY line: the error says how it ended and what it wrote on stderr last. */
class ChildProcessTest {
    @Test
    void aChildThatDiesBeforeReadyIsNamedWithItsExitCodeAndLastStderrLines() {
        List<String> cmd = List.of("sh", "-c", "for i in $(seq 1 30); do echo line-$i >&2; done;"
                + " echo 'Address already in use' >&2; exit 3");
        assertThatThrownBy(() -> ChildProcess.start(cmd, "the broker"))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("the broker did not start (it said: null")
                .hasMessageContaining("exit code 3")
                .hasMessageContaining("Address already in use")
                .hasMessageContaining("line-30")
                .hasMessageNotContaining("line-5,"); // only the last 20 lines are kept
    }

    @Test
    void aChildThatSaysSomethingElseFirstIsKilledAndQuoted() {
        List<String> cmd = List.of("sh", "-c", "echo hello; echo 'why' >&2; sleep 60");
        assertThatThrownBy(() -> ChildProcess.start(cmd, "a child"))
                .hasMessageContaining("it said: hello")
                .hasMessageContaining("still running, killed")
                .hasMessageContaining("why");
    }

    @Test
    void aChildThatIsReadyGivesItsText() throws IOException {
        try (ChildProcess p = ChildProcess.start(List.of("sh", "-c", "echo 'READY 127.0.0.1:1'; cat >/dev/null"), "x")) {
            assertThat(p.ready()).isEqualTo("127.0.0.1:1");
            assertThat(p.exited()).isNull();
        }
    }
}
