package dev.weft.lab.cli;

import dev.weft.cli.UserException;
import dev.weft.core.Durations;

import java.time.Duration;
import java.util.Collection;
import java.util.List;

/** Checks and echoes shared by the lab commands. */
final class LabArgs {
    private LabArgs() {
    }

    /** Every name in {@code given} must be in {@code known}; a usage error names the option otherwise. */
    static void requireKnown(String option, List<String> given, Collection<String> known) {
        for (String g : given) {
            if (!known.contains(g)) {
                throw new UserException(option + ": unknown name '" + g + "'; known: " + String.join(", ", known), null, 2);
            }
        }
    }

    /** {@code 0ms,100ms} as written back in the "command:" line. */
    static String durations(List<Duration> ds) {
        return String.join(",", ds.stream().map(Durations::format).toList());
    }
}
