package dev.weft.config;

import dev.weft.core.Durations;
import org.snakeyaml.engine.v2.api.LoadSettings;
import org.snakeyaml.engine.v2.composer.Composer;
import org.snakeyaml.engine.v2.exceptions.Mark;
import org.snakeyaml.engine.v2.exceptions.MarkedYamlEngineException;
import org.snakeyaml.engine.v2.exceptions.YamlEngineException;
import org.snakeyaml.engine.v2.nodes.MappingNode;
import org.snakeyaml.engine.v2.nodes.Node;
import org.snakeyaml.engine.v2.nodes.NodeTuple;
import org.snakeyaml.engine.v2.nodes.ScalarNode;
import org.snakeyaml.engine.v2.nodes.SequenceNode;
import org.snakeyaml.engine.v2.parser.ParserImpl;
import org.snakeyaml.engine.v2.scanner.StreamReader;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;

/**
 * A node of a YAML (or JSON) config that knows where it stands in its file, so that every error can
 * say {@code file:line:column} and what was expected.
 */
public final class ConfigNode {
    /** Config files larger than this are refused. */
    public static final long MAX_FILE_BYTES = 4L * 1024 * 1024;

    private final String source;
    private final Node node;

    private ConfigNode(String source, Node node) {
        this.source = source;
        this.node = node;
    }

    /** Reads and parses a YAML or JSON file. */
    public static ConfigNode load(Path file) throws ConfigException {
        String name = file.toString();
        try {
            long size = Files.size(file);
            if (size > MAX_FILE_BYTES) {
                throw new ConfigException(name, "file is " + size + " bytes; a config may be at most "
                        + MAX_FILE_BYTES);
            }
            return parse(name, Files.readString(file, StandardCharsets.UTF_8));
        } catch (NoSuchFileException e) {
            throw new ConfigException(name, "no such file");
        } catch (IOException e) {
            throw new ConfigException(name, "cannot read: " + e.getMessage());
        }
    }

    /** Parses YAML or JSON text; {@code source} names it in errors. An empty document is an empty map. */
    public static ConfigNode parse(String source, String text) throws ConfigException {
        LoadSettings settings = LoadSettings.builder().setLabel(source).setAllowDuplicateKeys(true)
                .setMaxAliasesForCollections(50).setCodePointLimit((int) MAX_FILE_BYTES).build();
        try {
            Composer composer = new Composer(settings, new ParserImpl(settings, new StreamReader(settings, text)));
            Optional<Node> root = composer.getSingleNode();
            return new ConfigNode(source, root.orElse(null));
        } catch (MarkedYamlEngineException e) {
            Mark m = e.getProblemMark().orElse(e.getContextMark().orElse(null));
            String where = m == null ? source : source + ":" + (m.getLine() + 1) + ":" + (m.getColumn() + 1);
            String what = (e.getContext() == null ? "" : e.getContext() + ", ") + e.getProblem();
            throw new ConfigException(where, "not valid YAML: " + what);
        } catch (YamlEngineException e) {
            throw new ConfigException(source, "not valid YAML: " + e.getMessage());
        }
    }

    /** {@code file:line:column}, 1-based. */
    public String location() {
        if (node == null) {
            return source;
        }
        return node.getStartMark().map(m -> source + ":" + (m.getLine() + 1) + ":" + (m.getColumn() + 1))
                .orElse(source);
    }

    public String source() {
        return source;
    }

    public boolean isNull() {
        return node == null || (node instanceof ScalarNode s && isNullScalar(s));
    }

    public boolean isMap() {
        return node instanceof MappingNode;
    }

    public boolean isList() {
        return node instanceof SequenceNode;
    }

    public boolean isScalar() {
        return node instanceof ScalarNode && !isNull();
    }

    /** A problem at this node. */
    public ConfigException error(String message) {
        return new ConfigException(location(), message);
    }

    /** The entries of a map, in file order (an empty map for an empty document). */
    public Map<String, ConfigNode> entries() throws ConfigException {
        if (isNull()) {
            return Map.of();
        }
        if (!(node instanceof MappingNode map)) {
            throw error("expected a map (key: value), got " + kind());
        }
        Map<String, ConfigNode> out = new LinkedHashMap<>();
        for (NodeTuple t : map.getValue()) {
            ConfigNode key = new ConfigNode(source, t.getKeyNode());
            if (!(t.getKeyNode() instanceof ScalarNode)) {
                throw key.error("expected a plain key, got " + key.kind());
            }
            String k = key.text();
            if (out.containsKey(k)) {
                throw key.error("duplicate key '" + k + "'");
            }
            out.put(k, new ConfigNode(source, t.getValueNode()));
        }
        return out;
    }

    /** The entries of a map, after checking that every key is one of {@code allowed}. */
    public Map<String, ConfigNode> entries(Collection<String> allowed) throws ConfigException {
        Problems problems = new Problems();
        Map<String, ConfigNode> known = entries(allowed, problems);
        problems.throwIfAny();
        return known;
    }

    /**
     * The entries of a map whose keys are in {@code allowed}; each other key is added to
     * {@code problems} (so that one check reports them all) and left out.
     */
    public Map<String, ConfigNode> entries(Collection<String> allowed, Problems problems) throws ConfigException {
        Map<String, ConfigNode> e = entries();
        if (!(node instanceof MappingNode map)) {
            return e;
        }
        Map<String, ConfigNode> known = new LinkedHashMap<>();
        for (NodeTuple t : map.getValue()) {
            String k = ((ScalarNode) t.getKeyNode()).getValue();
            if (allowed.contains(k)) {
                known.put(k, e.get(k));
            } else {
                problems.add(new ConfigNode(source, t.getKeyNode()), "unknown key '" + k + "', expected one of: "
                        + String.join(", ", new TreeSet<>(allowed)));
            }
        }
        return known;
    }

    /** The items of a list; a single scalar counts as a list of one. */
    public List<ConfigNode> items() throws ConfigException {
        if (isNull()) {
            return List.of();
        }
        if (node instanceof ScalarNode) {
            return List.of(this);
        }
        if (!(node instanceof SequenceNode seq)) {
            throw error("expected a list, got " + kind());
        }
        List<ConfigNode> out = new ArrayList<>();
        for (Node n : seq.getValue()) {
            out.add(new ConfigNode(source, n));
        }
        return out;
    }

    /** The text of a scalar. */
    public String text() throws ConfigException {
        if (!(node instanceof ScalarNode s) || isNull()) {
            throw error("expected a value, got " + kind());
        }
        return s.getValue();
    }

    public Duration duration() throws ConfigException {
        try {
            return Durations.parse(text());
        } catch (IllegalArgumentException e) {
            throw error(e.getMessage());
        }
    }

    public long integer(long min, long max) throws ConfigException {
        String t = text().strip().replace("_", "");
        long v;
        try {
            v = Long.parseLong(t);
        } catch (NumberFormatException e) {
            throw error("expected a whole number from " + min + " to " + max + ", got '" + t + "'");
        }
        if (v < min || v > max) {
            throw error("expected a whole number from " + min + " to " + max + ", got " + v);
        }
        return v;
    }

    public double number(double min, double max) throws ConfigException {
        String t = text().strip();
        double v;
        try {
            v = Double.parseDouble(t);
        } catch (NumberFormatException e) {
            throw error("expected a number from " + min + " to " + max + ", got '" + t + "'");
        }
        if (!(v >= min && v <= max)) {
            throw error("expected a number from " + min + " to " + max + ", got " + t);
        }
        return v;
    }

    public boolean bool() throws ConfigException {
        return switch (text().strip()) {
            case "true", "yes", "on" -> true;
            case "false", "no", "off" -> false;
            default -> throw error("expected true or false, got '" + text() + "'");
        };
    }

    /** Size in bytes: {@code 512}, {@code 64KiB}, {@code 10MiB}, {@code 1GiB} (also KB/MB/GB = powers of 1000). */
    public long bytes(long max) throws ConfigException {
        try {
            long v = Sizes.parse(text());
            if (v > max) {
                throw error("expected at most " + max + " bytes, got " + v);
            }
            return v;
        } catch (IllegalArgumentException e) {
            throw error(e.getMessage());
        }
    }

    /**
     * The value as plain Java: maps (in file order), lists, and for scalars a String, Long, Double,
     * Boolean or null. Quoted scalars stay strings. Used where a config embeds JSON (a body).
     */
    public Object toPlain() throws ConfigException {
        if (isNull()) {
            return null;
        }
        if (isMap()) {
            Map<String, Object> out = new LinkedHashMap<>();
            for (Map.Entry<String, ConfigNode> e : entries().entrySet()) {
                out.put(e.getKey(), e.getValue().toPlain());
            }
            return out;
        }
        if (isList()) {
            List<Object> out = new ArrayList<>();
            for (ConfigNode n : items()) {
                out.add(n.toPlain());
            }
            return out;
        }
        ScalarNode s = (ScalarNode) node;
        String v = s.getValue();
        if (!s.isPlain()) {
            return v;
        }
        if (v.equals("true") || v.equals("false")) {
            return Boolean.parseBoolean(v);
        }
        if (v.matches("-?(0|[1-9][0-9]{0,17})")) {
            return Long.parseLong(v);
        }
        if (v.matches("-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][-+]?[0-9]+)?")) {
            return Double.parseDouble(v);
        }
        return v;
    }

    private String kind() {
        if (isNull()) {
            return "nothing";
        }
        if (node instanceof MappingNode) {
            return "a map";
        }
        if (node instanceof SequenceNode) {
            return "a list";
        }
        return "'" + ((ScalarNode) node).getValue() + "'";
    }

    private static boolean isNullScalar(ScalarNode s) {
        String v = s.getValue();
        return s.isPlain() && (v.isEmpty() || v.equals("~") || v.equals("null") || v.equals("Null")
                || v.equals("NULL"));
    }
}
