package dev.weft.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** The command line as a user meets it: help, version, and one clear line per error with the right exit code. */
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
    void helpListsTheCommands() {
        assertThat(run("--help")).isZero();
        assertThat(out.toString()).contains("upstream").contains("lab");
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
        assertThat(err.toString()).startsWith("weft: unknown command 'gatewy'; commands: gateway, dispatch, check, upstream, doctor, kafka, demo, bench, lab, help");
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
    void dispatchAndKafkaRejectBadInputBeforeStartingAnything(@TempDir Path dir) throws Exception {
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
        err.getBuffer().setLength(0);
        assertThat(run("kafka", "--topic", "events:0")).isEqualTo(2);
        assertThat(err.toString()).contains("--topic expects NAME[:PARTITIONS]");
        err.getBuffer().setLength(0);
        assertThat(run("kafka", "send", "--topic", "t", "--file", dir.resolve("nope.jsonl").toString())).isEqualTo(2);
        assertThat(err.toString()).contains("reading records");
    }

    @Test
    void benchRejectsBadInputBeforeSendingAnything() {
        assertThat(run("bench", "not a url")).isEqualTo(2);
        assertThat(err.toString()).contains("weft: not a");
        err.getBuffer().setLength(0);
        assertThat(run("bench", "--header", "novalue", "http://127.0.0.1:1/")).isEqualTo(2);
        assertThat(err.toString()).contains("--header must be 'NAME: VALUE'");
        err.getBuffer().setLength(0);
        assertThat(run("bench", "--concurrency", "0", "http://127.0.0.1:1/")).isEqualTo(2);
        assertThat(err.toString()).contains("--concurrency must be 1..15000");
    }

    @Test
    void demoAndLabsRejectUnknownModels() {
        assertThat(run("demo", "--models", "weft,tomcat")).isEqualTo(2);
        assertThat(err.toString()).contains("--models: unknown name 'tomcat'; known: weft, pool-200, pool-2000, async, go");
        err.getBuffer().setLength(0);
        assertThat(run("lab", "clients", "--clients", "okhttp")).isEqualTo(2);
        assertThat(err.toString()).contains("unknown name 'okhttp'");
    }

    @Test
    void labChaosIsALabCommandAndRefusesBadCounts() {
        assertThat(run("lab", "chaos", "--runs", "0")).isEqualTo(2);
        assertThat(err.toString()).contains("--runs must be 1..1000, --records 1..100000, --faults 1..50");
    }

    @Test
    void labAgentNamesBadModelsAndAMissingAgentJar() {
        assertThat(run("lab", "agent", "--models", "pool,agent-many")).isEqualTo(2);
        assertThat(err.toString()).contains("weft: --models: model agent-many: agent-N takes a whole number N >= 1");
        err.getBuffer().setLength(0);
        assertThat(run("lab", "agent", "--models", "tomcat")).isEqualTo(2);
        assertThat(err.toString()).contains("unknown model 'tomcat'; known: pool, agent, agent-N (N: concurrency=N), weft");
        err.getBuffer().setLength(0);
        assertThat(run("lab", "agent", "--agent-jar", "/nonexistent/weft-agent.jar")).isEqualTo(1);
        assertThat(err.toString()).contains("/nonexistent/weft-agent.jar is missing: build it with ./weft agent");
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
        long limit = dev.weft.core.Descriptors.limit();
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

    @Test
    void badDurationInLabIsAUsageError() {
        assertThat(run("lab", "clients", "--duration", "long")).isEqualTo(2);
        assertThat(err.toString()).contains("expected a duration");
        assertThat(run("lab", "clients", "--clients", "curl")).isEqualTo(2);
        assertThat(err.toString()).contains("--clients: unknown name 'curl'");
    }
}
