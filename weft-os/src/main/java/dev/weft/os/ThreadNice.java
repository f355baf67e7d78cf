package dev.weft.os;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The Linux scheduling priority (nice value) of the calling platform thread, through {@code setpriority(2)} on the
 * thread's id. The JVM sets no thread's nice by itself (its own thread priorities are ignored on Linux unless
 * {@code -XX:ThreadPriorityPolicy=1}); this lets one thread that must answer quickly, the gateway's front door,
 * run ahead of the carriers when the CPU is short. Raising a priority (a negative nice) needs {@code CAP_SYS_NICE}
 * (or root, or an {@code RLIMIT_NICE} that allows it); lowering it never does.
 *
 * <p>Uses the foreign function API, a restricted method: {@code ./weft} passes {@code --enable-native-access=ALL-UNNAMED};
 * without it the JDK prints one warning.
 */
public final class ThreadNice {
    /** What {@link #setCurrent} did. */
    public enum Result {
        /** The thread now runs at that nice value. */
        SET,
        /** The kernel refused (EPERM or EACCES: no CAP_SYS_NICE to raise it). */
        DENIED,
        /** Not Linux, or the call could not be made; nothing changed. */
        UNSUPPORTED
    }

    private static final int EPERM = 1;
    private static final int EACCES = 13;

    private ThreadNice() {
    }

    /**
     * Sets the calling thread's nice value (-20..19). Call it on the platform thread itself, as it starts. A thread
     * this one creates afterwards inherits the value (Linux copies it at clone): see {@link #resetOthers}.
     *
     * @throws IllegalArgumentException outside -20..19
     */
    public static Result setCurrent(int nice) {
        check(nice);
        Integer tid = currentTid();
        return tid == null ? Result.UNSUPPORTED : set(tid, nice);
    }

    /**
     * Sets every other thread of this process that runs at {@code from} to {@code to} (Linux; nothing elsewhere):
     * for a thread that raised itself, the threads it created since (a pool's worker started by its submit inherits
     * its nice). Lowering a priority needs no permission. Threads named {@code keep} (their name as the kernel has
     * it, at most 15 characters) are left alone: other threads that raised themselves on purpose.
     *
     * @return how many threads were set
     */
    public static int resetOthers(int from, int to, String keep) {
        check(from);
        check(to);
        Integer self = currentTid();
        if (self == null) {
            return 0;
        }
        int n = 0;
        try (var tasks = Files.list(Path.of("/proc/self/task"))) {
            for (Path task : (Iterable<Path>) tasks::iterator) {
                int tid;
                try {
                    tid = Integer.parseInt(task.getFileName().toString());
                } catch (NumberFormatException e) {
                    continue;
                }
                if (tid != self && !keep.equals(comm(task))) {
                    Integer nice = inStat(task.resolve("stat"));
                    if (nice != null && nice == from && set(tid, to) == Result.SET) {
                        n++;
                    }
                }
            }
        } catch (Exception e) {
            return n; // a thread that ended meanwhile, or no /proc: what was set so far
        }
        return n;
    }

    private static String comm(Path task) {
        try {
            return Files.readString(task.resolve("comm")).strip();
        } catch (Exception e) {
            return "";
        }
    }

    private static void check(int nice) {
        if (nice < -20 || nice > 19) {
            throw new IllegalArgumentException("nice must be -20..19, got " + nice);
        }
    }

    /** {@code setpriority(PRIO_PROCESS, tid, nice)}: on Linux a thread id names that one thread. */
    private static Result set(int tid, int nice) {
        try {
            MethodHandle setpriority = Native.SETPRIORITY;
            if (setpriority == null) {
                return Result.UNSUPPORTED;
            }
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment captured = arena.allocate(Native.STATE);
                int r = (int) setpriority.invokeExact(captured, 0 /* PRIO_PROCESS */, tid, nice);
                if (r == 0) {
                    return Result.SET;
                }
                int e = (int) Native.ERRNO.get(captured, 0L);
                return e == EPERM || e == EACCES ? Result.DENIED : Result.UNSUPPORTED;
            }
        } catch (Throwable t) { // no native access, another platform: leave the priority as it is
            return Result.UNSUPPORTED;
        }
    }

    /** The downcall, looked up once (null where there is no {@code setpriority} or no native access). */
    private static final class Native {
        static final StructLayout STATE = Linker.Option.captureStateLayout();
        static final VarHandle ERRNO = STATE.varHandle(MemoryLayout.PathElement.groupElement("errno"));
        static final MethodHandle SETPRIORITY = lookup();

        private static MethodHandle lookup() {
            try {
                Linker linker = Linker.nativeLinker();
                MemorySegment symbol = linker.defaultLookup().find("setpriority").orElse(null);
                return symbol == null ? null : linker.downcallHandle(symbol, FunctionDescriptor.of(ValueLayout.JAVA_INT,
                        ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT),
                        Linker.Option.captureCallState("errno"));
            } catch (Throwable t) {
                return null;
            }
        }
    }

    /**
     * Whether this process may raise a thread to {@code nice}: it has {@code CAP_SYS_NICE} (bit 23 of its effective
     * capabilities), or its {@code RLIMIT_NICE} soft limit allows that value ({@code /proc/self/limits}: a limit L
     * allows nice down to 20 - L). False where that cannot be read.
     */
    public static boolean mayRaiseTo(int nice) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("CapEff:") && (Long.parseUnsignedLong(line.substring(7).trim(), 16) >> 23 & 1) == 1) {
                    return true;
                }
            }
            for (String line : Files.readAllLines(Path.of("/proc/self/limits"))) {
                if (line.startsWith("Max nice priority")) {
                    String soft = line.substring("Max nice priority".length()).trim().split("\\s+")[0];
                    return soft.equals("unlimited") || 20 - Integer.parseInt(soft) <= nice;
                }
            }
        } catch (Exception e) {
            return false;
        }
        return false;
    }

    /** The calling thread's nice value as the kernel reports it ({@code /proc/thread-self/stat}), or null. */
    public static Integer current() {
        return inStat(Path.of("/proc/thread-self/stat"));
    }

    /** The nice value in a {@code /proc/.../stat} file (a process's or a thread's), or null. */
    public static Integer inStat(Path stat) {
        try {
            return Integer.parseInt(ProcStat.fields(Files.readString(stat))[16]);
        } catch (Exception e) {
            return null;
        }
    }

    /** The calling thread's kernel id ({@code /proc/thread-self} links to {@code PID/task/TID}), or null. */
    private static Integer currentTid() {
        try {
            Path link = Files.readSymbolicLink(Path.of("/proc/thread-self"));
            return Integer.parseInt(link.getFileName().toString());
        } catch (Exception e) {
            return null;
        }
    }
}
