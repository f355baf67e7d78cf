package dev.weft.agent.advice;

import dev.weft.agent.boot.Pools;
import net.bytebuddy.asm.Advice;

import java.util.concurrent.ThreadFactory;

/**
 * Inlined at the end of the executor's {@code getThreadFactory()}: when the Worker class could not be
 * retransformed (another agent changed it first), a Worker's constructor gets a factory that converts the
 * thread it makes. Every other caller gets the pool's own factory.
 */
public final class ThreadFactoryAdvice {
    private ThreadFactoryAdvice() {
    }

    @Advice.OnMethodExit(suppress = Throwable.class)
    static void exit(@Advice.This Object executor, @Advice.Return(readOnly = false) ThreadFactory factory) {
        factory = Pools.threadFactory(executor, factory);
    }
}
