package dev.weft.agent.advice;

import dev.weft.agent.boot.Pools;
import net.bytebuddy.asm.Advice;

/** Inlined at the start of Jetty's {@code QueuedThreadPool.doStop()}: handlers still waiting for a turn are not run. */
public final class JettyStopAdvice {
    private JettyStopAdvice() {
    }

    @Advice.OnMethodEnter(suppress = Throwable.class)
    static void enter(@Advice.This Object pool) {
        Pools.jettyStopping(pool);
    }
}
