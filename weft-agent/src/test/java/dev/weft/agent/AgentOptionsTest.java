package dev.weft.agent;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import dev.weft.agent.AgentOptions.PinnedCount;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class AgentOptionsTest {
    @Test
    void noOptionsKeepEachPoolsBound() {
        assertThat(AgentOptions.parse(null)).isEqualTo(new AgentOptions(0, List.of(), false, PinnedCount.ASKED, Duration.ofMillis(20)));
        assertThat(AgentOptions.parse("")).isEqualTo(new AgentOptions(0, List.of(), false, PinnedCount.ASKED, Duration.ofMillis(20)));
    }

    @Test
    void readsEveryOption() {
        assertThat(AgentOptions.parse("concurrency=10000, exclude=batch-*,exclude=com.acme.Pool,verbose"))
                .isEqualTo(new AgentOptions(10000, List.of("batch-*", "com.acme.Pool"), true, PinnedCount.ASKED, Duration.ofMillis(20)));
        assertThat(AgentOptions.parse("pinned")).isEqualTo(new AgentOptions(0, List.of(), false, PinnedCount.START, Duration.ofMillis(20)));
        assertThat(AgentOptions.parse("pinned=on,pinned_threshold=1ms"))
                .isEqualTo(new AgentOptions(0, List.of(), false, PinnedCount.START, Duration.ofMillis(1)));
        assertThat(AgentOptions.parse("pinned=off")).extracting(AgentOptions::pinned).isEqualTo(PinnedCount.OFF);
        assertThat(AgentOptions.parse("pinned_threshold=0ms")).extracting(AgentOptions::pinnedThreshold).isEqualTo(Duration.ZERO);
        assertThat(AgentOptions.parse("pinned_threshold=60s")).extracting(AgentOptions::pinnedThreshold)
                .isEqualTo(Duration.ofSeconds(60));
        assertThat(AgentOptions.parse("threads=com.acme.*,threads=org.shop.Main"))
                .isEqualTo(new AgentOptions(0, List.of(), false, PinnedCount.ASKED, Duration.ofMillis(20),
                        List.of("com.acme.*", "org.shop.Main")));
    }

    @Test
    void badOptionsAreNamed() {
        assertThatThrownBy(() -> AgentOptions.parse("concurrency=0")).hasMessageContaining("concurrency=0 is outside 1..1000000");
        assertThatThrownBy(() -> AgentOptions.parse("concurrency=")).hasMessageContaining("concurrency= needs a value");
        assertThatThrownBy(() -> AgentOptions.parse("threads=")).hasMessageContaining("threads= needs a value");
        assertThatThrownBy(() -> AgentOptions.parse("threads=java.util.*"))
                .hasMessageStartingWith("threads=java.util.* names only classes the agent never changes (java.*)");
        assertThatThrownBy(() -> AgentOptions.parse("thread=com.acme.*")).hasMessageStartingWith("unknown option 'thread=com.acme.*'");
        assertThatThrownBy(() -> AgentOptions.parse("verbose=yes")).hasMessageStartingWith("verbose takes no value");
        assertThatThrownBy(() -> AgentOptions.parse("pinned=1")).hasMessageStartingWith("pinned=1 is neither on nor off");
        assertThatThrownBy(() -> AgentOptions.parse("pinned_threshold=20")).hasMessageStartingWith("pinned_threshold=20 is not a duration");
        assertThatThrownBy(() -> AgentOptions.parse("pinned_threshold=-1ms")).hasMessageStartingWith("pinned_threshold=-1ms is not a duration");
        assertThatThrownBy(() -> AgentOptions.parse("pinned_threshold=61s")).hasMessageContaining("pinned_threshold=61s is above 60s");
        assertThatThrownBy(() -> AgentOptions.parse("pinned_threshold=")).hasMessageContaining("pinned_threshold= needs a value");
    }
}
