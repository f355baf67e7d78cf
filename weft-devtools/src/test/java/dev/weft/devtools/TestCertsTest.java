package dev.weft.devtools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.weft.core.tls.Pem;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Pem and TestCerts together: an openssl-made pair serves TLS that a client trusting it (only) accepts. */
class TestCertsTest {

    @Test
    void opensslPairServesTlsToAClientThatTrustsIt(@TempDir Path dir) throws Exception {
        TestCerts certs = TestCerts.selfSigned(dir);
        SSLContext server = Pem.serverContext(certs.cert(), certs.key());
        SSLContext trusting = Pem.clientContext(certs.cert());
        try (SSLServerSocket ss = (SSLServerSocket) server.getServerSocketFactory()
                .createServerSocket(0, 5, InetAddress.getLoopbackAddress())) {
            Thread t = Thread.ofVirtual().start(() -> {
                try (SSLSocket s = (SSLSocket) ss.accept()) {
                    s.getOutputStream().write(s.getInputStream().read() + 1);
                    s.getOutputStream().flush();
                } catch (IOException ignored) {
                    // the refusing client below ends its handshake with an alert
                }
            });
            try (SSLSocket c = (SSLSocket) trusting.getSocketFactory().createSocket("localhost", ss.getLocalPort())) {
                c.getOutputStream().write(41);
                c.getOutputStream().flush();
                assertEquals(42, c.getInputStream().read());
            }
            t.join();
            Thread t2 = Thread.ofVirtual().start(() -> {
                try (SSLSocket s = (SSLSocket) ss.accept()) {
                    s.startHandshake();
                } catch (IOException ignored) {
                    // expected: the client refuses the certificate
                }
            });
            SSLContext defaults = Pem.clientContext(null);
            try (SSLSocket c = (SSLSocket) defaults.getSocketFactory().createSocket("localhost", ss.getLocalPort())) {
                assertThrows(SSLHandshakeException.class, c::startHandshake);
            }
            t2.join();
        }
    }

    @Test
    void aPkcs1KeyIsRefusedWithTheCommandThatConvertsIt(@TempDir Path dir) throws Exception {
        Path key = dir.resolve("rsa.pem");
        Files.writeString(key, "-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n");
        IOException e = assertThrows(IOException.class, () -> Pem.privateKey(key));
        assertTrue(e.getMessage().contains("openssl pkcs8 -topk8"), e.getMessage());
        Path none = dir.resolve("none.pem");
        Files.writeString(none, "hello");
        assertTrue(assertThrows(IOException.class, () -> Pem.certificates(none)).getMessage().contains("none.pem"));
    }
}
