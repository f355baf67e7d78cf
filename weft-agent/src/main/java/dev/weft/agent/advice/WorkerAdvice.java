package dev.weft.agent.advice;

import dev.weft.agent.boot.Pools;
import net.bytebuddy.asm.Advice;

/**
 * Inlined at the start and the end of {@code ThreadPoolExecutor.Worker}'s constructor (the JDK's and Tomcat's):
 * while it runs, the pool's factory is marked as making a Worker's thread (so {@code threads=} leaves that thread
 * to the pool); at the end, the thread the factory made is handed to {@link Pools#worker}, and the Worker keeps
 * the thread it returns.
 * Only code is added (no field, no method), so a class another agent loaded first can be retransformed.
 */
public final class WorkerAdvice {
    private WorkerAdvice() {
    }

    /** While the constructor asks the pool's factory for a thread, {@code threads=} leaves that thread to the pool. */
    @Advice.OnMethodEnter(suppress = Throwable.class)
    static void enter() {
        Pools.workerConstructing();
    }

    /** No {@code onThrowable} (Byte Buddy cannot catch in a constructor): one that threw ends in addWorkerFailed(null). */
    @Advice.OnMethodExit(suppress = Throwable.class)
    static void exit(@Advice.This Runnable worker, @Advice.FieldValue("this$0") Object executor,
                     @Advice.FieldValue(value = "thread", readOnly = false) Thread thread) {
        Pools.workerConstructed();
        thread = Pools.worker(executor, thread, worker);
    }
}
