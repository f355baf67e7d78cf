package dev.weft.core.tls;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.InvalidKeySpecException;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509TrustManager;

/**
 * PEM files to the JDK's TLS objects: a certificate chain, an unencrypted PKCS#8 private key (RSA or EC),
 * a bundle of extra CA roots. The JDK's {@link CertificateFactory} parses certificates; the key is the
 * base64 body of {@code -----BEGIN PRIVATE KEY-----} handed to {@link KeyFactory}. Errors name the file
 * and say what to run when the key is in another format.
 */
public final class Pem {
    private static final Pattern BLOCK = Pattern.compile(
            "-----BEGIN ([A-Z0-9 ]+)-----([^-]*)-----END \\1-----");

    private Pem() {
    }

    /** The certificates of a PEM file, in file order (leaf first for a chain). */
    public static List<X509Certificate> certificates(Path file) throws IOException {
        byte[] bytes = Files.readAllBytes(file);
        List<X509Certificate> out = new ArrayList<>();
        try {
            CertificateFactory cf = CertificateFactory.getInstance("X.509");
            for (Certificate c : cf.generateCertificates(new ByteArrayInputStream(bytes))) {
                out.add((X509Certificate) c);
            }
        } catch (GeneralSecurityException e) {
            throw new IOException(file + ": not a PEM certificate file: " + e.getMessage(), e);
        }
        if (out.isEmpty()) {
            throw new IOException(file + ": no certificate (expected -----BEGIN CERTIFICATE-----)");
        }
        return out;
    }

    /** The private key of a PEM file holding one {@code PRIVATE KEY} block (PKCS#8, RSA or EC). */
    public static PrivateKey privateKey(Path file) throws IOException {
        String text = Files.readString(file, StandardCharsets.US_ASCII);
        Matcher m = BLOCK.matcher(text);
        while (m.find()) {
            String type = m.group(1);
            if (type.equals("PRIVATE KEY")) {
                byte[] der;
                try {
                    der = Base64.getMimeDecoder().decode(m.group(2).trim());
                } catch (IllegalArgumentException e) {
                    throw new IOException(file + ": the PRIVATE KEY block is not base64: " + e.getMessage());
                }
                for (String alg : new String[] {"RSA", "EC", "Ed25519", "RSASSA-PSS"}) {
                    try {
                        return KeyFactory.getInstance(alg).generatePrivate(new PKCS8EncodedKeySpec(der));
                    } catch (InvalidKeySpecException | java.security.NoSuchAlgorithmException e) {
                        // try the next algorithm
                    }
                }
                throw new IOException(file + ": the PRIVATE KEY is not an RSA or EC PKCS#8 key");
            }
            if (type.endsWith("PRIVATE KEY")) {
                throw new IOException(file + ": the key is a '" + type + "' block; Weft reads unencrypted PKCS#8"
                        + " ('PRIVATE KEY'): convert it with openssl pkcs8 -topk8 -nocrypt -in "
                        + file.getFileName() + " -out key.pem");
            }
        }
        throw new IOException(file + ": no private key (expected -----BEGIN PRIVATE KEY-----)");
    }

    /** A server-side (or client-certificate) context from a PEM chain and a PEM key. */
    public static SSLContext serverContext(Path certFile, Path keyFile) throws IOException {
        List<X509Certificate> chain = certificates(certFile);
        PrivateKey key = privateKey(keyFile);
        try {
            KeyStore ks = KeyStore.getInstance("PKCS12");
            ks.load(null, null);
            char[] pw = new char[0];
            ks.setKeyEntry("weft", key, pw, chain.toArray(new Certificate[0]));
            KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(ks, pw);
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(kmf.getKeyManagers(), null, null);
            return ctx;
        } catch (GeneralSecurityException e) {
            throw new IOException(certFile + " + " + keyFile + ": the key does not go with the certificate: "
                    + e.getMessage(), e);
        }
    }

    /**
     * Trust managers that accept the JDK's default roots plus the certificates of {@code caFile}
     * (or only the defaults when {@code caFile} is null).
     */
    public static TrustManager[] trustWithExtraRoots(Path caFile) throws IOException {
        try {
            TrustManagerFactory defaults = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            defaults.init((KeyStore) null);
            if (caFile == null) {
                return defaults.getTrustManagers();
            }
            KeyStore ks = KeyStore.getInstance("PKCS12");
            ks.load(null, null);
            int i = 0;
            for (TrustManager tm : defaults.getTrustManagers()) {
                if (tm instanceof X509TrustManager x) {
                    for (X509Certificate c : x.getAcceptedIssuers()) {
                        ks.setCertificateEntry("default-" + i++, c);
                    }
                }
            }
            for (X509Certificate c : certificates(caFile)) {
                ks.setCertificateEntry("extra-" + i++, c);
            }
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(ks);
            return tmf.getTrustManagers();
        } catch (GeneralSecurityException e) {
            throw new IOException(caFile + ": cannot build a trust store: " + e.getMessage(), e);
        }
    }

    /** A client context trusting the JDK's roots plus {@code caFile} (null: the defaults only). */
    public static SSLContext clientContext(Path caFile) throws IOException {
        try {
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(null, trustWithExtraRoots(caFile), null);
            return ctx;
        } catch (GeneralSecurityException e) {
            throw new IOException("cannot build a TLS client context: " + e.getMessage(), e);
        }
    }
}
