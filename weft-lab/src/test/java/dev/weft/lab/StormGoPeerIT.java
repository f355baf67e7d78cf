package dev.weft.lab;

import dev.weft.client.CallRequest;
import dev.weft.client.CallResult;
import dev.weft.client.Transport;
import dev.weft.devtools.ChildProcess;
import dev.weft.devtools.TestCerts;
import dev.weft.lab.peers.GoPeers;
import dev.weft.os.TcpTable;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The Go processes of {@code weft lab storm}. The Go peer as {@code --go} starts it: it trusts the lab's
 * self-signed certificate, composes the three HTTPS backends' answers, and gives up on a call after
 * {@link StormLab#GO_CALL_TIMEOUT}, as the gateway's default {@code call_timeout} does (else its error share would
 * not compare with the gateway's). The Go backends of {@code --backends go}: see the second test.
 */
class StormGoPeerIT {
    @Test
    void theGoPeerCallsTheLabsHttpsBackendsWithinTheGatewaysCallBudget(@TempDir Path dir) throws Exception {
        Path bin = builtOrSkipped("go");
        TestCerts certs = TestCerts.selfSigned(dir);
        try (StormLab.Backends tls = StormLab.backends("sim", certs, true);
             ChildProcess go = StormLab.goPeer(bin, tls.urls(), certs.cert(), 10);
             Transport client = StormLab.trusting(certs.cert())) {
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

    /**
     * {@code --backends go}: Go's net/http and crypto/tls serve what weft-upstream serves to the lab: the JSON body after
     * the latency asked, its handshake counts, and a drop of every connection (the restart in the middle of the
     * HTTPS phase), after which a new connection resumes the TLS session.
     */
    @Test
    void theGoBackendsServeCountHandshakesAndDropEveryConnection(@TempDir Path dir) throws Exception {
        builtOrSkipped("go-upstream");
        Assumptions.assumeTrue(TcpTable.available(), "sees the dropped connections in /proc/net/tcp (Linux)");
        TestCerts certs = TestCerts.selfSigned(dir);
        try (StormLab.Backends tls = StormLab.backends("go", certs, true);
             StormLab.Backends plain = StormLab.backends("go", certs, false);
             Transport client = StormLab.trusting(certs.cert())) {
            assertThat(tls.urls()).hasSize(3).allSatisfy(u -> assertThat(u).startsWith("https://127.0.0.1:"));
            assertThat(plain.urls()).hasSize(3).allSatisfy(u -> assertThat(u).startsWith("http://127.0.0.1:"));
            CallResult p = client.call(CallRequest.get(plain.urls().get(2) + "/d/3?latency=5ms"), Duration.ofSeconds(30));
            assertThat(p.status()).as(p.toString()).isEqualTo(200);
            assertThat(p.bodyText()).startsWith("{\"path\":\"/d/3\",\"items\":[");
            CallResult bad = client.call(CallRequest.get(plain.url() + "/b/1?latency=soon"), Duration.ofSeconds(30));
            assertThat(bad.status()).isEqualTo(400);

            CallResult first = client.call(CallRequest.get(tls.url() + "/b/7?latency=5ms"), Duration.ofSeconds(30));
            assertThat(first.status()).as(first.toString()).isEqualTo(200);
            assertThat(first.bodyText()).contains("\"path\":\"/b/7\"");
            long before = handshakes(client, tls, "handshakes");
            assertThat(before).isPositive();
            CallResult again = client.call(CallRequest.get(tls.url() + "/b/8?latency=5ms"), Duration.ofSeconds(30));
            assertThat(again.status()).isEqualTo(200);
            assertThat(handshakes(client, tls, "handshakes")).as("a kept-alive connection, no new handshake").isEqualTo(before);

            InetSocketAddress peer = address(tls.url());
            assertThat(established(peer)).as("the kept-alive connection, open in the kernel's table").isPositive();
            CallResult drop = client.call(CallRequest.builder("POST", tls.url() + "/-/drop").build(), Duration.ofSeconds(30));
            assertThat(drop.status()).as(drop.toString()).isEqualTo(200);
            // the drop resets the connections 10 ms after its answer. Asking the peer would open a connection (and
            // a handshake, which is what this counts): the client's side of them is watched in the kernel instead
            await("the peer reset the client's connections to " + peer).atMost(Duration.ofSeconds(10))
                    .pollInterval(Duration.ofMillis(5)).until(() -> established(peer) == 0);
            CallResult after = client.call(CallRequest.get(tls.url() + "/b/9?latency=5ms"), Duration.ofSeconds(30));
            assertThat(after.status()).as(after.toString()).isEqualTo(200);
            assertThat(handshakes(client, tls, "handshakes")).as("dropped: a new connection").isGreaterThan(before);
            assertThat(handshakes(client, tls, "resumed")).as("the new connection resumed the session").isPositive();
        }
    }

    /** Builds {@code lab/peers/NAME}, or skips the test with the reason printed where Go cannot build it. */
    private static Path builtOrSkipped(String name) {
        try {
            return GoPeers.build(name);
        } catch (GoPeers.Unavailable e) {
            System.out.println("StormGoPeerIT: skipped, lab/peers/" + name + " cannot run here: " + e.getMessage());
            return Assumptions.abort(e.getMessage());
        }
    }

    /** This machine's established connections to {@code peer} (the client's side of them). */
    private static long established(InetSocketAddress peer) throws IOException {
        return TcpTable.read().stream().filter(e -> e.remote().equals(peer) && e.established()).count();
    }

    private static InetSocketAddress address(String url) throws UnknownHostException {
        URI u = URI.create(url);
        return new InetSocketAddress(InetAddress.getByName(u.getHost()), u.getPort());
    }

    private static long handshakes(Transport client, StormLab.Backends b, String field) {
        CallResult r = client.call(CallRequest.get(b.url() + "/-/stats"), Duration.ofSeconds(30));
        assertThat(r.status()).as(r.toString()).isEqualTo(200);
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("\"" + field + "\":(\\d+)").matcher(r.bodyText());
        assertThat(m.find()).as(r.bodyText()).isTrue();
        return Long.parseLong(m.group(1));
    }
}
