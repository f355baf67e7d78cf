package dev.weft.agent.boot;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class PoolsTest {
    @Test
    void aPoolIsNamedByItsThreadsWithTheTrailingNumberAsN() {
        assertThat(Pools.pattern("pool-12-thread-3")).isEqualTo("pool-12-thread-N");
        assertThat(Pools.pattern("http-nio-8080-exec-10")).isEqualTo("http-nio-8080-exec-N");
        assertThat(Pools.pattern("worker")).isEqualTo("worker");
    }

    @Test
    void poolsMadeAlikeHaveOneShape() {
        assertThat(Pools.shape("pool-12-thread-N")).isEqualTo("pool-N-thread-N").isEqualTo(Pools.shape("pool-3-thread-N"));
        assertThat(Pools.shape("http-nio-8080-exec-N")).isEqualTo("http-nio-N-exec-N");
    }

    @Test
    void globs() {
        assertThat(Glob.matches("batch-*", "batch-1")).isTrue();
        assertThat(Glob.matches("batch-*", "api-1")).isFalse();
        assertThat(Glob.matches("com.acme.*Pool", "com.acme.sub.BigPool")).isTrue();
        assertThat(Glob.matches("w?rker-1", "worker-1")).isTrue();
        assertThat(Glob.matches("w?rker-1", "worker-12")).isFalse();
        assertThat(Glob.matches("*", "")).isTrue();
    }
}
