package dev.weft.lab.cli;

import dev.weft.cli.CliGoldenTest;
import dev.weft.cli.HelpPages;
import dev.weft.cli.Main;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The lab's command line in the compatibility contract: {@code weft --help} as weft-lab.jar prints it and the
 * {@code --help} of every command the lab registers, held by golden files under {@code src/test/resources/golden/}
 * (regenerated with {@code -Dweft.golden.update=true}; see dev.weft.devtools.Golden). The product's commands are
 * recorded by weft-cli's CliGoldenTest.
 */
class LabCliGoldenTest {
    @Test
    void theLabsCommandsHelpIsAsRecorded() {
        PrintWriter none = new PrintWriter(new StringWriter());
        List<List<String>> product = HelpPages.commands(Main.commandLine(none, none, false, List.of()));
        CommandLine lab = Main.commandLine(none, none, false, LabMain.commands());
        List<List<String>> added = HelpPages.commands(lab).stream()
                .filter(c -> c.isEmpty() || !product.contains(c)).toList();
        assertThat(added).as("the root and the lab's commands").contains(List.of("kafka"), List.of("lab", "system-a"));
        CliGoldenTest.checkHelp(added, args -> CliGoldenTest.run(args, LabMain.commands()), "help/commands.txt");
    }
}
