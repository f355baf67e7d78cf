package dev.weft.cli;

import dev.weft.json.Json;
import dev.weft.doctor.Doctor;
import dev.weft.doctor.DoctorException;
import dev.weft.doctor.Report;
import dev.weft.doctor.ReportText;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.time.Duration;

@Command(name = "doctor",
        mixinStandardHelpOptions = true,
        description = {"See what the virtual threads of a running JVM are doing: attaches to PID (a HotSpot JVM,",
                "JDK 21+, of the same user; it needs no flag and no restart), records JFR for --for (execution",
                "samples every --sample-period, pinning events) and takes one thread dump at the end (the census),",
                "then prints:",
                "  - virtual threads by state, grouped by where they are (\"1,000 TIMED_WAITING in Foo.bar\");",
                "  - runaways: virtual threads JFR found running sample after sample for --runaway or longer (a",
                "    CPU loop that never parks holds its carrier: JDK 25 does not preempt), with the stack;",
                "  - pinning (jdk.VirtualThreadPinned over 20 ms): where, why, how long;",
                "  - carriers: parallelism, how many were busy on average, what each carried at the end, virtual",
                "    threads runnable but waiting for one;",
                "  - platform threads by name (a thread pool shows as 'pool-#-thread-#  200');",
                "  - with weft-agent in the target: its converted pools by name (active,",
                "    queued, rejected, completed, pool size, max pool size; its MBeans).",
                "Exit codes: 0 done, 1 the target exited or failed while attached, 2 a target it cannot",
                "examine (no such process, not a JVM, another user's, a JDK before 21).",
                "Guide: docs/doctor.md.", ""})
public final class DoctorCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Parameters(paramLabel = "PID", description = "The JVM's process id (jps or jcmd lists them).")
    long pid;

    @Option(names = "--for", paramLabel = "D", description = "How long to record. Default: ${DEFAULT-VALUE}.")
    Duration window = Doctor.Options.DEFAULT.window();

    @Option(names = "--sample-period", paramLabel = "D",
            description = "JFR's execution sampling period, 10ms to 1s. Default: ${DEFAULT-VALUE}.")
    Duration samplePeriod = Doctor.Options.DEFAULT.samplePeriod();

    @Option(names = "--runaway", paramLabel = "D",
            description = "Running this long without a break makes a runaway. Default: ${DEFAULT-VALUE}.")
    Duration runaway = Doctor.Options.DEFAULT.runaway();

    @Option(names = "--no-census", description = {"Take no thread dump: no list of virtual threads, carriers or",
            "platform threads; runaways and pinning still come from JFR. On JDK 25.0.3 a thread dump taken while",
            "virtual threads mount and unmount can crash the target (JDK-8364343): see docs/doctor.md."})
    boolean noCensus;

    @Option(names = "--json", description = "The report as one JSON object (one per window with --watch).")
    boolean json;

    @Option(names = "--watch", description = "A report every --for window until Ctrl-C or until the target exits.")
    boolean watch;

    @Override
    public void run() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        Doctor.Options o;
        try {
            o = new Doctor.Options(window, samplePeriod, runaway, !noCensus);
        } catch (IllegalArgumentException e) {
            throw new UserException(e.getMessage(), null, 2);
        }
        long expected = Math.max(1, o.window().toSeconds());
        do {
            Report r;
            try {
                r = Doctor.examine(pid, o, n -> {
                    if (!json) {
                        err.print("\rweft doctor: recording pid " + pid + ": " + n + "/" + expected + " s ");
                        err.flush();
                    }
                });
                if (!json) {
                    err.print("\r" + " ".repeat(60) + "\r");
                    err.flush();
                }
            } catch (DoctorException e) {
                err.println();
                throw new UserException(e.getMessage(), e, e.exitCode());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            try {
                out.println(json ? Json.MAPPER.writeValueAsString(r) : ReportText.render(r));
            } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
                throw new IllegalStateException(e);
            }
            out.flush();
        } while (watch);
    }
}
