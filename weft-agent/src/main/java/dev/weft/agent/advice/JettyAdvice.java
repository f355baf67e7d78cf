package dev.weft.agent.advice;

import dev.weft.agent.boot.Pools;
import net.bytebuddy.asm.Advice;

/** Inlined at the start of Jetty's {@code QueuedThreadPool.doStart()}: gives it a virtual-threads executor. */
public final class JettyAdvice {
    private JettyAdvice() {
    }

    @Advice.OnMethodEnter(suppress = Throwable.class)
    static void enter(@Advice.This Object pool) {
        Pools.jettyStarting(pool);
    }
}
