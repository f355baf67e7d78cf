package dev.weft.agent.advice;

import dev.weft.agent.boot.Pools;
import net.bytebuddy.asm.Advice;

/**
 * Inlined at the start of a connection pool's lease ({@code getConnection}, {@code lease}) and of OkHttp's
 * {@code Dispatcher.enqueue}: the pool's first use.
 */
public final class ConnectionPoolAdvice {
    private ConnectionPoolAdvice() {
    }

    @Advice.OnMethodEnter(suppress = Throwable.class)
    static void enter(@Advice.This Object pool) {
        Pools.connectionPoolUsed(pool);
    }
}
