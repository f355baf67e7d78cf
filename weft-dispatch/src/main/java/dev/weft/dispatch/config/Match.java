package dev.weft.dispatch.config;

import com.fasterxml.jackson.core.JsonPointer;

import java.util.List;
import java.util.Set;

/**
 * Which records an endpoint takes. Empty ({@link #ALL}): every record. {@code types}: the event type
 * (the record header {@code type}, else the JSON value at the source's {@code type_pointer}) is one of
 * them. {@code pointer} + {@code equals}: the JSON value at the pointer, as text, is one of the values.
 * Both given: both must hold.
 */
public record Match(Set<String> types, JsonPointer pointer, Set<String> equals) {
    public static final Match ALL = new Match(Set.of(), null, Set.of());

    public boolean all() {
        return types.isEmpty() && pointer == null;
    }

    /** Whether matching needs the record's value as JSON ({@code typeFromHeader}: the record has a type header). */
    public boolean needsJson(boolean typeFromHeader) {
        return pointer != null || (!types.isEmpty() && !typeFromHeader);
    }

    @Override
    public String toString() {
        if (all()) {
            return "every record";
        }
        StringBuilder sb = new StringBuilder();
        if (!types.isEmpty()) {
            sb.append("type in ").append(List.copyOf(types));
        }
        if (pointer != null) {
            sb.append(sb.isEmpty() ? "" : " and ").append(pointer).append(" in ").append(List.copyOf(equals));
        }
        return sb.toString();
    }
}
