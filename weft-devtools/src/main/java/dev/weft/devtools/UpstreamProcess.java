package dev.weft.devtools;

import dev.weft.upstream.UpstreamConfig;
import dev.weft.upstream.UpstreamServer;

import dev.weft.core.HostPort;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

/**
 * A weft-upstream server in a JVM of its own, so that its CPU and memory are not the measured client's.
 * The child prints {@code READY <url>} once it listens and stops when its standard input closes.
 */
public final class UpstreamProcess implements AutoCloseable {
    private final ChildProcess jvm;
    private final List<String> urls;

    private UpstreamProcess(ChildProcess jvm) {
        this.jvm = jvm;
        this.urls = List.of(jvm.ready().split(","));
    }

    /** Starts a child JVM with weft-upstream listening on {@code addresses} (port 0 picks a free one). */
    public static UpstreamProcess start(List<InetSocketAddress> addresses) throws IOException {
        List<String> args = new ArrayList<>();
        for (InetSocketAddress a : addresses) {
            args.add(HostPort.format(a));
        }
        return new UpstreamProcess(ChildProcess.startJvm(List.of("-XX:+UseParallelGC", "-Xss256k"), UpstreamProcess.class, args));
    }

    /** As {@link #start}, serving HTTPS with {@code certs} ({@link TestCerts#selfSigned}, or any PEM pair). */
    public static UpstreamProcess startTls(List<InetSocketAddress> addresses, TestCerts certs) throws IOException {
        List<String> args = new ArrayList<>(List.of("--tls", certs.cert().toString(), certs.key().toString()));
        for (InetSocketAddress a : addresses) {
            args.add(HostPort.format(a));
        }
        return new UpstreamProcess(ChildProcess.startJvm(List.of("-XX:+UseParallelGC", "-Xss256k"), UpstreamProcess.class, args));
    }

    /** {@code http://host:port} (https with TLS) of the first address. */
    public String url() {
        return urls.getFirst();
    }

    /** {@code http://host:port} of every address, in the order asked. */
    public List<String> urls() {
        return urls;
    }

    public long pid() {
        return jvm.pid();
    }

    /** CPU time the simulator has used so far. */
    public java.time.Duration cpu() {
        return jvm.cpu();
    }

    @Override
    public void close() {
        jvm.close();
    }

    /** The child's entry point: {@code UpstreamProcess [--tls CERT KEY] HOST:PORT...}. */
    public static void main(String[] args) throws Exception {
        List<InetSocketAddress> addresses = new ArrayList<>();
        dev.weft.upstream.UpstreamTls tls = null;
        int i = 0;
        if (args.length >= 3 && args[0].equals("--tls")) {
            tls = dev.weft.upstream.UpstreamTls.fromPem(java.nio.file.Path.of(args[1]), java.nio.file.Path.of(args[2]));
            i = 3;
        }
        for (; i < args.length; i++) {
            addresses.add(HostPort.parse(args[i]));
        }
        String scheme = tls == null ? "http://" : "https://";
        try (UpstreamServer sim = UpstreamServer.start(UpstreamConfig.local().withListen(addresses), tls)) {
            System.out.println("READY " + String.join(",", sim.addresses().stream()
                    .map(a -> scheme + HostPort.format(a)).toList()));
            System.out.flush();
            while (System.in.read() >= 0) {
                // run until the parent closes our standard input (or dies)
            }
        }
    }
}
