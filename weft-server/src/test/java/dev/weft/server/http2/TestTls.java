package dev.weft.server.http2;

import dev.weft.server.ServerTls;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** A self-signed certificate for 127.0.0.1, made with the JDK's keytool, as server and client contexts. */
final class TestTls {
    private static final char[] PASSWORD = "changeit".toCharArray();
    private static KeyStore store;

    private TestTls() {
    }

    static synchronized KeyStore store() throws Exception {
        if (store == null) {
            Path dir = Files.createTempDirectory("weft-h2-tls");
            Path ks = dir.resolve("server.p12");
            Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
                    "-genkeypair", "-alias", "weft", "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=localhost",
                    "-ext", "SAN=ip:127.0.0.1,dns:localhost", "-validity", "2", "-storetype", "PKCS12",
                    "-keystore", ks.toString(), "-storepass", "changeit", "-keypass", "changeit")
                    .redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes());
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException("keytool failed: " + out);
            }
            KeyStore k = KeyStore.getInstance("PKCS12");
            try (InputStream in = Files.newInputStream(ks)) {
                k.load(in, PASSWORD);
            }
            store = k;
        }
        return store;
    }

    static ServerTls server() throws Exception {
        KeyStore k = store();
        return ServerTls.start(() -> {
            try {
                KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
                kmf.init(k, PASSWORD);
                SSLContext c = SSLContext.getInstance("TLS");
                c.init(kmf.getKeyManagers(), null, null);
                return c;
            } catch (java.security.GeneralSecurityException e) {
                throw new IOException(e);
            }
        }, List.of(), null, m -> { });
    }

    /** A client context that trusts the test certificate only. */
    static SSLContext client() throws Exception {
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(store());
        SSLContext c = SSLContext.getInstance("TLS");
        c.init(null, tmf.getTrustManagers(), null);
        return c;
    }
}
