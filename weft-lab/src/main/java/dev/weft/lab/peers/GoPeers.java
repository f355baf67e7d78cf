package dev.weft.lab.peers;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Builds the Go peers under {@code lab/peers/} with the machine's Go, into {@code .weft/peers/}, once and again
 * whenever a source is newer than the binary. All but {@code go-relay} use the standard library only (no
 * network); {@code go-relay} takes golang.org/x/net, pinned by its go.mod and go.sum, from the Go module proxy
 * (or the module cache) on its first build.
 * {@code lura} builds against a lura checkout the user names ({@link #buildLura}).
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
            go(home, src, "'go build' of " + src, "build", "-o", bin.toString(), ".");
            return bin;
        } catch (IOException e) {
            throw new Unavailable("could not build " + src + ": " + e.getMessage());
        }
    }

    /** The environment variable that names a lura checkout for {@link #buildLura}. */
    public static final String LURA_SRC = "WEFT_LAB_LURA_SRC";

    /**
     * Builds {@code lab/peers/lura} against the lura checkout {@code WEFT_LAB_LURA_SRC} names (lura, the engine
     * of KrakenD CE, is not served by the Go module proxy, so a {@code replace} points the build at the
     * checkout; lura's own dependencies come from the proxy, pinned by the peer's go.sum), in
     * {@code .weft/peers/lura-build/}; returns {@code .weft/peers/weft-peer-lura}. Built again when the peer's
     * sources or a Go file of the checkout are newer than the binary, or the checkout named is another one.
     */
    public static Path buildLura() throws Unavailable {
        String dir = System.getenv(LURA_SRC);
        if (dir == null || dir.isBlank()) {
            throw new Unavailable("lura (KrakenD CE's engine) is not on the Go module proxy, so the lab builds it "
                    + "from a checkout: git clone https://github.com/luraproject/lura DIR, then run the lab with "
                    + LURA_SRC + "=DIR");
        }
        Path lura = Path.of(dir).toAbsolutePath().normalize();
        Path home = home();
        Path src = home.resolve("lab/peers/lura");
        Path work = home.resolve(".weft/peers/lura-build");
        Path bin = home.resolve(".weft/peers/weft-peer-lura");
        Path stamp = work.resolve("lura-checkout.txt");
        try {
            Path mod = lura.resolve("go.mod");
            if (!Files.isRegularFile(mod) || !Files.readString(mod).contains("module github.com/luraproject/lura/v2")) {
                throw new Unavailable(LURA_SRC + "=" + dir + " is not a checkout of github.com/luraproject/lura "
                        + "(its go.mod must declare module github.com/luraproject/lura/v2)");
            }
            if (Files.isExecutable(bin) && !newer(src, bin) && Files.isRegularFile(stamp)
                    && Files.readString(stamp).equals(lura.toString()) && !newerGo(lura, bin)) {
                return bin;
            }
            Files.createDirectories(work);
            for (String f : List.of("main.go", "go.mod", "go.sum")) {
                Files.copy(src.resolve(f), work.resolve(f), StandardCopyOption.REPLACE_EXISTING);
            }
            go(home, work, "pointing the lura peer at " + lura, "mod", "edit",
                    "-replace=github.com/luraproject/lura/v2=" + lura);
            go(home, work, "'go mod tidy' of the lura peer (lura's dependencies come from the Go module proxy)",
                    "mod", "tidy");
            go(home, work, "'go build' of the lura peer", "build", "-o", bin.toString(), ".");
            Files.writeString(stamp, lura.toString());
            return bin;
        } catch (IOException e) {
            throw new Unavailable("could not build the lura peer: " + e.getMessage());
        }
    }

    /** Runs {@code go ARGS} in {@code dir} with the Go at hand; {@code what} names the step in the failure. */
    private static void go(Path home, Path dir, String what, String... args) throws Unavailable, IOException {
        List<String> cmd = new java.util.ArrayList<>(List.of("go"));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true);
        // never fetch a toolchain: the peers build with the Go at hand (modules only as go.sum pins them)
        pb.environment().put("GOTOOLCHAIN", "local");
        if (System.getenv("GOCACHE") == null && System.getenv("HOME") == null) {
            pb.environment().put("GOCACHE", home.resolve(".weft/go-cache").toString());
        }
        Process p;
        try {
            p = pb.start();
        } catch (IOException e) {
            throw new Unavailable("no 'go' command on PATH (install Go 1.22 or newer to measure the Go peers)");
        }
        try {
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(5, TimeUnit.MINUTES) || p.exitValue() != 0) {
                p.destroyForcibly();
                throw new Unavailable(what + " failed: " + out.strip());
            }
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new Unavailable("interrupted: " + what);
        }
    }

    /** Whether a Go source or module file anywhere under {@code tree} (a checkout: a pull changes them) is newer than {@code bin}. */
    private static boolean newerGo(Path tree, Path bin) throws IOException {
        long built = Files.getLastModifiedTime(bin).toMillis();
        try (Stream<Path> s = Files.walk(tree)) {
            return s.filter(p -> !p.toString().contains("/.git/"))
                    .filter(p -> p.toString().endsWith(".go") || p.endsWith("go.mod") || p.endsWith("go.sum"))
                    .anyMatch(p -> {
                        try {
                            return Files.getLastModifiedTime(p).toMillis() > built;
                        } catch (IOException e) {
                            return true;
                        }
                    });
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
