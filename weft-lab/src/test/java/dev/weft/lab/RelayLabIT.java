package dev.weft.lab;

import dev.weft.client.CallRequest;
import dev.weft.client.CallResult;
import dev.weft.client.Transport;
import dev.weft.devtools.UpstreamProcess;
import dev.weft.lab.peers.GoPeers;
import dev.weft.legacy.LegacyService;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The legacy service of {@code weft lab relay} in {@code --mode relay-async}: over real sockets, through the Go
 * relay (skipped, with the reason printed, where Go cannot build it) and through {@code weft gateway} with
 * {@code proxy:} routes (skipped, with the reason printed, in a build without them), it answers every request as
 * direct mode does, more requests at once than its 200 request threads, over one connection to the relay.
 */
class RelayLabIT {
    /** More than the service's 200 request threads: in direct mode they would take three waves of LATENCY. */
    private static final int REQUESTS = 600;
    private static final Duration LATENCY = Duration.ofSeconds(2);

    private static UpstreamProcess backends;
    private static List<String> b;

    @BeforeAll
    static void startBackends() throws IOException {
        backends = UpstreamProcess.start(List.of(new InetSocketAddress("127.0.0.2", 0), new InetSocketAddress("127.0.0.3", 0),
                new InetSocketAddress("127.0.0.4", 0)));
        b = backends.urls();
    }

    @AfterAll
    static void stopBackends() {
        backends.close();
    }

    @Test
    void throughTheGoRelay(@TempDir Path dir) throws Exception {
        try {
            GoPeers.build("go-relay");
        } catch (GoPeers.Unavailable e) {
            System.out.println("RelayLabIT: the Go relay row skipped, lab/peers/go-relay cannot run here: " + e.getMessage());
            Assumptions.abort(e.getMessage());
        }
        answersEveryRequestOverOneConnection("relay-go", dir);
    }

    @Test
    void throughWeft(@TempDir Path dir) throws Exception {
        Path config = dir.resolve("relay.yaml");
        Files.writeString(config, RelayLab.weftRelayConfig(b, REQUESTS, 3 * REQUESTS + 100));
        String missing = RelayLab.weftRelayMissing(config);
        if (missing != null) {
            System.out.println("RelayLabIT: the Weft relay row skipped: " + missing);
            Assumptions.abort(missing);
        }
        answersEveryRequestOverOneConnection("relay-weft", dir);
    }

    /** The same requests in direct mode take a wave of LATENCY per 200: the bound relay-async removes. */
    @Test
    void directModeIsBoundByItsTwoHundredThreads(@TempDir Path dir) throws Exception {
        try (RelayLab.Stack s = RelayLab.start("direct", b, dir.resolve("unused.yaml"), 0)) {
            assertThat(s.relay()).isNull();
            long took;
            try (Transport client = LoadClient.transport(REQUESTS)) {
                took = burst(client, s.service().ready(), LATENCY);
            }
            assertThat(took).as("600 requests, 200 threads, 2 s backends: three waves").isGreaterThanOrEqualTo(3 * LATENCY.toMillis());
        }
    }

    /** A relay that answers over HTTP/1.1 (here a backend itself, which takes no Upgrade: h2c): the service refuses. */
    @Test
    void refusesARelayThatDoesNotSpeakHttp2() throws Exception {
        String java = ProcessHandle.current().info().command().orElse("java");
        Process p = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"), LegacyService.class.getName(),
                "--backends", String.join(",", b), "--mode", "relay-async", "--relay", b.get(0))
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        p.getOutputStream().close();
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(err).isEqualTo(1);
        assertThat(err).contains("not HTTP/2", "Upgrade: h2c");
    }

    private void answersEveryRequestOverOneConnection(String model, Path dir) throws Exception {
        Path config = dir.resolve("relay.yaml");
        Files.writeString(config, RelayLab.weftRelayConfig(b, REQUESTS, 3 * REQUESTS + 100));
        try (RelayLab.Stack s = RelayLab.start(model, b, config, 3 * REQUESTS + 100)) {
            String svc = s.service().ready();
            try (Transport client = LoadClient.transport(10)) {
                CallResult one = client.call(CallRequest.get(svc + "/a/42?latency=5ms"), Duration.ofSeconds(30));
                assertThat(one.status()).as(one.toString()).isEqualTo(200);
                assertThat(one.bodyText()).startsWith("{\"b\":{\"path\":\"/b/42\"").contains("\"c\":{\"path\":\"/c/42\"",
                        "\"d\":{\"path\":\"/d/42\"");
            }
            long took;
            try (Transport client = LoadClient.transport(REQUESTS)) {
                long warm = burst(client, svc, Duration.ZERO); // connections opened, code warm
                took = burst(client, svc, LATENCY);
                System.out.println("RelayLabIT " + model + ": " + REQUESTS + " requests at once took " + warm
                        + " ms at 0 ms (new connections), then " + took + " ms at " + LATENCY.toMillis() + " ms");
            }
            assertThat(took).as("600 requests through the relay at once, 2 s backends: one wave, not three")
                    .isLessThan(3 * LATENCY.toMillis());
            int port = URI.create(s.relay().ready()).getPort();
            assertThat(connectionsTo(s.service().pid(), port)).as("the service's TCP connections to the relay").isEqualTo(1);
        }
    }

    /** REQUESTS requests at once, each checked; the milliseconds they took. */
    private static long burst(Transport client, String svc, Duration latency) throws Exception {
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            long t0 = System.nanoTime();
            List<Future<CallResult>> fs = new ArrayList<>();
            for (int i = 0; i < REQUESTS; i++) {
                String url = svc + "/a/" + i + "?latency=" + latency.toMillis() + "ms";
                fs.add(pool.submit(() -> client.call(CallRequest.get(url), Duration.ofSeconds(60))));
            }
            for (int i = 0; i < REQUESTS; i++) {
                CallResult r = fs.get(i).get();
                assertThat(r.status()).as(r.toString()).isEqualTo(200);
                assertThat(r.bodyText()).contains("\"/b/" + i + "\"", "\"/c/" + i + "\"", "\"/d/" + i + "\"");
            }
            return (System.nanoTime() - t0) / 1_000_000;
        }
    }

    /** Established TCP connections process {@code pid} holds to 127.0.0.1:{@code port} (Linux /proc). */
    private static int connectionsTo(long pid, int port) throws IOException {
        Set<String> inodes = new HashSet<>();
        try (var fds = Files.list(Path.of("/proc/" + pid + "/fd"))) {
            for (Path fd : fds.toList()) {
                try {
                    String t = Files.readSymbolicLink(fd).toString();
                    if (t.startsWith("socket:[")) {
                        inodes.add(t.substring(8, t.length() - 1));
                    }
                } catch (IOException e) {
                    // closed meanwhile
                }
            }
        }
        int n = 0;
        // the JDK's sockets are dual-stack: an IPv4 connection may be listed in tcp6 (as ::ffff:127.0.0.1)
        for (String table : List.of("tcp", "tcp6")) {
            for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/net/" + table))) {
                String[] f = line.strip().split("\\s+");
                // sl local_address rem_address st ... inode (the tenth field); 01: ESTABLISHED
                if (f.length > 9 && f[2].endsWith(":" + String.format("%04X", port)) && f[3].equals("01")
                        && inodes.contains(f[9])) {
                    n++;
                }
            }
        }
        return n;
    }

    /**
     * The lab end to end at a toy size: the hop rows exist for direct and the Weft relay, every call of them answered,
     * and the table says what a hop adds.
     */
    @Test
    void theLabMeasuresOneHopAloneBesideTheRequestRows() throws Exception {
        RelayLab.Options o = new RelayLab.Options(List.of("direct", "relay-weft"), List.of(Duration.ZERO), 20,
                Duration.ofMillis(300), Duration.ofSeconds(1), Duration.ofMillis(300), 50, Duration.ofSeconds(1));
        java.io.StringWriter out = new java.io.StringWriter();
        java.io.StringWriter progress = new java.io.StringWriter();
        RelayLab.Report r = RelayLab.run(o, new java.io.PrintWriter(out, true), new java.io.PrintWriter(progress, true),
                false);
        assertThat(r.failed()).as(progress.toString()).isEmpty();
        List<RelayLab.Row> hops = r.rows().stream().filter(RelayLab.Row::hop).toList();
        assertThat(hops).extracting(RelayLab.Row::model).containsExactly("direct", "relay-weft");
        for (RelayLab.Row h : hops) {
            assertThat(h.result().errors()).as(h.model() + " " + h.result().errorsByReason()).isZero();
            assertThat(h.result().requests()).as(h.model()).isPositive();
            assertThat(h.result().options().rate()).isEqualTo(150.0);
            assertThat(h.calls()).isEqualTo(h.result().requests());
        }
        assertThat(RelayLab.table(r, o)).contains("One hop alone, open loop at 150 calls/s").contains("- relay-weft: p50 ");
    }
}
