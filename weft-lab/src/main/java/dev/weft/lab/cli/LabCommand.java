package dev.weft.lab.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

@Command(name = "lab",
        mixinStandardHelpOptions = true,
        description = {"Measure: benchmarks that run Weft beside other designs in one run and print the raw numbers.",
                ""},
        subcommands = {LabSystemACommand.class, LabServersCommand.class, LabClientsCommand.class, LabDispatchCommand.class,
                LabStarvationCommand.class, LabOverloadCommand.class, LabStormCommand.class, LabAgentCommand.class, LabChaosCommand.class,
                LabRelayCommand.class,
                CommandLine.HelpCommand.class})
public final class LabCommand implements Runnable {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }
}
