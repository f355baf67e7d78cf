package dev.weft.gateway.plan;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * What one call of a plan produced. The body is parsed as JSON only when something asks for {@link #json()}
 * (a template that reads a field, or an answer that filters or merges bodies): an answer that only embeds
 * the bodies copies them as they are.
 *
 * <p>This is the gateway's view of a call, not a second transport result: it also stands for calls that
 * never reached the transport (skipped, a missing template value, a bad URL: {@link Failure}) and for a
 * {@code foreach}, whose body is the array of its items' bodies, which no single
 * {@link dev.weft.client.CallResult} has.
 */
public final class CallOutcome {
    private final String name;
    private final int status;
    private final byte[] body;
    private final Failure failure;
    private final long tookNanos;
    private final int attempts;
    private volatile JsonNode json;
    private volatile boolean parsed;

    /**
     * @param json    the body as JSON, or null when it is not JSON (or there is none)
     * @param failure null on success; otherwise why the call failed
     */
    public CallOutcome(String name, int status, byte[] body, JsonNode json, Failure failure, long tookNanos,
                       int attempts) {
        this(name, status, body, failure, tookNanos, attempts);
        this.json = json;
        this.parsed = true;
    }

    /** An outcome whose body is parsed on first use of {@link #json()}. */
    CallOutcome(String name, int status, byte[] body, Failure failure, long tookNanos, int attempts) {
        this.name = name;
        this.status = status;
        this.body = body;
        this.failure = failure;
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

    /** Why the call failed, or null when it succeeded. */
    public Failure failure() {
        return failure;
    }

    public long tookNanos() {
        return tookNanos;
    }

    public int attempts() {
        return attempts;
    }

    public boolean ok() {
        return failure == null;
    }

    static CallOutcome failed(String name, Failure failure, long tookNanos) {
        return new CallOutcome(name, 0, new byte[0], null, failure, tookNanos, 0);
    }

    @Override
    public String toString() {
        return "CallOutcome[" + name + " status=" + status + (ok() ? "" : " failure=" + failure)
                + " body=" + body.length + " bytes]";
    }
}
