package dev.weft.client;

import java.util.Objects;

/**
 * Why a call failed, as a value: the {@link Reason}, the status of the answer that came with it (the
 * {@code 503} of {@link Reason#STATUS}, or the status of a {@link Reason#TOO_LARGE} answer; 0 when no
 * answer arrived) and a human explanation. {@link #label()} is the only place it becomes a string for the
 * wire, logs and metrics ({@code status-503}, {@code timeout-headers}, ...).
 *
 * @param reason  what kind of failure
 * @param status  the HTTP status of the answer that came with the failure, or 0 when none arrived
 * @param message a human explanation (never null)
 */
public record CallFailure(Reason reason, int status, String message) {

    public CallFailure {
        Objects.requireNonNull(reason, "reason");
        Objects.requireNonNull(message, "message");
        if (reason == Reason.STATUS && status < 400) {
            throw new IllegalArgumentException("a status failure needs a status of 400 or more, got " + status);
        }
    }

    /** A failure that came without an answer. */
    public static CallFailure of(Reason reason, String message) {
        return new CallFailure(reason, 0, message);
    }

    /** The destination answered with an error status (400 or more). */
    public static CallFailure status(int status) {
        return new CallFailure(Reason.STATUS, status, "answered " + status);
    }

    /** {@code status-503}, {@code timeout-body}, ...: the stable name shown in answers, logs and metrics. */
    public String label() {
        return label(reason, status);
    }

    /** Whether the destination answered with an error status (rather than failing some other way). */
    public boolean isStatus() {
        return reason == Reason.STATUS;
    }

    /** Whether time ran out: a connect, headers or body timeout, or the deadline itself. */
    public boolean isTimeout() {
        return reason.isTimeout();
    }

    /** The same failure with more said about it ({@code message; note}). */
    public CallFailure withNote(String note) {
        return new CallFailure(reason, status, message + note);
    }

    /**
     * The label of a failure of {@code reason} with {@code status}: {@code status-NNN} for {@link Reason#STATUS},
     * the reason's own label otherwise, {@code ok} for none (null). For a caller that names outcomes the client
     * does not fail, such as dispatch, for which only a 2xx delivers ({@code status-301}).
     */
    public static String label(Reason reason, int status) {
        if (reason == null) {
            return "ok";
        }
        return reason == Reason.STATUS ? "status-" + status : reason.label();
    }

    @Override
    public String toString() {
        return label() + " (" + message + ")";
    }
}
