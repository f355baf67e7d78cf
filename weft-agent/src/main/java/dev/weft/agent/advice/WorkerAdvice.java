package dev.weft.agent.advice;

import dev.weft.agent.boot.Pools;
import net.bytebuddy.asm.Advice;

/**
 * Inlined at the end of {@code ThreadPoolExecutor.Worker}'s constructor (the JDK's and Tomcat's): the thread
 * the pool's factory just made is handed to {@link Pools#worker}, and the Worker keeps the thread it returns.
 * Only code is added (no field, no method), so a class another agent loaded first can be retransformed.
 */
public final class WorkerAdvice {
    private WorkerAdvice() {
    }

    @Advice.OnMethodExit(suppress = Throwable.class)
    static void exit(@Advice.This Runnable worker, @Advice.FieldValue("this$0") Object executor,
                     @Advice.FieldValue(value = "thread", readOnly = false) Thread thread) {
        thread = Pools.worker(executor, thread, worker);
    }
}
