package dev.weft.cli;

import dev.weft.gateway.config.GatewayConfig;
import dev.weft.gateway.config.GatewayConfigLoader;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code weft check}'s line on the front door's priority, for each case of the config and the process's rights. */
class CheckCommandTest {
    private static final String ROUTES = """
            routes:
              - get: /p
                calls:
                  a: { url: "http://127.0.0.1:9/a" }
            """;

    private static GatewayConfig parse(String head) throws Exception {
        return GatewayConfigLoader.parse("gw.yaml", head + ROUTES);
    }

    @Test
    void theDoorIsRaisedWhereTheProcessMayRaiseIt() throws Exception {
        assertThat(CheckCommand.frontDoor(parse(""), 0, true)).startsWith("front door: its thread at nice -5");
        assertThat(CheckCommand.frontDoor(parse("admission: { door_nice: -10 }\n"), 2, true))
                .startsWith("front door: its thread at nice -10");
    }

    @Test
    void withoutTheRightTheOtherThreadsAreLoweredOrAWarningSaysThereIsNoLead() throws Exception {
        assertThat(CheckCommand.frontDoor(parse(""), 0, false))
                .startsWith("front door: run as now, the gateway may not raise its thread to nice -5")
                .contains("lowers its other threads to nice 5");
        assertThat(CheckCommand.frontDoor(parse(""), 16, false)).contains("to nice 19"); // at most 19
        assertThat(CheckCommand.frontDoor(parse("admission: { door_fallback: none }\n"), 0, false))
                .startsWith("warning: ").contains("without a lead");
    }

    @Test
    void noLineWhereThereIsNoDoorToSet() throws Exception {
        assertThat(CheckCommand.frontDoor(parse("admission: { door_nice: 0 }\n"), 0, false)).isNull();
        assertThat(CheckCommand.frontDoor(parse("admission: { enabled: false }\n"), 0, false)).isNull();
        assertThat(CheckCommand.frontDoor(parse("executor: platform:10\n"), 0, false)).isNull();
        assertThat(CheckCommand.frontDoor(parse(""), null, false)).as("not Linux").isNull();
        assertThat(CheckCommand.frontDoor(parse(""), -10, false)).startsWith("front door: left at nice -10");
    }
}
