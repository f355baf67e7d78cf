package dev.weft.lab;

import dev.weft.client.CallRequest;
import dev.weft.client.CallResult;
import dev.weft.client.Transport;
import dev.weft.core.tls.Pem;
import dev.weft.devtools.ChildProcess;
import dev.weft.devtools.UpstreamProcess;
import dev.weft.devtools.TestCerts;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;

/**
 * {@code weft lab storm}: issue 13's HTTPS storm. One gateway route calls three HTTPS backends (weft-upstream, or
 * Go's net/http with {@code backends = "go"}; a self-signed RSA-2048 certificate, {@code latency} each), another
 * three of the same kind over plain HTTP.
 * A closed loop of {@code connections} clients starts cold on the plain route, then cold on the HTTPS
 * route, and halfway through the HTTPS phase the backends reset every connection they hold (a restart
 * that kills the gateway's pooled connections). Printed per second: good answers and errors; per phase:
 * the steady rate, the time to reach 90% of it, the error share, and what the gateway's calls ended with; per
 * HTTPS window (cold, after the drop), issue 13's measure: the seconds until it settled under 1% errors and
 * its rate from then on ({@link Phase#settled}).
 * With {@code --before-jar} an older build's gateway runs the same in the same run; with {@code --go}, the
 * Go aggregation peer ({@code lab/peers/go}, net/http: a goroutine per call, a new connection dialled for
 * every call that finds none idle, each call's budget {@link #GO_CALL_TIMEOUT}) runs both phases after it, a
 * fresh process per phase so that each starts cold.
 */
public final class StormLab {
    /**
     * @param connections clients (closed loop), each one connection to the gateway
     * @param latency     the backends' latency
     * @param plain       length of the plain-HTTP phase
     * @param https       length of the HTTPS phase; the backends drop every connection at its middle
     * @param beforeJar   a weft-lab.jar of an older build to run first (null: only this build)
     * @param maxConnecting this build's {@code max_connecting} for every destination (0: its default)
     * @param maxStreams    this build's {@code max_streams} (HTTP/2) for every destination (0: its default)
     * @param breakerOff    both builds run with the circuit breaker off (to see the connection storm apart
     *                      from what the breaker makes of it)
     * @param go            also run the Go aggregation peer through both phases
     * @param backends      what serves the backends, one of {@link #BACKENDS}
     */
    public record Options(int connections, Duration latency, Duration plain, Duration https, Path beforeJar,
                          int maxConnecting, int maxStreams, boolean breakerOff, boolean go, String backends) {
        public Options {
            if (!BACKENDS.contains(backends)) {
                throw new IllegalArgumentException("backends must be one of " + BACKENDS + ", not " + backends);
            }
        }
    }

    /**
     * What serves the three backends: {@code sim} (weft-upstream, the JDK's TLS) or {@code go} ({@code
     * lab/peers/go-upstream}: Go's net/http and crypto/tls, as the Go HTTPS server issue 13 was first measured
     * against).
     */
    public static final List<String> BACKENDS = List.of("sim", "go");

    /** Three backends in one process; {@code url()} is the first, where the admin paths are asked. */
    record Backends(List<String> urls, long pid, Runnable stop) implements AutoCloseable {
        String url() {
            return urls.getFirst();
        }

        @Override
        public void close() {
            stop.run();
        }
    }

    static Backends backends(String kind, TestCerts certs, boolean tls) throws IOException {
        List<InetSocketAddress> three = List.of(new InetSocketAddress("127.0.0.1", 0),
                new InetSocketAddress("127.0.0.1", 0), new InetSocketAddress("127.0.0.1", 0));
        if (kind.equals("sim")) {
            UpstreamProcess sim = tls ? UpstreamProcess.startTls(three, certs) : UpstreamProcess.start(three);
            return new Backends(sim.urls(), sim.pid(), sim::close);
        }
        Path bin;
        try {
            bin = dev.weft.lab.peers.GoPeers.build("go-upstream");
        } catch (dev.weft.lab.peers.GoPeers.Unavailable e) {
            throw new IOException("--backends go: " + e.getMessage(), e);
        }
        List<String> cmd = new ArrayList<>(List.of(bin.toString(), "3"));
        if (tls) {
            cmd.addAll(List.of(certs.cert().toString(), certs.key().toString()));
        }
        ChildProcess p = ChildProcess.start(cmd, "the Go backends");
        return new Backends(List.of(p.ready().split(",")), p.pid(), p::close);
    }

    /** A client that trusts the lab's self-signed certificate (for the backends' admin paths). */
    static Transport trusting(Path cert) {
        return Transport.builder().defaults(dev.weft.client.DestinationConfig.DEFAULT.withTls(
                new dev.weft.client.TlsOptions(cert, false))).build();
    }

    /**
     * The Go peer's budget per backend call, dial, handshake and wait for a connection included: the gateway's
     * default {@code call_timeout}. (A gateway call's wait for a pooled connection does not count against its
     * {@code call_timeout}, only against the route's deadline, 2 s by default; Go's net/http dials at once
     * instead of waiting, and its dial counts against this budget.)
     */
    static final Duration GO_CALL_TIMEOUT = Duration.ofSeconds(1);

    /** Per-second counts of one phase. */
    public record Phase(String name, long[] ok, long[] errors, Map<String, Long> errorsByReason,
                        Map<String, Long> callOutcomes, int dropSecond) {
        /** Median good answers per second over the half before the drop (or the end). */
        public double steady() {
            int end = dropSecond > 0 ? dropSecond : ok.length;
            long[] tail = Arrays.copyOfRange(ok, end / 2, end);
            Arrays.sort(tail);
            return tail.length == 0 ? 0 : tail[tail.length / 2];
        }

        /** The first second from {@code from} whose good answers reach 90% of the steady rate; -1 never. */
        public int reach(int from) {
            double target = 0.9 * steady();
            for (int s = from; s < ok.length; s++) {
                if (ok[s] >= target && target > 0) {
                    return s - from + 1;
                }
            }
            return -1;
        }

        /**
         * Issue 13's measure: the seconds from {@code from} until the phase settles, that is until every later
         * second up to {@code to} (at least {@link #SETTLED_SECONDS} of them) had errors under 1% of its
         * answers; -1 if it never does.
         */
        public int settled(int from, int to) {
            to = Math.min(to, ok.length);
            int s = to;
            while (s > from && 100 * errors[s - 1] < ok[s - 1] + errors[s - 1]) {
                s--;
            }
            return to - s >= SETTLED_SECONDS ? s - from : -1;
        }

        /** Good answers per second from {@code from + settled} to {@code to}; 0 if it never settles. */
        public double settledRate(int from, int to) {
            int s = settled(from, to);
            to = Math.min(to, ok.length);
            return s < 0 ? 0 : (double) sum(ok, from + s, to) / (to - from - s);
        }

        long sum(long[] a, int from, int to) {
            long n = 0;
            for (int i = from; i < Math.min(to, a.length); i++) {
                n += a[i];
            }
            return n;
        }
    }

    /** How many seconds under 1% errors, to the end of a window, count as settled. */
    static final int SETTLED_SECONDS = 3;

    public record ModelResult(String model, Phase plain, Phase https) {
    }

    private StormLab() {
    }

    public static List<ModelResult> run(Options o, PrintWriter out, PrintWriter progress) throws Exception {
        Path dir = Files.createTempDirectory("weft-lab-storm");
        try {
            return run(o, out, progress, dir);
        } finally {
            try (var files = Files.walk(dir)) { // the test certificate, its key and the configs
                files.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
            }
        }
    }

    private static List<ModelResult> run(Options o, PrintWriter out, PrintWriter progress, Path dir) throws Exception {
        TestCerts certs = TestCerts.selfSigned(dir);
        Path trust = trustStore(certs.cert(), dir.resolve("trust.p12"));
        List<ModelResult> results = new ArrayList<>();
        try (Backends tlsSim = backends(o.backends(), certs, true);
             Backends plainSim = backends(o.backends(), certs, false);
             Transport client = LoadClient.transport(o.connections() + 16);
             Transport admin = trusting(certs.cert())) {
            // the config of --before-jar: keys every build since the storm lab knows
            Path config = dir.resolve("storm.yaml");
            Files.writeString(config, config(tlsSim.urls(), plainSim.urls(), o.latency(), o.connections(), 0, 0,
                    o.breakerOff()));
            // this build's: where it may not raise its front door's thread, it would lower its other threads
            // instead, below the backends and the load that share its CPUs here (and below an older build, and the
            // Go peer, which do not): door_fallback: none leaves them
            Path afterConfig = dir.resolve("storm-after.yaml");
            Files.writeString(afterConfig, "admission: { door_fallback: none }\n" + config(tlsSim.urls(),
                    plainSim.urls(), o.latency(), o.connections(), o.maxConnecting(), o.maxStreams(), o.breakerOff()));
            out.println("backends (" + o.backends() + "): HTTPS " + tlsSim.urls() + " (pid " + tlsSim.pid() + "), plain " + plainSim.urls()
                    + " (pid " + plainSim.pid() + "), latency " + o.latency().toMillis() + " ms");
            out.println("gateway config (" + afterConfig + "):");
            out.println(Files.readString(afterConfig).indent(4));
            out.flush();
            List<String> flags = List.of("-Xmx2g", "-XX:+UseG1GC", "-Djavax.net.ssl.trustStore=" + trust,
                    "-Djavax.net.ssl.trustStorePassword=changeit", "-Djavax.net.ssl.trustStoreType=PKCS12");
            List<String[]> models = new ArrayList<>();
            if (o.beforeJar() != null) {
                models.add(new String[] {"before", o.beforeJar().toString()});
            }
            models.add(new String[] {"after", System.getProperty("java.class.path")});
            for (String[] m : models) {
                List<String> cmd = new ArrayList<>();
                cmd.add(ProcessHandle.current().info().command().orElse("java"));
                cmd.add("--enable-native-access=ALL-UNNAMED");
                cmd.addAll(flags);
                cmd.addAll(List.of("-cp", m[1], GatewayProcess.class.getName(),
                        (m[0].equals("after") ? afterConfig : config).toString(), "virtual"));
                try (ChildProcess gw = ChildProcess.start(cmd, "gateway (" + m[0] + ")")) {
                    String url = gw.ready();
                    progress.println("lab storm: " + m[0] + ": gateway pid " + gw.pid() + " at " + url + "; plain phase, "
                            + o.connections() + " clients, cold ...");
                    progress.flush();
                    Phase plain = phase("plain", client, url + "/plain/1", o.connections(), o.plain(), null, admin, url,
                            progress);
                    progress.println("lab storm: " + m[0] + ": HTTPS phase, cold; the backends drop every connection at "
                            + o.https().dividedBy(2).toSeconds() + " s ...");
                    progress.flush();
                    Phase https = phase("https", client, url + "/tls/1", o.connections(), o.https(),
                            tlsSim.url() + "/-/drop", admin, url, progress);
                    results.add(finish(new ModelResult(m[0], plain, https), tlsSim, admin, out));
                }
            }
            if (o.go()) {
                Path bin = null;
                try {
                    bin = dev.weft.lab.peers.GoPeers.build("go");
                } catch (dev.weft.lab.peers.GoPeers.Unavailable e) {
                    out.println("go: SKIPPED: " + e.getMessage());
                    progress.println("lab storm: SKIPPED go: " + e.getMessage());
                    progress.flush();
                }
                if (bin != null) {
                    String path = "/a/1?latency=" + o.latency().toMillis() + "ms";
                    Phase plain;
                    try (ChildProcess go = goPeer(bin, plainSim.urls(), certs.cert(), o.connections())) {
                        progress.println("lab storm: go: pid " + go.pid() + " at " + go.ready() + "; plain phase, "
                                + o.connections() + " clients, cold ...");
                        progress.flush();
                        plain = phase("plain", client, go.ready() + path, o.connections(), o.plain(), null, admin,
                                go.ready(), progress);
                    }
                    try (ChildProcess go = goPeer(bin, tlsSim.urls(), certs.cert(), o.connections())) {
                        progress.println("lab storm: go: pid " + go.pid() + " at " + go.ready() + "; HTTPS phase, cold;"
                                + " the backends drop every connection at " + o.https().dividedBy(2).toSeconds() + " s ...");
                        progress.flush();
                        Phase https = phase("https", client, go.ready() + path, o.connections(), o.https(),
                                tlsSim.url() + "/-/drop", admin, go.ready(), progress);
                        results.add(finish(new ModelResult("go", plain, https), tlsSim, admin, out));
                    }
                }
            }
        }
        out.println(summary(results));
        return results;
    }

    /**
     * The Go peer for one phase, calling {@code backends} (the lab's certificate trusted, at most
     * {@code connections + 500} connections per backend as the gateway's {@code max_in_flight} here).
     */
    static ChildProcess goPeer(Path bin, List<String> backends, Path cert, int connections) throws IOException {
        return ChildProcess.start(List.of("env", "WEFT_PEER_CA=" + cert,
                "WEFT_PEER_CALL_TIMEOUT=" + GO_CALL_TIMEOUT.toMillis() + "ms", bin.toString(), backends.get(0),
                backends.get(1), backends.get(2), String.valueOf(connections + 500)), "the Go peer");
    }

    /** Prints the backends' handshakes and the model's report, and resets the backends' counts. */
    private static ModelResult finish(ModelResult r, Backends tlsSim, Transport admin, PrintWriter out)
            throws InterruptedException {
        CallResult st = patiently(admin, CallRequest.get(tlsSim.url() + "/-/stats"));
        String stats = st.ok() ? st.bodyText() : st.toString();
        int t = stats.indexOf("\"tls\"");
        out.println("HTTPS backends' handshakes so far: " + (t < 0 ? stats : stats.substring(t)));
        CallResult reset = patiently(admin, CallRequest.builder("POST", tlsSim.url() + "/-/reset").build());
        if (!reset.ok()) {
            out.println("(the backends' counts could not be reset: " + reset + "; the next counts include these)");
        }
        out.println(report(r));
        out.flush();
        return r;
    }

    /** An admin call to a backend that may still be busy with the load just stopped: up to 10 tries. */
    private static CallResult patiently(Transport admin, CallRequest r) throws InterruptedException {
        CallResult last = null;
        for (int i = 0; i < 10; i++) {
            last = admin.call(r, Duration.ofSeconds(20));
            if (last.ok()) {
                return last;
            }
            Thread.sleep(1000);
        }
        return last;
    }

    /** A PKCS#12 trust store holding the test certificate, for both builds' gateways (the JDK's own mechanism). */
    private static Path trustStore(Path cert, Path file) throws IOException, GeneralSecurityException {
        KeyStore ks = KeyStore.getInstance("PKCS12");
        ks.load(null, null);
        ks.setCertificateEntry("weft-lab", Pem.certificates(cert).getFirst());
        try (OutputStream os = Files.newOutputStream(file)) {
            ks.store(os, "changeit".toCharArray());
        }
        return file;
    }

    static String config(List<String> tls, List<String> plain, Duration latency, int connections, int maxConnecting,
                         int maxStreams, boolean breakerOff) {
        StringBuilder b = new StringBuilder();
        b.append("listen: 127.0.0.1:0\n");
        b.append("limits: { max_connections: ").append(connections + 1000).append(", max_concurrent: ")
                .append(connections + 1000).append(" }\n");
        b.append("# the bulkhead is the admission helper's question; here it is out of the way\n");
        b.append("destination_defaults: { max_in_flight: ").append(connections + 500)
                .append(maxConnecting > 0 ? ", max_connecting: " + maxConnecting : "")
                .append(maxStreams > 0 ? ", max_streams: " + maxStreams : "")
                .append(breakerOff ? ", breaker: { enabled: false }" : "").append(" }\n");
        b.append("routes:\n");
        for (String[] r : new String[][] {{"/tls/{id}", "tls"}, {"/plain/{id}", "plain"}}) {
            List<String> urls = r[1].equals("tls") ? tls : plain;
            b.append("  - get: ").append(r[0]).append("\n    calls:\n");
            String[] names = {"b", "c", "d"};
            for (int i = 0; i < 3; i++) {
                b.append("      ").append(names[i]).append(": { url: \"").append(urls.get(i)).append("/").append(names[i])
                        .append("/{path.id}?latency=").append(latency.toMillis()).append("ms\" }\n");
            }
        }
        return b.toString();
    }

    private static Phase phase(String name, Transport client, String url, int connections, Duration length,
                               String dropUrl, Transport admin, String gatewayUrl, PrintWriter progress)
            throws InterruptedException {
        int seconds = (int) Math.max(1, length.toSeconds());
        AtomicLongArray ok = new AtomicLongArray(seconds);
        AtomicLongArray errors = new AtomicLongArray(seconds);
        Map<String, LongAdder> reasons = new ConcurrentHashMap<>();
        Map<String, Long> callsBefore = callOutcomes(client, gatewayUrl);
        AtomicBoolean stop = new AtomicBoolean();
        long start = System.nanoTime();
        long end = start + length.toNanos();
        CallRequest req = CallRequest.get(url);
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < connections; i++) {
            threads.add(Thread.ofVirtual().start(() -> {
                while (!stop.get()) {
                    CallResult r = client.call(req, Duration.ofSeconds(10));
                    long now = System.nanoTime();
                    if (now >= end) {
                        return;
                    }
                    int s = (int) ((now - start) / 1_000_000_000L);
                    if (r.ok()) {
                        ok.incrementAndGet(s);
                    } else {
                        errors.incrementAndGet(s);
                        reasons.computeIfAbsent(r.outcome(), k -> new LongAdder()).increment();
                        if (!r.ok() && r.status() == 0) {
                            sleepQuietly(10); // a refused connection would otherwise spin
                        }
                    }
                }
            }));
        }
        int drop = -1;
        if (dropUrl != null) {
            Thread.sleep(length.dividedBy(2));
            drop = (int) ((System.nanoTime() - start) / 1_000_000_000L);
            CallResult d = admin.call(CallRequest.builder("POST", dropUrl).build(), Duration.ofSeconds(10));
            progress.println("lab storm: backends dropped their connections at " + drop + " s (" + d.outcome() + ")");
            progress.flush();
        }
        long left = end - System.nanoTime();
        if (left > 0) {
            Thread.sleep(Duration.ofNanos(left));
        }
        stop.set(true);
        for (Thread t : threads) {
            t.join(Duration.ofSeconds(30));
        }
        Map<String, Long> callsAfter = callOutcomes(client, gatewayUrl);
        Map<String, Long> calls = new TreeMap<>();
        callsAfter.forEach((k, v) -> {
            long d = v - callsBefore.getOrDefault(k, 0L);
            if (d > 0) {
                calls.put(k, d);
            }
        });
        Map<String, Long> byReason = new TreeMap<>();
        reasons.forEach((k, v) -> byReason.put(k, v.sum()));
        long[] o = new long[seconds];
        long[] e = new long[seconds];
        for (int i = 0; i < seconds; i++) {
            o[i] = ok.get(i);
            e[i] = errors.get(i);
        }
        return new Phase(name, o, e, byReason, calls, drop);
    }

    /** The gateway's backend calls by outcome, summed over destinations, from its /-/metrics. */
    private static Map<String, Long> callOutcomes(Transport client, String gatewayUrl) {
        Map<String, Long> out = new TreeMap<>();
        CallResult r = client.call(CallRequest.get(gatewayUrl + "/-/metrics"), Duration.ofSeconds(20));
        if (!r.ok()) {
            return out;
        }
        for (String line : r.bodyText().split("\n")) {
            if (!line.startsWith("weft_calls_total{")) {
                continue;
            }
            int i = line.indexOf("outcome=\"");
            if (i < 0) {
                continue;
            }
            String outcome = line.substring(i + 9, line.indexOf('"', i + 9));
            double v = Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            out.merge(outcome, (long) v, Long::sum);
        }
        return out;
    }

    private static void sleepQuietly(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static String report(ModelResult r) {
        StringBuilder b = new StringBuilder();
        b.append("### ").append(r.model()).append("\n\n");
        for (Phase p : List.of(r.plain(), r.https())) {
            b.append(p.name()).append(" ok/s:     ").append(join(p.ok())).append('\n');
            b.append(p.name()).append(" errors/s: ").append(join(p.errors())).append('\n');
        }
        b.append('\n');
        b.append("| phase | steady req/s | s to 90% of steady | requests | errors | error share | errors by reason | gateway's backend calls by outcome |\n");
        b.append("|---|---:|---:|---:|---:|---:|---|---|\n");
        for (Phase p : List.of(r.plain(), r.https())) {
            int cut = p.dropSecond() > 0 ? p.dropSecond() : p.ok().length;
            row(b, p.name() + (p.dropSecond() > 0 ? " cold start" : " cold start"), p, 0, cut, p.reach(0));
            if (p.dropSecond() > 0) {
                row(b, p.name() + " after the drop", p, cut, p.ok().length, p.reach(cut));
            }
        }
        b.append(String.format(Locale.ROOT, "%nHTTPS steady rate / plain steady rate: %.2f%n",
                r.plain().steady() == 0 ? 0 : r.https().steady() / r.plain().steady()));
        return b.toString();
    }

    private static void row(StringBuilder b, String name, Phase p, int from, int to, int reach) {
        long ok = p.sum(p.ok(), from, to);
        long err = p.sum(p.errors(), from, to);
        b.append(String.format(Locale.ROOT, "| %s | %.0f | %s | %d | %d | %.2f%% | %s | %s |%n", name, p.steady(),
                reach < 0 ? "never" : Integer.toString(reach), ok + err, err, ok + err == 0 ? 0 : 100.0 * err / (ok + err),
                from == 0 ? p.errorsByReason() : "(phase total above)", from == 0 ? p.callOutcomes() : ""));
    }

    private static String join(long[] a) {
        StringBuilder b = new StringBuilder();
        for (long v : a) {
            b.append(String.format(Locale.ROOT, "%6d", v));
        }
        return b.toString();
    }

    static String summary(List<ModelResult> rs) {
        StringBuilder b = new StringBuilder("| build | plain steady req/s | HTTPS steady req/s | HTTPS / plain | HTTPS cold: s to 90%, error share | after the drop: s to 90%, error share |\n");
        b.append("|---|---:|---:|---:|---|---|\n");
        for (ModelResult r : rs) {
            Phase h = r.https();
            int cut = h.dropSecond() > 0 ? h.dropSecond() : h.ok().length;
            b.append(String.format(Locale.ROOT, "| %s | %.0f | %.0f | %.2f | %s s, %.2f%% | %s s, %.2f%% |%n", r.model(),
                    r.plain().steady(), h.steady(), r.plain().steady() == 0 ? 0 : h.steady() / r.plain().steady(),
                    reachText(h.reach(0)), share(h, 0, cut), reachText(h.reach(cut)), share(h, cut, h.ok().length)));
        }
        b.append("\nIssue 13's measure: the seconds until every later second of the window had < 1% errors (at least ")
                .append(SETTLED_SECONDS).append(" such seconds to the window's end),\nand the good answers per second from"
                        + " then on, against the plain phase's steady rate.\n\n");
        b.append("| build | HTTPS cold: s to settle | req/s settled | / plain steady | after the drop: s to settle | req/s settled | / plain steady |\n");
        b.append("|---|---:|---:|---:|---:|---:|---:|\n");
        for (ModelResult r : rs) {
            Phase h = r.https();
            int cut = h.dropSecond() > 0 ? h.dropSecond() : h.ok().length;
            double plain = r.plain().steady();
            double cold = h.settledRate(0, cut);
            double after = h.settledRate(cut, h.ok().length);
            b.append(String.format(Locale.ROOT, "| %s | %s | %.0f | %.2f | %s | %.0f | %.2f |%n", r.model(),
                    reachText(h.settled(0, cut)), cold, plain == 0 ? 0 : cold / plain,
                    h.dropSecond() > 0 ? reachText(h.settled(cut, h.ok().length)) : "-", after,
                    plain == 0 ? 0 : after / plain));
        }
        return b.toString();
    }

    private static String reachText(int s) {
        return s < 0 ? "never" : Integer.toString(s);
    }

    private static double share(Phase p, int from, int to) {
        long ok = p.sum(p.ok(), from, to);
        long err = p.sum(p.errors(), from, to);
        return ok + err == 0 ? 0 : 100.0 * err / (ok + err);
    }
}
