package dev.weft.server.http2;

import dev.weft.server.ExecutorModel;
import dev.weft.server.HttpServer;
import dev.weft.server.ServerResponse;
import dev.weft.server.ServerTls;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * HTTP/2 conformance: h2spec 2.2.1 (github.com/summerwind/h2spec, the field's suite: RFC 7540/9113 and RFC 7541
 * HPACK), strict mode, against the real server on loopback; every case must pass. h2spec is built by
 * {@code lab/h2/install-h2spec.sh} when missing (Go's module proxy); without Go the test is skipped, saying so, except
 * where the environment variable {@code CI} is set (CI=true in CI): there it fails.
 */
class H2specIT {
    static final byte[] BODY = "{\"ok\":true,\"h2spec\":\"answers a body\"}".getBytes(StandardCharsets.UTF_8);

    /** h2spec 2.2.1's case count (generic, http2 and hpack sections). */
    static final int CASES = 146;
    /**
     * The one case a listener that serves HTTP/1.1 and h2c side by side cannot pass: h2spec sends
     * {@code INVALID CONNECTION PREFACE\r\n\r\n} and wants the connection closed without an answer, but those bytes are
     * an HTTP/1.1 request line to such a listener, which answers it 400 as RFC 9112 asks (ServerConformanceIT). Over
     * TLS, where ALPN said h2, and on an h2c-only listener ({@code http2.h2c_only}), the same case passes (below).
     */
    static final String SHARED_LISTENER_CASE = "Sends invalid connection preface";

    private static HttpServer start(ServerTls tls) throws IOException {
        return start(tls, Http2Limits.DEFAULT);
    }

    private static HttpServer start(ServerTls tls, Http2Limits http2) throws IOException {
        return HttpServer.builder(r -> new ServerResponse(200,
                        dev.weft.http.Headers.of("Content-Type", "application/json"), BODY))
                .listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0)).executor(new ExecutorModel.Virtual()).tls(tls).http2(http2).start();
    }

    @Test
    void h2cWithPriorKnowledgePassesEveryCaseInStrictMode() throws Exception {
        Path h2spec = H2Tools.h2spec();
        try (HttpServer server = start(null)) {
            Result r = run(h2spec, server.addresses().getFirst().getPort(), false);
            assertThat(r.failed).as("h2spec failures:\n%s", r.output).allSatisfy(f ->
                    assertThat(f).contains("classname=\"" + SHARED_LISTENER_CASE + "\""));
            assertThat(r.passed).as(r.output).isGreaterThanOrEqualTo(CASES - 1);
        }
    }

    @Test
    void anH2cOnlyListenerPassesEveryCaseInStrictMode() throws Exception {
        Path h2spec = H2Tools.h2spec();
        try (HttpServer server = start(null, Http2Limits.DEFAULT.withH2cOnly(true))) {
            Result r = run(h2spec, server.addresses().getFirst().getPort(), false);
            assertThat(r.failed).as("h2spec failures:\n%s", r.output).isEmpty();
            assertThat(r.passed).as(r.output).isEqualTo(CASES);
        }
    }

    @Test
    void h2OverTlsByAlpnPassesEveryCaseInStrictMode() throws Exception {
        Path h2spec = H2Tools.h2spec();
        try (ServerTls tls = TestTls.server(); HttpServer server = start(tls)) {
            Result r = run(h2spec, server.addresses().getFirst().getPort(), true);
            assertThat(r.failed).as("h2spec failures:\n%s", r.output).isEmpty();
            assertThat(r.passed).as(r.output).isEqualTo(CASES);
        }
    }

    record Result(int passed, int skipped, List<String> failed, String output) {
    }

    static Result run(Path h2spec, int port, boolean tls) throws IOException, InterruptedException {
        Path report = Files.createTempFile("h2spec", ".xml");
        List<String> cmd = new ArrayList<>(List.of(h2spec.toString(), "-h", "127.0.0.1", "-p", Integer.toString(port),
                "-P", "/h2spec", "--strict", "-o", "5", "-j", report.toString()));
        if (tls) {
            cmd.add("-t");
            cmd.add("-k");
        }
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(10, TimeUnit.MINUTES)).as("h2spec ended").isTrue();
        System.out.println(out);
        String xml = Files.readString(report);
        Files.deleteIfExists(report);
        List<String> failed = new ArrayList<>();
        Matcher m = Pattern.compile("<testcase[^>]*?(?:package=\"([^\"]*)\")?[^>]*?classname=\"([^\"]*)\"[^>]*?(?:/>|>(.*?)</testcase>)",
                Pattern.DOTALL).matcher(xml);
        int passed = 0;
        int skipped = 0;
        while (m.find()) {
            String body = m.group(3) == null ? "" : m.group(3);
            if (body.contains("<failure") || body.contains("<error")) {
                failed.add(m.group(0).replaceAll("\\s+", " "));
            } else if (body.contains("<skipped")) {
                skipped++;
            } else {
                passed++;
            }
        }
        Matcher summary = Pattern.compile("(\\d+) tests, (\\d+) passed, (\\d+) skipped, (\\d+) failed").matcher(out);
        assertThat(summary.find()).as("h2spec's summary line in:\n%s", out).isTrue();
        assertThat(Integer.parseInt(summary.group(4))).as("h2spec's own failure count:\n%s", out).isEqualTo(failed.size());
        return new Result(Integer.parseInt(summary.group(2)), Integer.parseInt(summary.group(3)), failed, out);
    }
}
