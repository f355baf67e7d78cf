package dev.weft.it;

import dev.weft.client.CallRequest;
import dev.weft.client.CallResult;
import dev.weft.client.Destination;
import dev.weft.client.DestinationConfig;
import dev.weft.client.DestinationLimits;
import dev.weft.client.Reason;
import dev.weft.client.TlsOptions;
import dev.weft.client.Transport;
import dev.weft.client.policy.BreakerPolicy;
import dev.weft.client.policy.CircuitBreaker;
import dev.weft.client.policy.RetryPolicy;
import dev.weft.devtools.TestCerts;
import dev.weft.sim.SimConfig;
import dev.weft.sim.SimServer;
import dev.weft.sim.SimTls;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Connection storms over real sockets: an HTTPS weft-sim (the JDK's TLS, a certificate from
 * {@code openssl req -x509}) counts at the server how many handshakes it ran, how many were full (signed
 * with its key) and how many were in progress at once. Nothing here asserts speed.
 */
class ConnectionStormIT {
    @TempDir
    static Path dir;
    static TestCerts certs;

    private SimServer sim;
    private SimTls tls;
    private SimpleMeterRegistry registry;

    @BeforeAll
    static void certs() throws Exception {
        certs = TestCerts.selfSigned(dir);
    }

    @BeforeEach
    void start() throws Exception {
        tls = SimTls.fromPem(certs.cert(), certs.key());
        sim = SimServer.start(SimConfig.local(), tls);
        registry = new SimpleMeterRegistry();
    }

    @AfterEach
    void stop() {
        sim.close();
    }

    private Transport transport(DestinationConfig cfg) {
        return Transport.builder().defaults(cfg).meterRegistry(registry).build();
    }

    private static DestinationConfig trusting(DestinationLimits limits) {
        return DestinationConfig.DEFAULT.withLimits(limits).withTls(new TlsOptions(certs.cert(), false));
    }

    /** Runs {@code n} calls at once, each on its own virtual thread; the outcomes counted by label. */
    private static Map<String, Integer> storm(Transport t, String url, int n, Duration timeout) throws Exception {
        Map<String, Integer> outcomes = new TreeMap<>();
        try (ExecutorService ex = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<CallResult>> fs = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                fs.add(ex.submit(() -> t.call(CallRequest.get(url), timeout)));
            }
            for (Future<CallResult> f : fs) {
                outcomes.merge(f.get(120, TimeUnit.SECONDS).outcome(), 1, Integer::sum);
            }
        }
        return outcomes;
    }

    @Test
    void aColdStartOfFiveHundredCallsRunsAtMostMaxConnectingHandshakesAndEveryCallSucceeds() throws Exception {
        int bound = 4;
        try (Transport t = transport(trusting(DestinationLimits.DEFAULT.withMaxConnecting(bound)))) {
            Map<String, Integer> outcomes = storm(t, sim.url("/cold?latency=50ms"), 500, Duration.ofSeconds(60));
            assertThat(outcomes).as("every call of the cold start").isEqualTo(Map.of("ok", 500));
            // The server's count runs from accept until it has read the client's Finished, a moment after
            // the client has freed its slot and may have started the next connect: hence the margin. Without
            // the bound all 500 calls start a handshake at once.
            assertThat(tls.peakInProgress()).as("handshakes in progress at the server at once")
                    .isLessThanOrEqualTo(2L * bound);
            long opened = (long) registry.find("weft.destination.connects").tag("result", "ok").functionCounter().count();
            assertThat(opened).as("connections opened = handshakes the server completed")
                    .isEqualTo(tls.handshakes());
            assertThat(tls.failedHandshakes()).isZero();
            assertThat(registry.find("weft.destination.connecting").gauge().value()).isZero();
        }
    }

    @Test
    void aSecondConnectionResumesTheTlsSessionOfTheFirst() throws Exception {
        try (Transport t = transport(trusting(DestinationLimits.DEFAULT))) {
            assertThat(t.call(CallRequest.get(sim.url("/one")), Duration.ofSeconds(20)).ok()).isTrue();
            // two calls at once: one takes the pooled connection, the other needs a second one
            assertThat(storm(t, sim.url("/two?latency=500ms"), 2, Duration.ofSeconds(20))).isEqualTo(Map.of("ok", 2));
        }
        assertThat(tls.handshakes()).as("two connections, two handshakes").isEqualTo(2);
        assertThat(tls.fullHandshakes()).as("only the first signed with the server's key; the second resumed")
                .isEqualTo(1);
    }

    @Test
    void callsThatRunOutWaitingForAConnectFailWithConnectWaitAndNeverOpenTheBreaker() throws Exception {
        // A backend that accepts TCP (the kernel's backlog) but never answers the TLS ClientHello: every
        // handshake hangs until connect_timeout. One connect at a time; 40 calls of 300 ms each.
        try (ServerSocket silent = new ServerSocket(0, 1000, java.net.InetAddress.getLoopbackAddress());
             Transport t = transport(trusting(DestinationLimits.DEFAULT.withMaxConnecting(1)
                     .withConnectTimeout(Duration.ofSeconds(30))).withRetry(RetryPolicy.NONE)
                     // 20 calls in the window judge the ratio: 40 failures that counted would open it
                     .withBreaker(BreakerPolicy.DEFAULT.withMinCalls(20)))) {
            String url = "https://127.0.0.1:" + silent.getLocalPort() + "/x";
            Map<String, Integer> outcomes = storm(t, url, 40, Duration.ofMillis(300));
            assertThat(outcomes).isEqualTo(Map.of("connect-wait", 40));
            assertThat(t.breakerState(Destination.of(url))).as("the gateway's own waits are not the backend's")
                    .isEqualTo(CircuitBreaker.State.CLOSED);
            // the same number of calls failing by the backend's fault does open it
            int closedPort;
            try (ServerSocket s = new ServerSocket(0)) {
                closedPort = s.getLocalPort();
            }
            String refused = "https://127.0.0.1:" + closedPort + "/x";
            Map<String, Integer> r = storm(t, refused, 40, Duration.ofSeconds(5));
            assertThat(r).containsKey("refused");
            assertThat(t.breakerState(Destination.of(refused))).isEqualTo(CircuitBreaker.State.OPEN);
        }
    }

    @Test
    void theJdkRootsRefuseTheSelfSignedCertificateWithAClearReasonAndCaAcceptsIt() {
        try (Transport t = transport(DestinationConfig.DEFAULT.withRetry(RetryPolicy.NONE))) {
            CallResult r = t.call(CallRequest.get(sim.url("/x")), Duration.ofSeconds(20));
            assertThat(r.reason()).as(r.toString()).isEqualTo(Reason.TLS);
            assertThat(r.outcome()).isEqualTo("tls-error");
            assertThat(r.failure().message()).contains("not signed by a trusted root").contains("ca:");
        }
        try (Transport t = transport(trusting(DestinationLimits.DEFAULT))) {
            CallResult r = t.call(CallRequest.get(sim.url("/x")), Duration.ofSeconds(20));
            assertThat(r.ok()).as(r.toString()).isTrue();
        }
    }

    @Test
    void insecureSkipVerifyAcceptsAnyCertificateAndHostName() {
        // "localhost" is named by the certificate, "127.0.0.1" too; a name it does not carry is refused
        // with the checks on and accepted with them off.
        String url = "https://127.0.0.2:" + sim.addresses().getFirst().getPort() + "/x";
        try (SimServer other = SimServer.start(SimConfig.local().withListen(
                List.of(new java.net.InetSocketAddress("127.0.0.2", 0))), tls)) {
            String otherUrl = other.url("/x");
            try (Transport t = transport(trusting(DestinationLimits.DEFAULT).withRetry(RetryPolicy.NONE))) {
                CallResult r = t.call(CallRequest.get(otherUrl), Duration.ofSeconds(20));
                assertThat(r.reason()).as(r.toString()).isEqualTo(Reason.TLS);
                assertThat(r.failure().message()).contains("does not name 127.0.0.2");
            }
            try (Transport t = transport(DestinationConfig.DEFAULT.withTls(new TlsOptions(null, true)))) {
                CallResult r = t.call(CallRequest.get(otherUrl), Duration.ofSeconds(20));
                assertThat(r.ok()).as(r.toString()).isTrue();
            }
        } catch (java.io.IOException e) {
            throw new AssertionError("could not listen on 127.0.0.2 (" + url + ")", e);
        }
    }

    @Test
    void aWarmPoolOpensMinIdleConnectionsAtStart() throws Exception {
        DestinationConfig warm = trusting(DestinationLimits.DEFAULT.withMinIdle(6));
        try (Transport t = Transport.builder().destination(sim.url(), warm).meterRegistry(registry).build()) {
            for (int i = 0; i < 400 && tls.handshakes() < 6; i++) {
                Thread.sleep(50);
            }
            assertThat(tls.handshakes()).as("handshakes before any call").isEqualTo(6);
            Thread.sleep(1500); // a turn of the warmer: it keeps 6, opens no more
            assertThat(tls.handshakes()).isEqualTo(6);
            CallResult r = t.call(CallRequest.get(sim.url("/x")), Duration.ofSeconds(20));
            assertThat(r.ok()).isTrue();
            assertThat(tls.handshakes()).as("the call used a warm connection").isEqualTo(6);
        }
    }

    @Test
    void afterTheBackendDropsEveryPooledConnectionAStormRecoversWithoutErrors() throws Exception {
        int bound = 4;
        try (Transport t = transport(trusting(DestinationLimits.DEFAULT.withMaxConnecting(bound)))) {
            assertThat(storm(t, sim.url("/a?latency=50ms"), 200, Duration.ofSeconds(60))).isEqualTo(Map.of("ok", 200));
            long before = tls.handshakes();
            assertThat(sim.dropConnections()).isPositive(); // a backend restart
            awaitOpenConnections(0);
            assertThat(storm(t, sim.url("/b?latency=50ms"), 200, Duration.ofSeconds(60))).isEqualTo(Map.of("ok", 200));
            assertThat(tls.handshakes()).as("new connections were made").isGreaterThan(before);
            assertThat(t.breakerState(Destination.of(sim.url()))).isEqualTo(CircuitBreaker.State.CLOSED);
        }
    }

    private void awaitOpenConnections(long n) throws InterruptedException {
        AtomicInteger tries = new AtomicInteger();
        while (connectionsOpen() != n && tries.incrementAndGet() < 400) {
            Thread.sleep(50);
        }
        assertThat(connectionsOpen()).as("connections open at the server").isEqualTo(n);
    }

    @SuppressWarnings("unchecked")
    private long connectionsOpen() {
        Map<String, Object> c = (Map<String, Object>) sim.stats().snapshot(false).get("connections");
        return ((Number) c.get("open")).longValue();
    }
}
