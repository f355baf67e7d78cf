package dev.weft.lab.peers;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Builds the Go peers under {@code lab/peers/} with the machine's Go, into {@code .weft/peers/}, once and again
 * whenever a source is newer than the binary. All but {@code go-relay} use the standard library only (no
 * network); {@code go-relay} takes golang.org/x/net, pinned by its go.mod and go.sum, from the Go module proxy
 * (or the module cache) on its first build.
 * Where there is no Go, or no source tree (a jar copied elsewhere), {@link #build} says why in its
 * exception and the lab skips the model with that note.
 */
public final class GoPeers {
    /** Why a Go peer cannot run here. */
    public static final class Unavailable extends Exception {
        public Unavailable(String message) {
            super(message);
        }
    }

    private GoPeers() {
    }

    /**
     * The Weft source tree: {@code WEFT_HOME} (set by {@code ./weft}), else the nearest of the working
     * directory and its parents that holds {@code lab/peers}.
     */
    public static Path home() throws Unavailable {
        String env = System.getenv("WEFT_HOME");
        if (env != null && !env.isBlank()) {
            Path home = Path.of(env);
            if (Files.isDirectory(home.resolve("lab/peers"))) {
                return home;
            }
            throw new Unavailable("WEFT_HOME=" + env + " has no lab/peers/");
        }
        for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
            if (Files.isDirectory(p.resolve("lab/peers"))) {
                return p;
            }
        }
        throw new Unavailable("no lab/peers/ in " + Path.of("").toAbsolutePath() + " or above (run from the Weft "
                + "source tree, or set WEFT_HOME)");
    }

    /** Builds {@code lab/peers/NAME} (a Go main package) when needed; returns {@code .weft/peers/weft-peer-NAME}. */
    public static Path build(String name) throws Unavailable {
        Path home = home();
        Path src = home.resolve("lab/peers").resolve(name);
        Path bin = home.resolve(".weft/peers").resolve("weft-peer-" + name);
        try {
            if (Files.isExecutable(bin) && !newer(src, bin)) {
                return bin;
            }
            Files.createDirectories(bin.getParent());
            ProcessBuilder pb = new ProcessBuilder("go", "build", "-o", bin.toString(), ".").directory(src.toFile())
                    .redirectErrorStream(true);
            // never fetch a toolchain: the peers build with the Go at hand (modules only as go.sum pins them)
            pb.environment().put("GOTOOLCHAIN", "local");
            if (System.getenv("GOCACHE") == null && System.getenv("HOME") == null) {
                pb.environment().put("GOCACHE", home.resolve(".weft/go-cache").toString());
            }
            Process p;
            try {
                p = pb.start();
            } catch (IOException e) {
                throw new Unavailable("no 'go' command on PATH (install Go 1.22 or newer to measure the Go peer)");
            }
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(5, TimeUnit.MINUTES) || p.exitValue() != 0) {
                p.destroyForcibly();
                throw new Unavailable("'go build' of " + src + " failed: " + out.strip());
            }
            return bin;
        } catch (IOException e) {
            throw new Unavailable("could not build " + src + ": " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new Unavailable("interrupted while building " + src);
        }
    }

    private static boolean newer(Path srcDir, Path bin) throws IOException {
        long built = Files.getLastModifiedTime(bin).toMillis();
        try (Stream<Path> s = Files.list(srcDir)) {
            List<Path> sources = s.filter(p -> p.toString().endsWith(".go") || p.endsWith("go.mod") || p.endsWith("go.sum")).toList();
            for (Path p : sources) {
                if (Files.getLastModifiedTime(p).toMillis() > built) {
                    return true;
                }
            }
        }
        return false;
    }
}
