package dev.weft.config;

import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ConfigNodeTest {
    @Test
    void valuesKnowTheirFileLineAndColumn() throws Exception {
        ConfigNode root = ConfigNode.parse("gw.yaml", "a: 1\nb:\n  c: 250ms\n  d: [x, y]\n");
        Map<String, ConfigNode> top = root.entries();
        ConfigNode c = top.get("b").entries().get("c");
        assertThat(c.location()).isEqualTo("gw.yaml:3:6");
        assertThat(c.duration()).isEqualTo(Duration.ofMillis(250));
        assertThat(top.get("b").entries().get("d").items()).hasSize(2);
    }

    @Test
    void errorsNameTheSpotAndWhatWasExpected() throws Exception {
        ConfigNode root = ConfigNode.parse("gw.yaml", "timeout: soon\nport: x\nextra: 1\n");
        Map<String, ConfigNode> top = root.entries();
        assertThatThrownBy(() -> top.get("timeout").duration())
                .hasMessage("gw.yaml:1:10: expected a duration such as 250ms, 1.5s or 2m, got 'soon'");
        assertThatThrownBy(() -> top.get("port").integer(1, 65535))
                .hasMessage("gw.yaml:2:7: expected a whole number from 1 to 65535, got 'x'");
        assertThatThrownBy(() -> root.entries(Set.of("timeout", "port")))
                .hasMessage("gw.yaml:3:1: unknown key 'extra', expected one of: port, timeout");
    }

    @Test
    void syntaxErrorsAndDuplicateKeysAreLocated() {
        assertThatThrownBy(() -> ConfigNode.parse("bad.yaml", "a: [1, 2\nb: 3\n"))
                .isInstanceOf(ConfigException.class).hasMessageStartingWith("bad.yaml:")
                .hasMessageContaining("not valid YAML");
        assertThatThrownBy(() -> ConfigNode.parse("dup.yaml", "a: 1\na: 2\n").entries())
                .hasMessage("dup.yaml:2:1: duplicate key 'a'");
    }

    @Test
    void jsonIsAcceptedAndConvertsToPlainValues() throws Exception {
        ConfigNode root = ConfigNode.parse("c.json", "{\"id\": 7, \"name\": \"Ann\", \"ok\": true, \"tags\": [\"a\"], "
                + "\"n\": null, \"x\": 1.5, \"s\": \"7\"}");
        assertThat(root.toPlain()).isEqualTo(new java.util.LinkedHashMap<>(Map.of("id", 7L, "name", "Ann", "ok", true,
                "tags", List.of("a"), "x", 1.5, "s", "7")) {{
                    put("n", null);
                }});
    }

    @Test
    void missingFileIsNamed(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
        assertThatThrownBy(() -> ConfigNode.load(dir.resolve("nope.yaml"))).hasMessageEndingWith("nope.yaml: no such file");
        Path f = Files.writeString(dir.resolve("ok.yaml"), "a: 1\n");
        assertThat(ConfigNode.load(f).entries()).containsKey("a");
    }

    @Test
    void sizes() {
        assertThat(Sizes.parse("10MiB")).isEqualTo(10L << 20);
        assertThat(Sizes.parse("512")).isEqualTo(512);
        assertThat(Sizes.parse("1KB")).isEqualTo(1000);
        assertThatThrownBy(() -> Sizes.parse("lots")).hasMessageContaining("expected a size");
    }
}
