package dev.weft.gateway.config;

import dev.weft.config.ConfigException;
import dev.weft.config.ConfigNode;
import dev.weft.config.Problems;
import dev.weft.core.HostPort;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/** Reads the {@code tls:} and {@code admin:} sections of a gateway config (see docs/gateway.md, Deploying). */
final class TlsAdminReader {
    private final Problems problems;
    private final Path folder;
    private final Function<String, String> env;

    TlsAdminReader(Problems problems, Path configFile, Function<String, String> env) {
        this.problems = problems;
        Path parent = configFile.toAbsolutePath().getParent();
        this.folder = parent == null ? Path.of(".") : parent;
        this.env = env;
    }

    TlsConfig tls(ConfigNode node) {
        try {
            Map<String, ConfigNode> t = node.entries(Set.of("cert", "key", "keystore", "password_env"), problems);
            boolean pem = t.containsKey("cert") || t.containsKey("key");
            boolean p12 = t.containsKey("keystore") || t.containsKey("password_env");
            if (pem == p12) {
                problems.add(node, "tls: give either 'cert:' and 'key:' (PEM files) or 'keystore:' (PKCS#12) with "
                        + "'password_env:', not " + (pem ? "both" : "neither"));
                return null;
            }
            TlsConfig cfg;
            ConfigNode at;
            if (pem) {
                if (!t.containsKey("cert") || !t.containsKey("key")) {
                    problems.add(node, "tls: 'cert:' and 'key:' go together (a PEM chain and a PKCS#8 PEM key)");
                    return null;
                }
                cfg = new TlsConfig(path(t.get("cert")), path(t.get("key")), null, null, null);
                at = t.get("cert");
            } else {
                if (!t.containsKey("keystore") || !t.containsKey("password_env")) {
                    problems.add(node, "tls: 'keystore:' needs 'password_env:' (the environment variable holding "
                            + "its password)");
                    return null;
                }
                String var = t.get("password_env").text();
                String pw = env.apply(var);
                if (pw == null) {
                    problems.add(t.get("password_env"), "tls: environment variable " + var + " is not set");
                    return null;
                }
                cfg = new TlsConfig(null, null, path(t.get("keystore")), var, pw.toCharArray());
                at = t.get("keystore");
            }
            for (Path f : cfg.files()) {
                if (!java.nio.file.Files.isReadable(f)) {
                    problems.add(at, "tls: cannot read " + f + " (no such file, or not readable)");
                    return null;
                }
            }
            try {
                cfg.load();
            } catch (IOException | RuntimeException e) {
                problems.add(at, "tls: " + e.getMessage());
                return null;
            }
            return cfg;
        } catch (ConfigException e) {
            problems.addAll(e);
            return null;
        }
    }

    AdminConfig admin(ConfigNode node) {
        try {
            Map<String, ConfigNode> a = node.entries(Set.of("listen", "token_env"), problems);
            InetSocketAddress listen = AdminConfig.DEFAULT_LISTEN;
            if (a.containsKey("listen")) {
                try {
                    listen = HostPort.parse(a.get("listen").text());
                } catch (IllegalArgumentException e) {
                    problems.add(a.get("listen"), "admin.listen: " + e.getMessage());
                }
            }
            String var = null;
            String token = null;
            if (a.containsKey("token_env")) {
                var = a.get("token_env").text();
                token = env.apply(var);
                if (token == null || token.isBlank()) {
                    problems.add(a.get("token_env"), "admin: environment variable " + var
                            + " (the admin token) is not set or empty");
                }
            }
            return new AdminConfig(listen, var, token);
        } catch (ConfigException e) {
            problems.addAll(e);
            return null;
        }
    }

    private Path path(ConfigNode n) throws ConfigException {
        return folder.resolve(n.text()).normalize();
    }
}
