package dev.weft.lab.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** The lab's command line (weft-lab.jar): the product's commands and the lab's, one clear line per error. */
class LabMainTest {
    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    private int run(String... args) {
        return LabMain.run(args, new PrintWriter(out, true), new PrintWriter(err, true));
    }

    @Test
    void helpListsTheProductsCommandsAndTheLabs() {
        assertThat(run("--help")).isZero();
        assertThat(out.toString()).contains("upstream").contains("  lab ").doesNotContain("are in weft-lab.jar");
    }

    @Test
    void unknownCommandNamesEveryCommand() {
        assertThat(run("gatewy")).isEqualTo(2);
        assertThat(err.toString()).startsWith("weft: unknown command 'gatewy'; commands: gateway, dispatch, check, upstream, doctor, kafka, demo, bench, lab, help");
    }

    @Test
    void kafkaRejectsBadInputBeforeStartingAnything(@TempDir Path dir) {
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
    void badDurationInLabIsAUsageError() {
        assertThat(run("lab", "clients", "--duration", "long")).isEqualTo(2);
        assertThat(err.toString()).contains("expected a duration");
        assertThat(run("lab", "clients", "--clients", "curl")).isEqualTo(2);
        assertThat(err.toString()).contains("--clients: unknown name 'curl'");
    }

    @Test
    void labAgentNamesBadModelsAndAMissingAgentJar() {
        assertThat(run("lab", "agent", "--models", "pool,agent-many")).isEqualTo(2);
        assertThat(err.toString()).contains("weft: --models: model agent-many: agent-N takes a whole number N >= 1");
        err.getBuffer().setLength(0);
        assertThat(run("lab", "agent", "--models", "tomcat")).isEqualTo(2);
        assertThat(err.toString()).contains("unknown model 'tomcat'; known: pool, agent, agent-N (N: concurrency=N), agent-pinned, weft");
        err.getBuffer().setLength(0);
        assertThat(run("lab", "agent", "--agent-jar", "/nonexistent/weft-agent.jar")).isEqualTo(1);
        assertThat(err.toString()).contains("/nonexistent/weft-agent.jar is missing: build it with ./weft agent");
    }

    @Test
    void labChaosIsALabCommandAndRefusesBadCounts() {
        assertThat(run("lab", "chaos", "--runs", "0")).isEqualTo(2);
        assertThat(err.toString()).contains("--runs must be 1..1000, --records 1..100000, --faults 1..50");
    }
}
