package dev.weft.agent;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class AgentOptionsTest {
    @Test
    void noOptionsKeepEachPoolsBound() {
        assertThat(AgentOptions.parse(null)).isEqualTo(new AgentOptions(0, List.of(), false, false));
        assertThat(AgentOptions.parse("")).isEqualTo(new AgentOptions(0, List.of(), false, false));
    }

    @Test
    void readsEveryOption() {
        assertThat(AgentOptions.parse("concurrency=10000, exclude=batch-*,exclude=com.acme.Pool,verbose"))
                .isEqualTo(new AgentOptions(10000, List.of("batch-*", "com.acme.Pool"), true, false));
        assertThat(AgentOptions.parse("pinned")).isEqualTo(new AgentOptions(0, List.of(), false, true));
        assertThat(AgentOptions.parse("threads=com.acme.*,threads=org.shop.Main"))
                .isEqualTo(new AgentOptions(0, List.of(), false, false, List.of("com.acme.*", "org.shop.Main")));
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
        assertThatThrownBy(() -> AgentOptions.parse("pinned=1")).hasMessageStartingWith("pinned takes no value");
    }
}
