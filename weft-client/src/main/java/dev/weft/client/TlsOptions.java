package dev.weft.client;

import dev.weft.core.tls.Pem;

import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;
import java.io.IOException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.cert.X509Certificate;

/**
 * How an https destination's TLS is set up: how its certificate is checked, and which protocols are offered; and
 * whether a plain {@code http://} destination is spoken to in HTTP/2 with prior knowledge.
 *
 * @param ca                 a PEM file of extra CA roots trusted besides the JDK's (null: the JDK's only)
 * @param insecureSkipVerify accept any certificate for any host name: for tests and labs only (the
 *                           connection is encrypted but not authenticated); the gateway warns at start
 * @param http2              offer HTTP/2 besides HTTP/1.1 by ALPN (the server chooses), default true: one
 *                           connection then carries up to {@code max_streams} calls at once
 * @param h2c                an {@code http://} destination is spoken to in HTTP/2 from the connection's first byte
 *                           (RFC 9113 section 3.3, "prior knowledge"; config {@code http2: h2c}), for servers that
 *                           speak HTTP/2 only, as gRPC servers do; default false (HTTP/1.1). No effect on https.
 */
public record TlsOptions(Path ca, boolean insecureSkipVerify, boolean http2, boolean h2c) {
    public static final TlsOptions DEFAULT = new TlsOptions(null, false, true, false);

    /** Options that offer HTTP/2 (the default). */
    public TlsOptions(Path ca, boolean insecureSkipVerify) {
        this(ca, insecureSkipVerify, true, false);
    }

    public TlsOptions withHttp2(boolean on) {
        return new TlsOptions(ca, insecureSkipVerify, on, h2c && on);
    }

    /** These options with HTTP/2 by prior knowledge on plain {@code http://} (and offered by ALPN on https). */
    public TlsOptions withH2c() {
        return new TlsOptions(ca, insecureSkipVerify, true, true);
    }

    /** Whether the host name in the certificate is checked against the destination's host. */
    public boolean verifyHostname() {
        return !insecureSkipVerify;
    }

    /**
     * A new client context for these options: one per destination, so that its session cache resumes the
     * destination's TLS sessions.
     */
    public SSLContext context() throws IOException {
        if (!insecureSkipVerify) {
            return Pem.clientContext(ca);
        }
        try {
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(null, new TrustManager[] {new TrustAll()}, null);
            return ctx;
        } catch (GeneralSecurityException e) {
            throw new IOException("cannot build a TLS client context: " + e.getMessage(), e);
        }
    }

    /** insecure_skip_verify: trusts every chain (the host name check is switched off apart). */
    private static final class TrustAll implements X509TrustManager {
        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType) {
            // a client context never checks clients
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType) {
            // insecure_skip_verify: accepted on purpose
        }

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return new X509Certificate[0];
        }
    }
}
