package dev.weft.gateway;

import dev.weft.gateway.config.GatewayConfigLoader;
import dev.weft.gateway.server.Gateway;
import dev.weft.os.Descriptors;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The gateway in a child JVM for tests: {@code GatewayChild CONFIG} prints {@code READY <url>}, then the
 * gateway's log lines (those written while starting come right after READY), and runs until killed.
 */
public final class GatewayChild {
    private GatewayChild() {
    }

    /**
     * Starts {@code GatewayChild config} in a JVM of its own, its command after {@code prefix} (such as {@code bash -c
     * 'ulimit -n 400 && exec "$@"' bash}), and gives each line it prints after READY to {@code lines}, on a thread of
     * its own, until it ends. {@code name} is for errors.
     */
    static dev.weft.devtools.ChildProcess start(List<String> prefix, List<String> jvmFlags, Path config, String name,
                                                java.util.function.Consumer<String> lines) throws java.io.IOException {
        List<String> command = new ArrayList<>(prefix);
        command.add(ProcessHandle.current().info().command().orElse("java"));
        command.addAll(jvmFlags);
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), GatewayChild.class.getName(),
                config.toString()));
        dev.weft.devtools.ChildProcess child = dev.weft.devtools.ChildProcess.start(command, name);
        Thread.ofVirtual().start(() -> {
            try {
                for (String l = child.output().readLine(); l != null; l = child.output().readLine()) {
                    lines.accept(l);
                }
            } catch (java.io.IOException ignored) {
                // the child is gone
            }
        });
        return child;
    }

    public static void main(String[] args) throws Exception {
        loadClassesFromDirectories();
        List<String> early = new ArrayList<>();
        Object lock = new Object();
        boolean[] ready = {false};
        Gateway gw = Gateway.start(GatewayConfigLoader.load(Path.of(args[0])), new InetSocketAddress("127.0.0.1", 0),
                null, line -> {
                    synchronized (lock) {
                        if (ready[0]) {
                            System.out.println(line);
                            System.out.flush();
                        } else {
                            early.add(line);
                        }
                    }
                });
        synchronized (lock) {
            System.out.println("READY " + gw.url());
            early.forEach(System.out::println);
            System.out.println("descriptors: limit " + Descriptors.limit() + ", open " + Descriptors.open());
            System.out.flush();
            ready[0] = true;
        }
        Thread.sleep(Long.MAX_VALUE); // runs until the test kills it
    }

    /**
     * Loads (without initializing) every class of the class path's directories. The product runs from a jar, held
     * open, so a class loads without a new descriptor; this child runs from the modules' class directories, where
     * each class not yet loaded needs one, and a test that uses up the descriptors then fails with
     * NoClassDefFoundError in whatever path loads a class first (the client's {@code ResponseHead} did).
     */
    private static void loadClassesFromDirectories() throws java.io.IOException {
        ClassLoader loader = GatewayChild.class.getClassLoader();
        for (String entry : System.getProperty("java.class.path").split(java.io.File.pathSeparator)) {
            Path dir = Path.of(entry);
            if (!java.nio.file.Files.isDirectory(dir)) {
                continue;
            }
            try (java.util.stream.Stream<Path> files = java.nio.file.Files.walk(dir)) {
                for (Path f : (Iterable<Path>) files.filter(x -> x.toString().endsWith(".class"))::iterator) {
                    String name = dir.relativize(f).toString();
                    name = name.substring(0, name.length() - ".class".length()).replace(java.io.File.separatorChar, '.');
                    if (name.endsWith("module-info") || name.endsWith("package-info")) {
                        continue;
                    }
                    try {
                        Class.forName(name, false, loader);
                    } catch (ClassNotFoundException | LinkageError e) {
                        // a test class whose dependency the child does not need: its own code path never loads it
                    }
                }
            }
        }
    }
}
