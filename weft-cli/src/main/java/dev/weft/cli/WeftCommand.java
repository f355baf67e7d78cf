package dev.weft.cli;

import dev.weft.core.WeftVersion;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ScopeType;
import picocli.CommandLine.Spec;

@Command(name = "weft",
        mixinStandardHelpOptions = true,
        versionProvider = WeftCommand.Version.class,
        description = {
                "Weft: call slow HTTP services (10 ms to seconds per call) at full speed, with plain blocking code on "
                        + "JDK 25 virtual threads.",
                ""},
        // kafka, demo, bench and lab are added by the lab's launcher (weft-lab.jar, dev.weft.lab.cli.LabMain);
        // the product jar (weft.jar) carries neither the development broker nor the lab's peers
        subcommands = {GatewayCommand.class, DispatchCommand.class, CheckCommand.class, UpstreamCommand.class,
                DoctorCommand.class},
        footer = {"", "Run 'weft COMMAND --help' for the options of a command."})
public final class WeftCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Option(names = {"-v", "--verbose"}, scope = ScopeType.INHERIT,
            description = "Print stack traces of errors and more detail.")
    boolean verbose;

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    /** The version from the jar, with the JDK it runs on. */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String version = WeftVersion.get();
            return new String[] {"weft " + (version == null ? "unknown" : version),
                    "JDK " + Runtime.version() + " (" + System.getProperty("java.vendor") + "), "
                            + System.getProperty("os.name") + " " + System.getProperty("os.arch")};
        }
    }
}
