package dev.weft.gateway.config;

import dev.weft.core.tls.Pem;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.util.List;

/**
 * Inbound TLS of the gateway ({@code tls:}): a PEM chain and a PEM key (PKCS#8), or a PKCS#12 keystore
 * whose password is read from the environment variable {@code passwordEnv}. Paths are resolved against the
 * config file's folder.
 *
 * @param password the keystore's password as read from the environment when the config was loaded
 */
public record TlsConfig(Path cert, Path key, Path keystore, String passwordEnv, char[] password) {
    /** The files whose change reloads the context. */
    public List<Path> files() {
        return keystore != null ? List.of(keystore) : List.of(cert, key);
    }

    /** @throws IOException naming the file that does not load */
    public SSLContext load() throws IOException {
        if (keystore == null) {
            return Pem.serverContext(cert, key);
        }
        try (InputStream in = Files.newInputStream(keystore)) {
            KeyStore ks = KeyStore.getInstance("PKCS12");
            ks.load(in, password);
            KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(ks, password);
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(kmf.getKeyManagers(), null, null);
            return ctx;
        } catch (GeneralSecurityException | IOException e) {
            throw new IOException(keystore + ": not a PKCS#12 keystore this password ($" + passwordEnv
                    + ") opens: " + e.getMessage(), e);
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TlsConfig t && java.util.Objects.equals(cert, t.cert) && java.util.Objects.equals(key, t.key)
                && java.util.Objects.equals(keystore, t.keystore) && java.util.Objects.equals(passwordEnv, t.passwordEnv);
    }

    @Override
    public int hashCode() {
        return java.util.Objects.hash(cert, key, keystore, passwordEnv);
    }

    @Override
    public String toString() {
        return keystore != null ? "tls(keystore " + keystore + ")" : "tls(cert " + cert + ", key " + key + ")";
    }
}
