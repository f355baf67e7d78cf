package dev.weft.gateway.plan;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * What one call of a plan produced. The body is parsed as JSON only when something asks for {@link #json()}
 * (a template that reads a field, or an answer that filters or merges bodies): an answer that only embeds
 * the bodies copies them as they are.
 */
public final class CallOutcome {
    private final String name;
    private final int status;
    private final byte[] body;
    private final String reason;
    private final String message;
    private final long tookNanos;
    private final int attempts;
    private volatile JsonNode json;
    private volatile boolean parsed;

    /**
     * @param json    the body as JSON, or null when it is not JSON (or there is none)
     * @param reason  null on success; otherwise a named reason ({@code status-503}, {@code timeout-headers},
     *                {@code skipped}, {@code not-json}, {@code template}, ...)
     * @param message a human explanation of a failure
     */
    public CallOutcome(String name, int status, byte[] body, JsonNode json, String reason, String message,
                       long tookNanos, int attempts) {
        this(name, status, body, reason, message, tookNanos, attempts);
        this.json = json;
        this.parsed = true;
    }

    /** An outcome whose body is parsed on first use of {@link #json()}. */
    CallOutcome(String name, int status, byte[] body, String reason, String message, long tookNanos, int attempts) {
        this.name = name;
        this.status = status;
        this.body = body;
        this.reason = reason;
        this.message = message;
        this.tookNanos = tookNanos;
        this.attempts = attempts;
    }

    public String name() {
        return name;
    }

    public int status() {
        return status;
    }

    public byte[] body() {
        return body;
    }

    /** The body parsed as JSON, or null when it is empty or not JSON. */
    public JsonNode json() {
        if (!parsed) {
            // two threads may both parse: the trees are equal and never changed, either one will do
            json = PlanRunner.parseJson(body);
            parsed = true;
        }
        return json;
    }

    public String reason() {
        return reason;
    }

    public String message() {
        return message;
    }

    public long tookNanos() {
        return tookNanos;
    }

    public int attempts() {
        return attempts;
    }

    public boolean ok() {
        return reason == null;
    }

    static CallOutcome failed(String name, String reason, String message, long tookNanos) {
        return new CallOutcome(name, 0, new byte[0], null, reason, message, tookNanos, 0);
    }

    @Override
    public String toString() {
        return "CallOutcome[" + name + " status=" + status + (ok() ? "" : " reason=" + reason + " message=" + message)
                + " body=" + body.length + " bytes]";
    }
}
