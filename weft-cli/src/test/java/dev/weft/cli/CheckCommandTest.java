package dev.weft.cli;

import dev.weft.os.CpuCgroup;
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
    private static final CpuCgroup.Sharing ALONE = new CpuCgroup.Sharing("/system.slice/weft.service", true, "alone");
    private static final CpuCgroup.Sharing SHARED = new CpuCgroup.Sharing("/", false, "with 64 other processes");

    private static GatewayConfig parse(String head) throws Exception {
        return GatewayConfigLoader.parse("gw.yaml", head + ROUTES);
    }

    @Test
    void theDoorIsRaisedWhereTheProcessMayRaiseIt() throws Exception {
        assertThat(CheckCommand.frontDoor(parse(""), 0, true, SHARED)).startsWith("front door: its thread at nice -5");
        assertThat(CheckCommand.frontDoor(parse("admission: { door_nice: -10 }\n"), 2, true, SHARED))
                .startsWith("front door: its thread at nice -10");
    }

    @Test
    void withoutTheRightTheDefaultLowersTheOthersOnlyWhereTheGatewayIsAloneInItsCgroup() throws Exception {
        assertThat(CheckCommand.frontDoor(parse(""), 0, false, ALONE))
                .startsWith("front door: run as now, the gateway may not raise its thread to nice -5")
                .contains("lowers its other threads to nice 5").contains("auto; its CPU cgroup /system.slice/weft.service: alone)");
        assertThat(CheckCommand.frontDoor(parse(""), 16, false, ALONE)).contains("to nice 19"); // at most 19
        assertThat(CheckCommand.frontDoor(parse(""), 0, false, SHARED)).startsWith("warning: ")
                .contains("door_fallback: auto does not lower").contains("with 64 other processes")
                .contains("door_fallback: lower_others");
        assertThat(CheckCommand.frontDoor(parse(""), 0, false, null)).startsWith("warning: ")
                .contains("could not be read");
    }

    @Test
    void lowerOthersAlwaysLowersThemAndNoneNever() throws Exception {
        assertThat(CheckCommand.frontDoor(parse("admission: { door_fallback: lower_others }\n"), 0, false, SHARED))
                .contains("lowers its other threads to nice 5").contains("yield to other processes of its CPU cgroup /");
        assertThat(CheckCommand.frontDoor(parse("admission: { door_fallback: none }\n"), 0, false, ALONE))
                .startsWith("warning: ").contains("no lead");
    }

    @Test
    void noLineWhereThereIsNoDoorToSet() throws Exception {
        assertThat(CheckCommand.frontDoor(parse("admission: { door_nice: 0 }\n"), 0, false, ALONE)).isNull();
        assertThat(CheckCommand.frontDoor(parse("admission: { enabled: false }\n"), 0, false, ALONE)).isNull();
        assertThat(CheckCommand.frontDoor(parse("executor: platform:10\n"), 0, false, ALONE)).isNull();
        assertThat(CheckCommand.frontDoor(parse(""), null, false, ALONE)).as("not Linux").isNull();
        assertThat(CheckCommand.frontDoor(parse(""), -10, false, ALONE)).startsWith("front door: left at nice -10");
    }
}
