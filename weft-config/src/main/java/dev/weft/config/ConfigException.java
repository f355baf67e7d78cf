package dev.weft.config;

import java.util.List;

/** A config that cannot be used; lists every problem found, each with file:line:column. */
public final class ConfigException extends Exception {
    /** One problem: where ({@code file:line:column}) and what was expected. */
    public record Problem(String location, String message) {
        @Override
        public String toString() {
            return location + ": " + message;
        }
    }

    private final List<Problem> problems;

    public ConfigException(List<Problem> problems) {
        super(render(problems));
        this.problems = List.copyOf(problems);
    }

    public ConfigException(String location, String message) {
        this(List.of(new Problem(location, message)));
    }

    public List<Problem> problems() {
        return problems;
    }

    private static String render(List<Problem> problems) {
        StringBuilder sb = new StringBuilder();
        for (Problem p : problems) {
            if (!sb.isEmpty()) {
                sb.append('\n');
            }
            sb.append(p);
        }
        return sb.toString();
    }
}
