package dev.weft.agent.advice;

import dev.weft.agent.boot.Pools;
import net.bytebuddy.asm.Advice;

/** Inlined at the start of the executor's {@code reject(Runnable)}: counts refusals for the pool's MBean. */
public final class RejectAdvice {
    private RejectAdvice() {
    }

    @Advice.OnMethodEnter(suppress = Throwable.class)
    static void enter(@Advice.This Object executor) {
        Pools.rejected(executor);
    }
}
