package dev.weft.server;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import java.io.IOException;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * Inbound TLS for {@link HttpServer}: the JDK's TLS (1.3 and 1.2, ALPN {@code h2} when HTTP/2 is on, and
 * {@code http/1.1}). The handshake runs
 * on the connection's own virtual thread, never on the accept loop; a failed handshake is counted
 * ({@link #handshakeFailures()}), not logged. The context is reloaded when one of its files changes
 * (checked every {@code every}): new connections get the new certificate, open ones keep theirs; a file
 * that does not load keeps the old context and says why through {@code log}.
 */
public final class ServerTls implements AutoCloseable {
    /** Loads a context from the files; the message of its exception names the file at fault. */
    @FunctionalInterface
    public interface Loader {
        SSLContext load() throws IOException;
    }

    private static final String[] PROTOCOLS = {"TLSv1.3", "TLSv1.2"};

    private final Loader loader;
    private final List<Path> files;
    private final Consumer<String> log;
    private volatile SSLContext context;
    private final AtomicLong handshakeFailures = new AtomicLong();
    private final AtomicLong reloads = new AtomicLong();
    private final AtomicLong reloadFailures = new AtomicLong();
    private volatile boolean closed;

    private ServerTls(Loader loader, List<Path> files, Consumer<String> log, SSLContext first) {
        this.loader = loader;
        this.files = List.copyOf(files);
        this.log = log;
        this.context = first;
    }

    /**
     * Loads the context now (its exception goes to the caller) and, when {@code every} is not null, watches
     * {@code files} for changes.
     */
    public static ServerTls start(Loader loader, List<Path> files, Duration every, Consumer<String> log)
            throws IOException {
        ServerTls t = new ServerTls(loader, files, log, loader.load());
        if (every != null) {
            List<byte[]> first = t.contents();
            Thread.ofVirtual().name("weft-tls-watch").start(() -> t.watch(every, first));
        }
        return t;
    }

    private List<byte[]> contents() {
        List<byte[]> all = new ArrayList<>();
        for (Path f : files) {
            try {
                all.add(Files.readAllBytes(f));
            } catch (IOException e) {
                all.add(null);
            }
        }
        return all;
    }

    private static boolean same(List<byte[]> a, List<byte[]> b) {
        for (int i = 0; i < a.size(); i++) {
            if (!Arrays.equals(a.get(i), b.get(i))) {
                return false;
            }
        }
        return true;
    }

    private void watch(Duration every, List<byte[]> first) {
        List<byte[]> last = first;
        while (!closed) {
            try {
                Thread.sleep(every);
            } catch (InterruptedException e) {
                return;
            }
            List<byte[]> now = contents();
            if (same(now, last)) {
                continue;
            }
            last = now;
            reload();
        }
    }

    /** Loads the files again; on failure the old context stays. @return true when the new one was taken */
    public boolean reload() {
        try {
            context = loader.load();
            reloads.incrementAndGet();
            log.accept("tls: reloaded " + files + "; new connections use the new certificate");
            return true;
        } catch (IOException | RuntimeException e) {
            reloadFailures.incrementAndGet();
            log.accept("tls: reload refused, still serving the previous certificate: " + e.getMessage());
            return false;
        }
    }

    /**
     * Runs the server side of the handshake on {@code raw} (on the caller's thread), bounded by
     * {@code timeout}.
     *
     * @return the TLS socket, or null when the handshake failed (counted)
     */
    SSLSocket handshake(Socket raw, Duration timeout, boolean http2) {
        try {
            SSLSocket s = (SSLSocket) context.getSocketFactory().createSocket(raw, null, raw.getPort(), true);
            s.setUseClientMode(false);
            SSLParameters p = s.getSSLParameters();
            p.setProtocols(PROTOCOLS);
            p.setApplicationProtocols(http2 ? new String[]{"h2", "http/1.1"} : new String[]{"http/1.1"});
            s.setSSLParameters(p);
            int before = raw.getSoTimeout();
            s.setSoTimeout((int) Math.min(Integer.MAX_VALUE, Math.max(1, timeout.toMillis())));
            s.startHandshake();
            s.setSoTimeout(before);
            return s;
        } catch (IOException | RuntimeException e) {
            handshakeFailures.incrementAndGet();
            return null;
        }
    }

    public long handshakeFailures() {
        return handshakeFailures.get();
    }

    public long reloads() {
        return reloads.get();
    }

    public long reloadFailures() {
        return reloadFailures.get();
    }

    @Override
    public void close() {
        closed = true;
    }
}
