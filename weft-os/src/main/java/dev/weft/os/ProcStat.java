package dev.weft.os;

/**
 * The text of a Linux {@code /proc/<pid>/stat} or {@code /proc/<pid>/task/<tid>/stat} file: {@code pid (comm) state
 * ppid ...}. The command name may hold spaces and parentheses, so the fields are read after its last closing
 * parenthesis.
 */
final class ProcStat {
    private ProcStat() {
    }

    /**
     * The fields after the command name: index 0 the state, 1 the parent's pid, 16 the nice value (fields 3, 4 and 19
     * of {@code proc(5)}).
     *
     * @throws RuntimeException where the text has no name in parentheses followed by fields
     */
    static String[] fields(String stat) {
        return stat.substring(stat.lastIndexOf(')') + 2).trim().split(" ");
    }

    /** The command name between the first opening and the last closing parenthesis, or null where there is none. */
    static String name(String stat) {
        int open = stat.indexOf('(');
        int close = stat.lastIndexOf(')');
        return open >= 0 && close > open ? stat.substring(open + 1, close) : null;
    }
}
