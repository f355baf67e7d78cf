package dev.weft.cli;

import ch.qos.logback.classic.Level;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** One backend: System.Logger, java.util.logging and SLF4J all end in Logback's output on stderr. */
class LoggingTest {
    private final PrintStream realErr = System.err;

    @AfterEach
    void restore() {
        System.setErr(realErr);
        Logging.configure(Level.WARN, false);
    }

    private static List<JsonNode> jsonLines(ByteArrayOutputStream b) throws Exception {
        List<JsonNode> out = new ArrayList<>();
        for (String l : b.toString(StandardCharsets.UTF_8).split("\n")) {
            if (!l.isBlank()) {
                out.add(new ObjectMapper().readTree(l));
            }
        }
        return out;
    }

    @Test
    void jsonLinesFromEveryApiAtTheirLevels() throws Exception {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        System.setErr(new PrintStream(b, true, StandardCharsets.UTF_8));
        Logging.configure(Level.INFO, true);
        System.getLogger("weft.gateway").log(System.Logger.Level.INFO, "reloaded x.yaml: 3 routes");
        System.getLogger("weft.gateway").log(System.Logger.Level.DEBUG, "not at info");
        java.util.logging.Logger.getLogger("io.micrometer.something").warning("a JUL warning");
        java.util.logging.Logger.getLogger("io.micrometer.something").info("a JUL info: libraries log warn and up");
        LoggerFactory.getLogger("org.apache.kafka.clients.Metadata").warn("a Kafka warning");
        LoggerFactory.getLogger("org.apache.kafka.clients.Metadata").info("a Kafka info");
        List<JsonNode> lines = jsonLines(b);
        assertThat(lines).extracting(n -> n.get("message").asText())
                .containsExactly("reloaded x.yaml: 3 routes", "a JUL warning", "a Kafka warning");
        assertThat(lines.getFirst().get("level").asText()).isEqualTo("INFO");
        assertThat(lines.getFirst().get("loggerName").asText()).isEqualTo("weft.gateway");
        assertThat(lines.get(1).get("level").asText()).isEqualTo("WARN");
    }

    @Test
    void debugOpensLibrariesToo() throws Exception {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        System.setErr(new PrintStream(b, true, StandardCharsets.UTF_8));
        Logging.configure(Level.DEBUG, false);
        LoggerFactory.getLogger("org.apache.kafka.clients.Metadata").debug("kafka detail");
        System.getLogger("weft.dispatch").log(System.Logger.Level.DEBUG, "weft detail");
        String text = b.toString(StandardCharsets.UTF_8);
        assertThat(text).contains("DEBUG org.apache.kafka.clients.Metadata - kafka detail")
                .contains("DEBUG weft.dispatch - weft detail");
    }

    @Test
    void badValuesAreUsageErrors() {
        java.io.StringWriter err = new java.io.StringWriter();
        int code = Main.run(new String[] {"gateway", "--config", "../examples/system-a.yaml", "--log-format", "xml"},
                new java.io.PrintWriter(new java.io.StringWriter(), true), new java.io.PrintWriter(err, true));
        assertThat(code).isEqualTo(2);
        assertThat(err.toString()).contains("--log-format: expected text or json, got 'xml'");
    }
}
