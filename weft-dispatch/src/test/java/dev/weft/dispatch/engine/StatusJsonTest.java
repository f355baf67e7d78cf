package dev.weft.dispatch.engine;

import dev.weft.json.Json;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The typed status prints the JSON the maps printed before: the same names, in the same order. */
class StatusJsonTest {
    @Test
    void health() throws Exception {
        DispatcherHealth up = new DispatcherHealth(DispatcherHealth.Status.UP, null, 420, 35, "g", 3, 1, 17,
                400, 12, 0, 2, 0, null);
        assertThat(Json.MAPPER.writeValueAsString(up)).isEqualTo("{\"status\":\"up\",\"broker_unanswered_ms\":420,"
                + "\"consumer_turn_ms\":35,\"group\":\"g\",\"assigned_partitions\":3,\"paused_partitions\":1,\"outstanding_records\":17,"
                + "\"records\":400,\"consumer_lag\":12,\"endpoints_disabled\":0,\"park_failures\":2,\"records_lost\":0}");
        DispatcherHealth failed = new DispatcherHealth(DispatcherHealth.Status.FAILED, "boom", 0, 0, "g", 0, 0, 0, 0, 0,
                1, 0, 0, null);
        assertThat(Json.MAPPER.writeValueAsString(failed)).startsWith("{\"status\":\"failed\",\"failure\":\"boom\",");
    }

    @Test
    void endpoint() throws Exception {
        EndpointStatus active = new EndpointStatus("a", "http://x/a", EndpointStatus.State.ACTIVE, null, null,
                "every record", 1, 100, 2, 100, 5, 1, 0, 1, 0, 3, null);
        assertThat(Json.MAPPER.writeValueAsString(active)).isEqualTo("{\"id\":\"a\",\"url\":\"http://x/a\","
                + "\"state\":\"active\",\"match\":\"every record\",\"in_flight\":1,\"max_in_flight\":100,\"queued\":2,"
                + "\"queue\":100,\"delivered\":5,\"failed_attempts\":1,\"parked_room\":0,\"parked_retry\":1,"
                + "\"dead_lettered\":0,\"not_json\":3,\"last_error\":null}");
        EndpointStatus off = new EndpointStatus("a", "u", EndpointStatus.State.DISABLED, "answered 410",
                "2026-01-01T00:00:00Z", "m", 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, "x");
        assertThat(Json.MAPPER.writeValueAsString(off)).startsWith("{\"id\":\"a\",\"url\":\"u\",\"state\":\"disabled\","
                + "\"disabled\":\"answered 410\",\"throttled_until\":\"2026-01-01T00:00:00Z\",\"match\":\"m\",");
    }
}
