package dev.weft.agent.advice;

import dev.weft.agent.boot.Pools;
import net.bytebuddy.asm.Advice;

/**
 * Inlined at the start of the executor's {@code setCorePoolSize(int)} and {@code setMaximumPoolSize(int)}: on a
 * pool under {@code concurrency=N} the size the application asks for is kept as its request, and the size set
 * stays at the bound ({@link Pools#resized}); else the call is unchanged.
 */
public final class ResizeAdvice {
    private ResizeAdvice() {
    }

    @Advice.OnMethodEnter(suppress = Throwable.class)
    static void enter(@Advice.This Object executor, @Advice.Origin("#m") String method,
                      @Advice.Argument(value = 0, readOnly = false) int size) {
        size = Pools.resized(executor, size, method.equals("setMaximumPoolSize"));
    }
}
