package dev.weft.lab;

import dev.weft.client.CallRequest;
import dev.weft.client.CallResult;
import dev.weft.client.Transport;
import dev.weft.devtools.ChildProcess;
import dev.weft.devtools.SimProcess;
import dev.weft.devtools.TestCerts;
import dev.weft.lab.peers.GoPeers;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Go peer as {@code weft lab storm --go} starts it: it trusts the lab's self-signed certificate, composes the
 * three HTTPS backends' answers, and gives up on a call after {@link StormLab#GO_CALL_TIMEOUT}, as the gateway's
 * default {@code call_timeout} does (else its error share would not compare with the gateway's).
 */
class StormGoPeerIT {
    @Test
    void theGoPeerCallsTheLabsHttpsBackendsWithinTheGatewaysCallBudget(@TempDir Path dir) throws Exception {
        Path bin;
        try {
            bin = GoPeers.build("go");
        } catch (GoPeers.Unavailable e) {
            System.out.println("StormGoPeerIT: skipped, the Go peer cannot run here: " + e.getMessage());
            Assumptions.abort(e.getMessage());
            return;
        }
        TestCerts certs = TestCerts.selfSigned(dir);
        List<InetSocketAddress> three = List.of(new InetSocketAddress("127.0.0.1", 0),
                new InetSocketAddress("127.0.0.1", 0), new InetSocketAddress("127.0.0.1", 0));
        try (SimProcess tls = SimProcess.startTls(three, certs);
             ChildProcess go = StormLab.goPeer(bin, tls.urls(), certs.cert(), 10);
             Transport client = Transport.builder().defaults(dev.weft.client.DestinationConfig.DEFAULT.withTls(
                     new dev.weft.client.TlsOptions(certs.cert(), false))).build()) {
            assertThat(tls.urls()).allSatisfy(u -> assertThat(u).startsWith("https://"));

            CallResult ok = client.call(CallRequest.get(go.ready() + "/a/7?latency=5ms"), Duration.ofSeconds(30));
            assertThat(ok.status()).as(ok.toString()).isEqualTo(200);
            assertThat(ok.bodyText()).contains("\"/b/7\"", "\"/c/7\"", "\"/d/7\"");

            long slower = StormLab.GO_CALL_TIMEOUT.toMillis() + 1500;
            CallResult late = client.call(CallRequest.get(go.ready() + "/a/7?latency=" + slower + "ms"),
                    Duration.ofSeconds(30));
            assertThat(late.status()).as(late.toString()).isEqualTo(502);
            assertThat(late.bodyText()).contains("Timeout exceeded");

            CallResult stats = client.call(CallRequest.get(tls.url() + "/-/stats"), Duration.ofSeconds(30));
            assertThat(stats.bodyText()).as("the backends served TLS handshakes").containsPattern("\"handshakes\":[1-9]");
        }
    }
}
