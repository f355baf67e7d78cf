package dev.weft.server.http2;

import org.junit.jupiter.api.Assumptions;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/** Finds (or builds, with the project's script) the external HTTP/2 tools the tests run. */
final class H2Tools {
    private H2Tools() {
    }

    /** The repository's root: the first folder upwards that holds {@code lab/h2}. */
    static Path root() {
        Path p = Path.of("").toAbsolutePath();
        while (p != null && !Files.isDirectory(p.resolve("lab/h2"))) {
            p = p.getParent();
        }
        if (p == null) {
            throw new IllegalStateException("no lab/h2 above " + Path.of("").toAbsolutePath());
        }
        return p;
    }

    /**
     * h2spec's path, built by {@code lab/h2/install-h2spec.sh} when missing; the test is skipped, saying why, only
     * when Go is not installed and the environment variable {@code CI} is unset (in CI it fails instead).
     */
    static Path h2spec() throws IOException, InterruptedException {
        Path script = root().resolve("lab/h2/install-h2spec.sh");
        ProcessBuilder pb = new ProcessBuilder("bash", script.toString()).redirectError(ProcessBuilder.Redirect.INHERIT);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        if (!p.waitFor(15, TimeUnit.MINUTES)) {
            p.destroyForcibly();
            throw new IllegalStateException("install-h2spec.sh took over 15 minutes");
        }
        int rc = p.exitValue();
        String ci = System.getenv("CI");
        if (rc == 3 && ci != null && !ci.isBlank() && !ci.equalsIgnoreCase("false")) {
            // in CI conformance is a gate: a runner without Go must fail, never pass by skipping
            throw new AssertionError("CI=" + ci + " and h2spec is not installed and Go is not on PATH to build it "
                    + "(lab/h2/install-h2spec.sh): HTTP/2 conformance cannot be checked");
        }
        Assumptions.assumeFalse(rc == 3, "h2spec is not installed and Go is not on PATH to build it "
                + "(lab/h2/install-h2spec.sh): HTTP/2 conformance not checked");
        if (rc != 0) {
            throw new IllegalStateException("lab/h2/install-h2spec.sh failed with exit code " + rc);
        }
        String[] lines = out.split("\n");
        return Path.of(lines[lines.length - 1]);
    }
}
