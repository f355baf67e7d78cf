package dev.weft.cli;

import picocli.CommandLine;

import java.util.ArrayList;
import java.util.List;

/** The commands of a command line, for whatever lists or records their help (the golden files of the tests). */
public final class HelpPages {
    private HelpPages() {
    }

    /**
     * Every command of {@code cl} and, depth first, its subcommands, in the order they are listed, each as the words
     * that name it after {@code weft} ({@code [lab, system-a]}; the root as {@code []}). picocli's {@code help} and
     * aliases are left out.
     */
    public static List<List<String>> commands(CommandLine cl) {
        List<List<String>> all = new ArrayList<>();
        collect(cl, List.of(), all);
        return all;
    }

    private static void collect(CommandLine cl, List<String> path, List<List<String>> all) {
        all.add(path);
        cl.getSubcommands().forEach((name, sub) -> {
            if (sub.getCommand() instanceof CommandLine.HelpCommand || !name.equals(sub.getCommandName())) {
                return;
            }
            List<String> p = new ArrayList<>(path);
            p.add(name);
            collect(sub, p, all);
        });
    }
}
