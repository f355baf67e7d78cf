package dev.weft.doctor;

import com.fasterxml.jackson.databind.JsonNode;
import dev.weft.json.Json;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * One JSON thread dump of a JDK 21+ JVM ({@code jcmd PID Thread.dump_to_file -format=json}, or
 * {@code HotSpotDiagnosticMXBean.dumpThreads} in-process): every platform thread and every virtual thread
 * the JDK tracks, with state, stack and, for a mounted virtual thread (JDK 25), its carrier.
 *
 * @param taken   when the dump was asked for (the doctor's clock)
 * @param threads every thread of every container, in dump order
 */
public record ThreadDump(Instant taken, List<DumpedThread> threads) {

    /**
     * @param carrier the thread id of the carrier a virtual thread is mounted on, or -1
     * @param stack   frames, innermost first, as the JDK prints them ({@code module/class.method(File.java:N)})
     */
    public record DumpedThread(long tid, String name, boolean virtual, String state, List<String> stack,
                               long carrier) {
        /** Mounted on a carrier and runnable: running (or about to run) Java code right now. */
        public boolean running() {
            return virtual && carrier >= 0 && "RUNNABLE".equals(state);
        }
    }

    /** Reads a dump file; threads without a tid (a format this code does not know) are skipped. */
    public static ThreadDump read(Path file, Instant taken) throws IOException {
        JsonNode root = Json.MAPPER.readTree(file.toFile()).path("threadDump");
        List<DumpedThread> threads = new ArrayList<>();
        for (JsonNode container : root.path("threadContainers")) {
            for (JsonNode t : container.path("threads")) {
                if (!t.hasNonNull("tid")) {
                    continue;
                }
                List<String> stack = new ArrayList<>();
                for (JsonNode f : t.path("stack")) {
                    stack.add(f.asText());
                }
                threads.add(new DumpedThread(t.path("tid").asLong(), t.path("name").asText(""),
                        t.path("virtual").asBoolean(false), t.path("state").asText("UNKNOWN"), List.copyOf(stack),
                        t.hasNonNull("carrier") ? t.path("carrier").asLong(-1) : -1));
            }
        }
        return new ThreadDump(taken, List.copyOf(threads));
    }
}
