package dev.weft.gateway;

import dev.weft.devtools.ChildProcess;
import dev.weft.sim.SimConfig;
import dev.weft.sim.SimServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * The gateway in a child JVM whose open-file limit is low: connections beyond it are closed at accept
 * (not left hanging), the fact is logged with its numbers, counted, and the gateway serves again once
 * the connections leave.
 */
class DescriptorLimitIT {
    private static final int LIMIT = 400;
    private SimServer sim;
    private ChildProcess child;
    private final List<String> log = Collections.synchronizedList(new ArrayList<>());
    private final List<Socket> held = new ArrayList<>();

    @TempDir
    Path dir;

    @BeforeEach
    void startBackend() throws Exception {
        sim = SimServer.start(SimConfig.local());
    }

    @AfterEach
    void stop() {
        held.forEach(DescriptorLimitIT::closeQuietly);
        if (child != null) {
            child.close();
        }
        sim.close();
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }

    private boolean logged(String part) {
        synchronized (log) {
            return log.stream().anyMatch(l -> l.contains(part));
        }
    }

    private void awaitLog(String part) throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!logged(part) && System.nanoTime() - until < 0) {
            Thread.sleep(20);
        }
        assertThat(logged(part)).as("the gateway logged '" + part + "'; it logged " + log).isTrue();
    }

    @Test
    void outOfDescriptorsShedsLogsAndRecovers() throws Exception {
        Path cfg = dir.resolve("gw.yaml");
        Files.writeString(cfg, """
                limits: { max_connections: 10000 }
                routes:
                  - get: /p
                    calls:
                      a: { url: "SIM/a" }
                """.replace("SIM", sim.url()));
        String java = ProcessHandle.current().info().command().orElse("java");
        child = ChildProcess.start(List.of("bash", "-c", "ulimit -n " + LIMIT + " && exec \"$@\"", "bash", java,
                "-cp", System.getProperty("java.class.path"), GatewayChild.class.getName(), cfg.toString()),
                "gateway with ulimit -n " + LIMIT);
        Thread.ofVirtual().start(() -> {
            try {
                for (String l = child.output().readLine(); l != null; l = child.output().readLine()) {
                    log.add(l);
                }
            } catch (IOException ignored) {
                // the child is gone
            }
        });
        URI base = URI.create(child.ready());
        awaitLog("descriptors: limit");
        // the budget warning at start names the numbers
        assertThat(logged("the open-file limit is " + LIMIT)).as(log.toString()).isTrue();
        Matcher m = Pattern.compile("descriptors: limit (\\d+), open (\\d+)").matcher(
                log.stream().filter(l -> l.startsWith("descriptors:")).findFirst().orElseThrow());
        assertThat(m.find()).isTrue();
        assertThat(Long.parseLong(m.group(1))).isEqualTo(LIMIT);
        assertThat(Long.parseLong(m.group(2))).as("the JVM leaves room for connections").isLessThan(LIMIT - 50);

        try (HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()) {
            HttpRequest p = HttpRequest.newBuilder(base.resolve("/p")).timeout(Duration.ofSeconds(30)).build();
            assertThat(http.send(p, HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(200);

            // more connections than the child has descriptors
            InetSocketAddress at = new InetSocketAddress(base.getHost(), base.getPort());
            for (int i = 0; i < LIMIT + 100; i++) {
                Socket s = new Socket();
                s.connect(at, 30_000);
                held.add(s);
            }
            awaitLog("out of file descriptors");
            String line = log.stream().filter(l -> l.contains("out of file descriptors")).findFirst().orElseThrow();
            System.out.println("DescriptorLimitIT, the child logged: " + line);
            assertThat(line).contains("limit " + LIMIT).contains("connections held").contains("closed at accept");

            // a new connection is shed (closed or reset) or answered: it does not hang
            try (Socket probe = new Socket()) {
                probe.connect(at, 30_000);
                probe.setSoTimeout(30_000);
                String answer;
                try {
                    probe.getOutputStream().write("GET /p HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                    InputStream in = probe.getInputStream();
                    byte[] b = new byte[12];
                    int n = in.readNBytes(b, 0, b.length);
                    answer = n <= 0 ? "closed" : new String(b, 0, n, StandardCharsets.US_ASCII);
                } catch (SocketTimeoutException e) {
                    answer = fail("the connection hung for 30 s: neither shed nor answered");
                } catch (IOException e) {
                    answer = "reset: " + e.getMessage();
                }
                assertThat(answer).matches("closed|reset: .*|HTTP/1\\.1 \\d{3}");
            }

            // the connections leave: the gateway serves again
            held.forEach(DescriptorLimitIT::closeQuietly);
            held.clear();
            int status = 0;
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (status != 200 && System.nanoTime() - until < 0) {
                try {
                    status = http.send(p, HttpResponse.BodyHandlers.ofString()).statusCode();
                } catch (IOException e) {
                    Thread.sleep(50);
                }
            }
            assertThat(status).isEqualTo(200);
            String metrics = http.send(HttpRequest.newBuilder(base.resolve("/-/metrics")).build(),
                    HttpResponse.BodyHandlers.ofString()).body();
            Matcher shed = Pattern.compile("(?m)^weft_gateway_connections_shed_descriptors_total ([0-9.]+)$")
                    .matcher(metrics);
            assertThat(shed.find()).as(metrics).isTrue();
            assertThat(Double.parseDouble(shed.group(1))).isGreaterThan(0);
        }
    }
}
