package dev.weft.devtools;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A self-signed certificate for tests and labs, made the way the docs tell a user to make one:
 * {@code openssl req -x509} (RSA-2048, SAN for localhost and 127.0.0.1, valid 2 days). Needs the
 * {@code openssl} command on PATH and says so when it is missing.
 */
public record TestCerts(Path cert, Path key) {

    /** Writes {@code cert.pem} and {@code key.pem} (unencrypted PKCS#8) into {@code dir}. */
    public static TestCerts selfSigned(Path dir) throws IOException {
        return selfSigned(dir, "cert.pem", "key.pem");
    }

    public static TestCerts selfSigned(Path dir, String certName, String keyName) throws IOException {
        Files.createDirectories(dir);
        Path cert = dir.resolve(certName);
        Path key = dir.resolve(keyName);
        List<String> cmd = List.of("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
                "-keyout", key.toString(), "-out", cert.toString(), "-days", "2", "-subj", "/CN=localhost",
                "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1");
        Process p;
        try {
            p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        } catch (IOException e) {
            throw new IOException("TestCerts needs the openssl command (Debian: apt-get install openssl): "
                    + e.getMessage(), e);
        }
        try {
            String out = new String(p.getInputStream().readAllBytes());
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IOException("openssl req -x509 failed: " + out);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while running openssl", e);
        }
        return new TestCerts(cert, key);
    }
}
