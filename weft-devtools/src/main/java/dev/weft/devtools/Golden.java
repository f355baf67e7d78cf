package dev.weft.devtools;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Golden files of the compatibility contract: config keys and what {@code weft check} says of them, every command's
 * {@code --help}, the metric names of a running gateway, the bytes on the wire. A test computes the text and
 * compares it with the file under {@code src/test/resources/golden/} of its module.
 *
 * <p>To regenerate them, run the tests with {@code -Dweft.golden.update=true} (for example
 * {@code ./mvnw -q -pl weft-cli -am test -Dtest='*Golden*' -Dsurefire.failIfNoSpecifiedTests=false
 * -Dweft.golden.update=true}): each file is rewritten with what the code produces now, and the test passes. Changing a
 * golden file is a compatibility decision (a user's config, script, dashboard or peer sees the difference): review
 * the diff as such, and say so in the commit.
 */
public final class Golden {
    /** The system property that rewrites the golden files instead of comparing with them. */
    public static final String UPDATE = "weft.golden.update";

    private Golden() {
    }

    /** Where the golden files of the module whose tests run now live (surefire runs a module's tests in its directory). */
    static Path root() {
        return Path.of("src", "test", "resources", "golden");
    }

    /**
     * Compares {@code actual} with the golden file {@code name} (a path under {@code golden/}), or rewrites the file
     * when {@value #UPDATE} is {@code true}.
     *
     * @throws AssertionError naming the file, the first line that differs and how to regenerate, when they differ
     */
    public static void check(String name, String actual) {
        Path file = root().resolve(name);
        try {
            if (Boolean.getBoolean(UPDATE)) {
                Files.createDirectories(file.getParent());
                Files.writeString(file, actual, StandardCharsets.UTF_8);
                return;
            }
            if (!Files.isRegularFile(file)) {
                throw new AssertionError("no golden file " + file.toAbsolutePath() + "; create it with -D" + UPDATE
                        + "=true (and review it: it becomes part of the compatibility contract)");
            }
            String expected = Files.readString(file, StandardCharsets.UTF_8);
            if (!expected.equals(actual)) {
                throw new AssertionError(file + " differs from what the code produces now, at " + firstDifference(
                        expected, actual) + "\n--- expected (golden)\n" + expected + "\n--- actual\n" + actual
                        + "\nA golden file is part of the compatibility contract: when the change is meant, rerun with -D"
                        + UPDATE + "=true and say so in the commit.");
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The first line where {@code a} and {@code b} differ, with both versions of it. */
    static String firstDifference(String a, String b) {
        String[] x = a.split("\n", -1);
        String[] y = b.split("\n", -1);
        for (int i = 0; i < Math.max(x.length, y.length); i++) {
            String l = i < x.length ? x[i] : "<end>";
            String r = i < y.length ? y[i] : "<end>";
            if (!l.equals(r)) {
                return "line " + (i + 1) + ": expected [" + l + "] but was [" + r + "]";
            }
        }
        return "the end";
    }
}
