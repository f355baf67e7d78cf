package dev.weft.lab.cli;

import dev.weft.cli.Main;

import java.io.PrintWriter;
import java.util.List;

/**
 * Entry point of weft-lab.jar: the product's {@code weft} command line ({@link Main}) with the lab's commands added as
 * picocli subcommands: the development broker, the seeds' demo, the load generator and the labs. Exit codes as the
 * product's: 0 ok, 1 failed, 2 bad usage.
 */
public final class LabMain {
    private LabMain() {
    }

    /**
     * The lab's commands, listed after the product's in this order. A new top-level command is one more entry here; a
     * new lab is one more class in {@link LabCommand}'s {@code subcommands}.
     */
    static List<Object> commands() {
        return List.of(new KafkaCommand(), new DemoCommand(), new BenchCommand(), new LabCommand());
    }

    public static void main(String[] args) {
        dev.weft.os.Carriers.atLeastTwo(); // before the first virtual thread: two carriers on one CPU (as Main)
        System.exit(run(args, new PrintWriter(System.out, true), new PrintWriter(System.err, true)));
    }

    /** Runs the whole command line, the product's commands and the lab's; for tests, with its own output streams. */
    public static int run(String[] args, PrintWriter out, PrintWriter err) {
        return Main.run(args, out, err, commands());
    }
}
