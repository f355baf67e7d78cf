package dev.weft.agent.boot;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.FlightRecorder;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.Period;
import jdk.jfr.StackTrace;

import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * A JFR event per converted pool, every second of a recording that enables it ({@code dev.weft.agent.Pool}):
 * the figures of its MBean, its pinned count too once counted (see {@link Pinned}).
 */
@Name("dev.weft.agent.Pool")
@Label("Weft agent pool")
@Category({"Weft", "Agent"})
@Description("A thread pool weft-agent moved onto virtual threads: tasks running, queued, refused, pinned, completed")
@Period("1 s")
@StackTrace(false)
public final class PoolEvent extends Event {
    private static final AtomicBoolean REGISTERED = new AtomicBoolean();

    @Label("Pool")
    @Description("The pool's thread names, the trailing number as N")
    String pool;

    @Label("Executor class")
    String executorClass;

    @Label("Active")
    int active;

    @Label("Queued")
    int queued;

    @Label("Rejected")
    long rejected;

    @Label("Pinned")
    @Description("Times a worker blocked pinned to its carrier (jdk.VirtualThreadPinned, at least the agent's "
            + "pinned_threshold long, 20 ms by default), counted since started (the agent's pinned option, or the MBean's "
            + "startPinnedCount); -1 before, after it stopped, or with pinned=off")
    long pinned;

    @Label("Completed")
    long completed;

    @Label("Pool size")
    int poolSize;

    @Label("Maximum pool size")
    int maximumPoolSize;

    /** Registers the periodic hook once; {@code pools} gives the live converted pools. */
    static void register(Supplier<List<PoolMXBean>> pools) {
        if (!REGISTERED.compareAndSet(false, true)) {
            return;
        }
        FlightRecorder.addPeriodicEvent(PoolEvent.class, () -> {
            for (PoolMXBean p : pools.get()) {
                PoolEvent e = new PoolEvent();
                e.pool = p.getThreadNamePattern();
                e.executorClass = p.getExecutorClass();
                e.active = p.getActive();
                e.queued = p.getQueued();
                e.rejected = p.getRejected();
                e.pinned = p.getPinned(); // never starts the count: JFR's own jdk.VirtualThreadPinned is there
                e.completed = p.getCompleted();
                e.poolSize = p.getPoolSize();
                e.maximumPoolSize = p.getMaximumPoolSize();
                e.commit();
            }
        });
    }
}
