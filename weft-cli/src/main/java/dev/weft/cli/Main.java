package dev.weft.cli;

import picocli.CommandLine;

import java.io.PrintWriter;
import java.util.List;

/** Entry point of the {@code weft} command. Exit codes: 0 ok, 1 failed, 2 bad usage. */
public final class Main {
    private Main() {
    }

    public static void main(String[] args) {
        dev.weft.os.Carriers.atLeastTwo(); // before the first virtual thread: two carriers on one CPU
        System.exit(run(args, new PrintWriter(System.out, true), new PrintWriter(System.err, true)));
    }

    /** Runs the command line; for tests, with its own output streams. */
    public static int run(String[] args, PrintWriter out, PrintWriter err) {
        boolean verbose = java.util.Arrays.asList(args).contains("--verbose") || java.util.Arrays.asList(args)
                .contains("-v");
        return commandLine(out, err, verbose).execute(args);
    }

    /** The whole command line, every command registered, its output and errors going to {@code out} and {@code err}. */
    static CommandLine commandLine(PrintWriter out, PrintWriter err, boolean verbose) {
        CommandLine cl = new CommandLine(new WeftCommand());
        addLabCommands(cl);
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
                if (cmd.getParent() == null && List.of("kafka", "demo", "bench", "lab").contains(name)) {
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

    /** The development and lab commands, in the order they are listed; present only in weft-lab.jar. */
    private static final String[] LAB_COMMANDS = {"dev.weft.cli.KafkaCommand", "dev.weft.cli.DemoCommand",
            "dev.weft.cli.BenchCommand", "dev.weft.cli.LabCommand"};

    /**
     * Adds kafka, demo, bench and lab when their classes are on the class path (weft-lab.jar, the tests); the
     * product jar leaves them out, and its help says where they are.
     */
    private static void addLabCommands(CommandLine cl) {
        for (String name : LAB_COMMANDS) {
            Object command;
            try {
                command = Class.forName(name).getDeclaredConstructor().newInstance();
            } catch (ClassNotFoundException | NoClassDefFoundError absent) {
                cl.getCommandSpec().usageMessage().footer("",
                        "kafka, demo, bench and lab are in weft-lab.jar (the ./weft script runs it for them).",
                        "Run 'weft COMMAND --help' for the options of a command.");
                return;
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException("cannot create " + name, e);
            }
            cl.addSubcommand(command);
        }
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
