package dev.weft.core;

import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class DurationsTest {
    @Test
    void parsesTheFormsPeopleWrite() {
        assertThat(Durations.parse("250ms")).isEqualTo(Duration.ofMillis(250));
        assertThat(Durations.parse("1.5s")).isEqualTo(Duration.ofMillis(1500));
        assertThat(Durations.parse("2m")).isEqualTo(Duration.ofMinutes(2));
        assertThat(Durations.parse("500us")).isEqualTo(Duration.ofNanos(500_000));
        assertThat(Durations.parse("1h")).isEqualTo(Duration.ofHours(1));
        assertThat(Durations.parse(" 0 ")).isEqualTo(Duration.ZERO);
    }

    @Test
    void refusesValuesWithoutUnitOrGarbage() {
        assertThatThrownBy(() -> Durations.parse("abc")).hasMessageContaining("expected a duration")
                .hasMessageContaining("'abc'");
        assertThatThrownBy(() -> Durations.parse("100")).hasMessageContaining("expected a duration");
        assertThatThrownBy(() -> Durations.parse("-5ms")).hasMessageContaining("expected a duration");
    }

    @Test
    void formatsShortly() {
        assertThat(Durations.format(Duration.ofMillis(1500))).isEqualTo("1.5s");
        assertThat(Durations.format(Duration.ofMillis(100))).isEqualTo("100ms");
        assertThat(Durations.format(Duration.ZERO)).isEqualTo("0");
        assertThat(Durations.format(Duration.ofMinutes(5))).isEqualTo("5m");
    }

    @Test
    void deadlineCountsDownAndTakesTheEarlier() {
        Deadline far = Deadline.in(Duration.ofHours(1));
        Deadline near = far.atMost(Duration.ofMillis(10));
        assertThat(near.remainingNanos()).isLessThanOrEqualTo(Duration.ofMillis(10).toNanos());
        assertThat(far.min(near)).isSameAs(near);
        assertThat(Deadline.in(Duration.ofMillis(-1)).expired()).isTrue();
        assertThat(Deadline.in(Duration.ofDays(1_000_000)).expired()).isFalse();
    }

    @Test
    void hostPortParsing() {
        assertThat(HostPort.parseList("127.0.0.1:9001,127.0.0.2:9002")).hasSize(2);
        assertThat(HostPort.parse(":9001").getHostString()).isEqualTo("127.0.0.1");
        assertThatThrownBy(() -> HostPort.parse("abc")).hasMessageContaining("HOST:PORT");
        assertThatThrownBy(() -> HostPort.parse("h:99999")).hasMessageContaining("0..65535");
    }
}
