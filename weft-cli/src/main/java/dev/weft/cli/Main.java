package dev.weft.cli;

import picocli.CommandLine;

import java.io.PrintWriter;
import java.util.List;

/**
 * Entry point of the {@code weft} command. Exit codes: 0 ok, 1 failed, 2 bad usage.
 *
 * <p>This is the product's command line (weft.jar): gateway, dispatch, check, upstream, doctor. The lab's launcher
 * (weft-lab.jar, {@code dev.weft.lab.cli.LabMain}) runs the same command line with its own commands added as
 * picocli subcommands ({@link #run(String[], PrintWriter, PrintWriter, List)}); this module does not depend on it.
 */
public final class Main {
    /**
     * The names of the lab's commands, for the product jar's error message only (a user who types {@code weft bench}
     * against weft.jar learns where the command is); the commands themselves are registered by the lab's launcher.
     */
    private static final List<String> IN_THE_LAB_JAR = List.of("kafka", "demo", "bench", "lab");

    private Main() {
    }

    public static void main(String[] args) {
        dev.weft.os.Carriers.atLeastTwo(); // before the first virtual thread: two carriers on one CPU
        System.exit(run(args, new PrintWriter(System.out, true), new PrintWriter(System.err, true)));
    }

    /** Runs the product's command line; for tests, with its own output streams. */
    public static int run(String[] args, PrintWriter out, PrintWriter err) {
        return run(args, out, err, List.of());
    }

    /**
     * Runs the command line with {@code more} commands (picocli {@code @Command} objects) after the product's, in the
     * order given: how the lab's launcher adds kafka, demo, bench and lab.
     */
    public static int run(String[] args, PrintWriter out, PrintWriter err, List<Object> more) {
        boolean verbose = java.util.Arrays.asList(args).contains("--verbose") || java.util.Arrays.asList(args)
                .contains("-v");
        return commandLine(out, err, verbose, more).execute(args);
    }

    /**
     * The whole command line, the product's commands then {@code more}, its output and errors going to {@code out} and
     * {@code err}. Without {@code more} (the product jar), its help says where the lab's commands are.
     */
    public static CommandLine commandLine(PrintWriter out, PrintWriter err, boolean verbose, List<Object> more) {
        CommandLine cl = new CommandLine(new WeftCommand());
        more.forEach(cl::addSubcommand);
        if (more.isEmpty()) {
            cl.getCommandSpec().usageMessage().footer("",
                    "kafka, demo, bench and lab are in weft-lab.jar (the ./weft script runs it for them).",
                    "Run 'weft COMMAND --help' for the options of a command.");
        }
        cl.addSubcommand(new CommandLine.HelpCommand());
        cl.setOut(out);
        cl.setErr(err);
        cl.setCaseInsensitiveEnumValuesAllowed(true);
        // Durations as people write them (250ms, 1.5s, 2m) for every option typed Duration.
        cl.registerConverter(java.time.Duration.class, text -> {
            try {
                return dev.weft.core.Durations.parse(text);
            } catch (IllegalArgumentException e) {
                throw new CommandLine.TypeConversionException(e.getMessage());
            }
        });
        cl.setParameterExceptionHandler((ex, a) -> {
            CommandLine cmd = ex.getCommandLine();
            if (ex instanceof CommandLine.UnmatchedArgumentException u && !cmd.getSubcommands().isEmpty()
                    && !u.getUnmatched().isEmpty() && !u.getUnmatched().getFirst().startsWith("-")) {
                String name = u.getUnmatched().getFirst();
                if (cmd.getParent() == null && IN_THE_LAB_JAR.contains(name)) {
                    err.println("weft: '" + name + "' is in weft-lab.jar, not in this product jar; ./weft runs it");
                    return 2;
                }
                err.println("weft: unknown command '" + name + "'; commands: "
                        + String.join(", ", cmd.getSubcommands().keySet()));
            } else {
                err.println("weft: " + ex.getMessage());
            }
            err.println("Try '" + cmd.getCommandSpec().qualifiedName() + " --help'.");
            return 2;
        });
        cl.setExecutionExceptionHandler((ex, cmd, parsed) -> {
            if (ex instanceof UserException ue) {
                err.println(prefixed(ue.getMessage()));
                if (verbose && ue.getCause() != null) {
                    ue.getCause().printStackTrace(err);
                }
                return ue.exitCode();
            }
            err.println("weft: internal error: " + ex);
            if (verbose) {
                ex.printStackTrace(err);
            } else {
                err.println("weft: run again with --verbose for the stack trace");
            }
            return 1;
        });
        return cl;
    }

    private static String prefixed(String message) {
        StringBuilder sb = new StringBuilder();
        for (String line : message.split("\n")) {
            if (!sb.isEmpty()) {
                sb.append('\n');
            }
            sb.append("weft: ").append(line);
        }
        return sb.toString();
    }
}
