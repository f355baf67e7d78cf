package dev.weft.upstream;

import dev.weft.core.tls.Pem;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLSocketFactory;
import java.io.IOException;
import java.net.Socket;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * HTTPS for the simulator ({@code weft upstream --tls-cert PEM --tls-key PEM}): the JDK's TLS over each
 * accepted socket, and counts of what the handshakes cost. A resumed handshake (a session ticket the
 * client kept) yields a session that keeps the creation time of the full handshake that made it, so a
 * handshake whose session is older than the handshake itself counts as resumed, the others as
 * {@code full}.
 * {@code peak_in_progress} is the most handshakes this server had between accept and completion at once.
 */
public final class UpstreamTls {
    private final SSLSocketFactory factory;
    private final LongAdder handshakes = new LongAdder();
    private final LongAdder full = new LongAdder();
    private final LongAdder failed = new LongAdder();
    private final AtomicLong inProgress = new AtomicLong();
    private final AtomicLong peak = new AtomicLong();

    private UpstreamTls(SSLContext ctx) {
        this.factory = ctx.getSocketFactory();
    }

    /** From a PEM certificate chain and a PEM (PKCS#8) key ({@link Pem#serverContext}). */
    public static UpstreamTls fromPem(Path cert, Path key) throws IOException {
        return new UpstreamTls(Pem.serverContext(cert, key));
    }

    /** Runs the server side of the handshake over {@code raw}; the TLS socket to talk on. */
    SSLSocket accept(Socket raw) throws IOException {
        long now = inProgress.incrementAndGet();
        peak.accumulateAndGet(now, Math::max);
        try {
            SSLSocket s = (SSLSocket) factory.createSocket(raw, null, raw.getPort(), true);
            s.setUseClientMode(false);
            long started = System.currentTimeMillis();
            s.startHandshake();
            handshakes.increment();
            if (s.getSession().getCreationTime() >= started) {
                full.increment(); // a resumed session keeps the creation time of the handshake that made it
            }
            return s;
        } catch (IOException | RuntimeException e) {
            failed.increment();
            throw e;
        } finally {
            inProgress.decrementAndGet();
        }
    }

    public long handshakes() {
        return handshakes.sum();
    }

    public long fullHandshakes() {
        return full.sum();
    }

    public long failedHandshakes() {
        return failed.sum();
    }

    public long peakInProgress() {
        return peak.get();
    }

    void reset() {
        handshakes.reset();
        full.reset();
        failed.reset();
        peak.set(inProgress.get());
    }

    Map<String, Object> snapshot() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("handshakes", handshakes.sum());
        m.put("full", full.sum());
        m.put("resumed", Math.max(0, handshakes.sum() - full.sum()));
        m.put("failed", failed.sum());
        m.put("in_progress", inProgress.get());
        m.put("peak_in_progress", peak.get());
        return m;
    }
}
