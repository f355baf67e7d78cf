package dev.weft.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The product's command line (weft.jar) as a user meets it: help, version, and one clear line per error with the right
 * exit code. The lab's commands are weft-lab's (LabMainTest).
 */
class MainTest {
    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    private int run(String... args) {
        return Main.run(args, new PrintWriter(out, true), new PrintWriter(err, true));
    }

    @Test
    void versionNamesWeftAndTheJdk() {
        assertThat(run("--version")).isZero();
        assertThat(out.toString()).startsWith("weft ").contains("JDK 25");
    }

    @Test
    void helpListsTheCommandsAndSaysWhereTheLabsAre() {
        assertThat(run("--help")).isZero();
        assertThat(out.toString()).contains("upstream").doesNotContain("  lab ")
                .contains("kafka, demo, bench and lab are in weft-lab.jar");
        assertThat(run("upstream", "--help")).isZero();
        assertThat(out.toString()).contains("latency=200ms").contains("/-/stats");
    }

    @Test
    void unknownFlagIsAUsageError() {
        assertThat(run("upstream", "--bogus")).isEqualTo(2);
        assertThat(err.toString()).contains("weft: Unknown option: '--bogus'").contains("Try 'weft upstream --help'.");
    }

    @Test
    void unknownCommandNamesTheCommands() {
        assertThat(run("gatewy")).isEqualTo(2);
        assertThat(err.toString()).startsWith("weft: unknown command 'gatewy'; commands: gateway, dispatch, check, upstream, doctor, help");
    }

    @Test
    void aLabCommandSaysWhereItIs() {
        assertThat(run("bench", "http://127.0.0.1:1/")).isEqualTo(2);
        assertThat(err.toString()).startsWith("weft: 'bench' is in weft-lab.jar, not in this product jar; ./weft runs it");
    }

    @Test
    void checkKnowsRateLimitsAndTheTargetGuard(@TempDir Path dir) throws Exception {
        Path ok = dir.resolve("ok.yaml");
        Files.writeString(ok, """
                source: { topics: [events], group: g }
                endpoints:
                  - { id: a, url: "https://8.8.8.8/hook", rate_limit: 40/s }
                  - { id: b, url: "http://127.0.0.1:9002/b", allow_private: true, rate_limit: 60/min, burst: 3 }
                """);
        assertThat(run("check", ok.toString())).isZero();
        assertThat(out.toString()).contains("a  https://8.8.8.8/hook  every record, rate_limit 40/s, burst 4\n")
                .contains("b  http://127.0.0.1:9002/b  every record, rate_limit 1/s, burst 3, private target allowed");
        Path bad = dir.resolve("bad.yaml");
        Files.writeString(bad, """
                source: { topics: [events], group: g }
                endpoints:
                  - { id: meta, url: "http://169.254.169.254/", rate_limit: lots }
                """);
        assertThat(run("check", bad.toString())).isEqualTo(2);
        assertThat(err.toString()).contains(bad + ":3:22: refused target: 169.254.169.254 is 169.254.169.254, link-local")
                .contains(bad + ":3:61: a rate limit is N/s");
    }

    @Test
    void dispatchRejectsBadInputBeforeStartingAnything(@TempDir Path dir) throws Exception {
        Path bad = dir.resolve("d.yaml");
        Files.writeString(bad, "source: { topics: [events], group: g }\nendpoints:\n  - { id: a, url: \"http://127.0.0.1:1/\","
                + " secret: notwhsec }\n");
        assertThat(run("dispatch", "--config", bad.toString())).isEqualTo(2);
        assertThat(err.toString()).contains(bad + ":3:50: a secret is 'whsec_'");
        err.getBuffer().setLength(0);
        assertThat(run("check", bad.toString())).isEqualTo(2);
        assertThat(err.toString()).contains(":3:50: a secret is 'whsec_'");
        err.getBuffer().setLength(0);
        assertThat(run("dispatch", "--config", dir.resolve("none.yaml").toString())).isEqualTo(2);
        assertThat(err.toString()).contains("none.yaml: no such file");
    }

    @Test
    void missingConfigIsOneLineExit2() {
        assertThat(run("upstream", "--config", "/nonexistent/sim.yaml")).isEqualTo(2);
        assertThat(err.toString().strip()).isEqualTo("weft: /nonexistent/sim.yaml: no such file");
    }

    @Test
    void badConfigListsEveryProblemWithItsLocation(@TempDir Path dir) throws Exception {
        Path f = Files.writeString(dir.resolve("s.yaml"), "paths:\n  /b: { latency: soon, colour: red }\n");
        assertThat(run("upstream", "--config", f.toString())).isEqualTo(2);
        assertThat(err.toString()).contains("weft: " + f + ":2:18: bad value of 'latency'")
                .contains("weft: " + f + ":2:24: unknown key 'colour'").doesNotContain("Exception");
    }

    @Test
    void portInUseIsOneLineWithoutStackTrace() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            assertThat(run("upstream", "--listen", "127.0.0.1:" + taken.getLocalPort())).isEqualTo(1);
        }
        assertThat(err.toString()).startsWith("weft: cannot listen on 127.0.0.1:").doesNotContain("\tat ");
    }

    @Test
    void checkTellsWhatTheExamplesDeclare() {
        assertThat(run("check", "../examples/system-a.yaml")).isZero();
        assertThat(out.toString()).contains("OK, gateway config with 2 routes").contains("d (after b)");
        if (java.nio.file.Files.isDirectory(Path.of("/proc/thread-self"))) { // the door's priority as run here
            assertThat(out.toString()).containsAnyOf("front door: its thread at nice -5", "front door: run as now",
                    "warning: run as now", "front door: left at nice");
        }
        assertThat(run("check", "../examples/system-a-backends.yaml")).isZero();
        assertThat(out.toString()).contains("OK, weft upstream config with 4 paths");
        assertThat(run("check", "../examples/relay.yaml")).isZero();
        assertThat(out.toString()).contains("OK, gateway config with 3 routes")
                .contains("* /b/  timeout 5s, proxy to http://127.0.0.1:9001/b/")
                .contains("* /d/  timeout 2s, proxy to http://127.0.0.1:9001/d/");
    }

    @Test
    void checkReportsEveryProblemAndExits2(@TempDir Path dir) throws Exception {
        Path f = Files.writeString(dir.resolve("gw.yaml"), "routes:\n  - get: /x\n    calls:\n      a: { url: \"http://h:1/{b.body.id}\" }\n");
        assertThat(run("check", f.toString())).isEqualTo(2);
        assertThat(err.toString()).contains("weft: " + f + ":4:10: call 'a' reads {b.body.id}, but this route has no call 'b'");
        Path other = Files.writeString(dir.resolve("x.yaml"), "hello: 1\n");
        assertThat(run("check", other.toString())).isEqualTo(2);
        assertThat(err.toString()).contains("cannot tell what this config is for");
    }

    @Test
    void checkKnowsTheDeployingKeys(@TempDir Path dir) throws Exception {
        Path f = Files.writeString(dir.resolve("gw.yaml"), "tls:\n  cert: nope.pem\n  key: nope-key.pem\n"
                + "admin:\n  listen: 127.0.0.1:9901\n  tokn_env: X\nroutes:\n  - get: /x\n    calls:\n"
                + "      a: { url: \"http://h:1/a\" }\n");
        assertThat(run("check", f.toString())).isEqualTo(2);
        assertThat(err.toString()).contains("weft: " + f + ":2:9: tls: cannot read " + dir.resolve("nope.pem"))
                .contains("weft: " + f + ":6:3: unknown key 'tokn_env', expected one of: listen, token_env");
        // 1,000,000 inbound + 5 destinations of 100,000 pooled connections + 128: past any usual open-file limit
        StringBuilder calls = new StringBuilder();
        StringBuilder dests = new StringBuilder("destinations:\n");
        for (int i = 1; i <= 5; i++) {
            calls.append("      c").append(i).append(": { url: \"http://h:").append(i).append("/a\" }\n");
            dests.append("  \"http://h:").append(i).append("\": { max_in_flight: 100000, max_connections: 100000 }\n");
        }
        Path big = Files.writeString(dir.resolve("big.yaml"), "limits: { max_connections: 1000000 }\n" + dests
                + "routes:\n  - get: /x\n    calls:\n" + calls);
        assertThat(run("check", big.toString())).as(err.toString()).isZero();
        long limit = dev.weft.os.Descriptors.limit();
        if (limit > 0 && limit < 1_500_128) {
            assertThat(out.toString()).contains("warning: the open-file limit is " + limit
                    + " but this config may hold 1500128 descriptors: 1000000 inbound connections");
        }
    }

    @Test
    void checkKnowsTheObservabilityKeys(@TempDir Path dir) throws Exception {
        Path ok = Files.writeString(dir.resolve("ok.yaml"), "access_log: stdout\ntracing: { otlp: \"http://127.0.0.1:4318\", sample: 0.1 }\n"
                + "routes:\n  - get: /x\n    calls:\n      a: { url: \"http://h:1/a\" }\n");
        assertThat(run("check", ok.toString())).isZero();
        Path bad = Files.writeString(dir.resolve("bad.yaml"), "access_log: stdout\ntracing: { otlp: \"http://127.0.0.1:4318\", sample: 1.5 }\n"
                + "routes:\n  - get: /x\n    calls:\n      a: { url: \"http://h:1/a\" }\n");
        assertThat(run("check", bad.toString())).isEqualTo(2);
        assertThat(err.toString()).contains(bad + ":2:51: expected a number from 0.0 to 1.0, got 1.5");
    }

    @Test
    void checkKnowsTheConnectionKeysAndWarnsAboutInsecureSkipVerify(@TempDir Path dir) throws Exception {
        Path f = Files.writeString(dir.resolve("gw.yaml"), """
                destination_defaults: { max_connecting: 8 }
                destinations:
                  "https://127.0.0.1:9443": { min_idle: 2, insecure_skip_verify: true }
                routes:
                  - get: /x
                    calls:
                      a: { url: "https://127.0.0.1:9443/a" }
                """);
        assertThat(run("check", f.toString())).as(err.toString()).isZero();
        assertThat(out.toString()).contains("warning: destination https://127.0.0.1:9443: insecure_skip_verify is on");
        Path bad = Files.writeString(dir.resolve("bad.yaml"), """
                destination_defaults: { insecure_skip_verify: true, ca: missing.pem }
                routes:
                  - get: /x
                    calls:
                      a: { url: "https://127.0.0.1:9443/a" }
                """);
        assertThat(run("check", bad.toString())).isEqualTo(2);
        assertThat(err.toString()).contains(bad + ":1:47: insecure_skip_verify is allowed only on one destination")
                .contains(bad + ":1:57: ca: no such file");
    }

    @Test
    void gatewayRefusesABadExecutor() {
        assertThat(run("gateway", "--config", "../examples/system-a.yaml", "--executor", "pool")).isEqualTo(2);
        assertThat(err.toString()).contains("expected virtual or platform:N");
    }

}
