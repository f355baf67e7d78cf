package dev.weft.cli;

import dev.weft.config.Json;
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
                "JDK 21+, of the same user; it needs no flag and no restart), takes a JSON thread dump every",
                "--interval and records the JDK's pinning events for --for, then prints:",
                "  - virtual threads by state, grouped by where they are (\"1,000 TIMED_WAITING in Foo.bar\");",
                "  - runaways: virtual threads seen running on the same carrier, sample after sample, for",
                "    --runaway or longer (a CPU loop that never parks holds its carrier: JDK 25 does not",
                "    preempt), with the carrier and the stack;",
                "  - pinning (jdk.VirtualThreadPinned over 20 ms): where, why, how long;",
                "  - carriers: parallelism, how busy each was, virtual threads runnable but waiting for one;",
                "  - platform threads by name (a thread pool shows as 'pool-#-thread-#  200').",
                "Exit codes: 0 done, 1 the target exited or failed while attached, 2 a target it cannot",
                "examine (no such process, not a JVM, another user's, a JDK before 21).",
                "Guide: docs/doctor.md.", ""})
public final class DoctorCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Parameters(paramLabel = "PID", description = "The JVM's process id (jps or jcmd lists them).")
    long pid;

    @Option(names = "--for", paramLabel = "D", description = "How long to sample. Default: ${DEFAULT-VALUE}.")
    Duration window = Doctor.Options.DEFAULT.window();

    @Option(names = "--interval", paramLabel = "D",
            description = "Between thread dumps. Each is a pass over every thread of the target. Default: ${DEFAULT-VALUE}.")
    Duration interval = Doctor.Options.DEFAULT.interval();

    @Option(names = "--runaway", paramLabel = "D",
            description = "Running on one carrier this long without a break makes a runaway. Default: ${DEFAULT-VALUE}.")
    Duration runaway = Doctor.Options.DEFAULT.runaway();

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
            o = new Doctor.Options(window, interval, runaway);
        } catch (IllegalArgumentException e) {
            throw new UserException(e.getMessage(), null, 2);
        }
        long expected = o.window().dividedBy(o.interval()) + 1;
        do {
            Report r;
            try {
                r = Doctor.examine(pid, o, n -> {
                    if (!json && (n == 1 || n % 10 == 0)) {
                        err.print("\rweft doctor: sampling pid " + pid + ": " + n + "/" + expected + " ");
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
