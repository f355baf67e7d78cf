package dev.weft.cli;

import dev.weft.devtools.Golden;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The command line's part of the compatibility contract, held by golden files under
 * {@code src/test/resources/golden/} (see {@link Golden} for how to regenerate them, and why a change to one is a
 * compatibility decision): every command's {@code --help}, and what {@code weft check} prints, with its exit code,
 * for the example configs and the configs under {@code golden/config/}.
 */
public class CliGoldenTest {
    /** The configs of the set: the examples of the repository, then ours. */
    private static List<Path> configs() throws IOException {
        List<Path> all = new ArrayList<>();
        for (Path dir : List.of(Path.of("..", "examples"), Path.of("src", "test", "resources", "golden", "config"))) {
            try (Stream<Path> s = Files.list(dir)) {
                s.filter(p -> p.toString().endsWith(".yaml")).sorted().forEach(all::add);
            }
        }
        return all;
    }

    public record Run(int exit, String out, String err) {
        String text(String command) {
            return "$ " + command + "\nexit " + exit + "\n--- stdout\n" + out + "--- stderr\n" + err;
        }
    }

    private static Run run(String... args) {
        return run(args, List.of());
    }

    /** Runs the command line with {@code more} commands after the product's (the lab's, in its golden test). */
    public static Run run(String[] args, List<Object> more) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = Main.run(args, new PrintWriter(out, true), new PrintWriter(err, true), more);
        return new Run(exit, out.toString(), err.toString());
    }

    @Test
    void everyCommandsHelpIsAsRecorded() {
        CommandLine root = Main.commandLine(new PrintWriter(new StringWriter()), new PrintWriter(new StringWriter()),
                false, List.of());
        List<List<String>> commands = HelpPages.commands(root);
        assertThat(commands).as("the product's commands").hasSizeGreaterThanOrEqualTo(7);
        checkHelp(commands, CliGoldenTest::run, "help/commands.txt");
    }

    /**
     * Compares the {@code --help} of each of {@code commands}, run through {@code main}, with its golden file
     * {@code help/weft-WORDS.txt}, and their list with {@code index}. The lab's golden test does the same for its
     * commands.
     */
    public static void checkHelp(List<List<String>> commands, java.util.function.Function<String[], Run> main, String index) {
        StringBuilder names = new StringBuilder();
        for (List<String> c : commands) {
            List<String> args = new ArrayList<>(c);
            args.add("--help");
            Run r = main.apply(args.toArray(String[]::new));
            String name = c.isEmpty() ? "weft" : "weft-" + String.join("-", c);
            names.append(String.join(" ", prefixed(c))).append('\n');
            Golden.check("help/" + name + ".txt", r.text(String.join(" ", prefixed(args))));
        }
        Golden.check(index, names.toString());
    }

    private static List<String> prefixed(List<String> words) {
        List<String> all = new ArrayList<>();
        all.add("weft");
        all.addAll(words);
        return all;
    }

    @Test
    void checkSaysWhatItSaidOfEveryConfigOfTheSet() throws IOException {
        List<Path> configs = configs();
        assertThat(configs).as("examples and golden configs").hasSizeGreaterThanOrEqualTo(8);
        for (Path f : configs) {
            Run r = run("check", f.toString());
            String name = f.getFileName().toString().replace(".yaml", "");
            String text = sortedSets(machineFree(r.text("weft check FILE").replace(f.toString(), "FILE")));
            Golden.check("check/" + name + ".txt", text);
        }
    }

    /**
     * {@code text} with the values of each {@code in [a, b]} sorted: a dispatch match holds its values in a set, which
     * {@code weft check} prints in the set's order, and that order changes from one JVM to the next.
     */
    static String sortedSets(String text) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile(" in \\[([^\\]]*)]").matcher(text);
        return m.replaceAll(r -> java.util.regex.Matcher.quoteReplacement(" in [" + String.join(", ",
                new java.util.TreeSet<>(List.of(r.group(1).split(", ")))) + "]"));
    }

    /**
     * The output without the two lines that depend on the machine it runs on rather than on the config: whether the
     * config fits this process's open-file limit, and the front door's thread priority as this user may set it
     * (each has tests of its own: MainTest, CheckCommandTest, the gateway's DescriptorBudgetTest).
     */
    static String machineFree(String text) {
        StringBuilder sb = new StringBuilder();
        for (String line : text.split("\n", -1)) {
            String l = line.strip();
            if (l.startsWith("warning: the open-file limit is ") || l.startsWith("front door: ")
                    || l.startsWith("warning: run as now, the gateway may not raise")) {
                continue;
            }
            sb.append(line).append('\n');
        }
        return sb.substring(0, sb.length() - 1);
    }
}
