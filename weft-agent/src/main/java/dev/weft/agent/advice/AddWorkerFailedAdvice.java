package dev.weft.agent.advice;

import dev.weft.agent.boot.Pools;
import net.bytebuddy.asm.Advice;

/** Inlined at the start of the executor's {@code addWorkerFailed(Worker)}: a worker that never started. */
public final class AddWorkerFailedAdvice {
    private AddWorkerFailedAdvice() {
    }

    @Advice.OnMethodEnter(suppress = Throwable.class)
    static void enter(@Advice.Argument(0) Object worker) {
        Pools.workerFailed(worker);
    }
}
