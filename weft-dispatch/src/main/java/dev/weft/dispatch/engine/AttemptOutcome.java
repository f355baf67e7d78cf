package dev.weft.dispatch.engine;

import dev.weft.client.CallFailure;
import dev.weft.client.CallResult;
import dev.weft.client.Reason;

/**
 * What one delivery attempt came to, as a type from the lane to where it becomes text: the {@link #label()} of
 * the {@code weft.dispatch.attempts} counter and of the attempt log's {@code outcome}, and the {@link #status()}
 * and {@link #reason()} a parked or dead-lettered record carries. Built on the client's {@link CallFailure}: the
 * labels are its labels ({@link CallFailure#label(Reason, int)}), with one rule of dispatch's own: an attempt the
 * endpoint answered is named by the answer's status ({@code status-NNN}), whatever else went wrong, since only a
 * 2xx delivers (a 3xx, which the client takes as success; an answer whose body was too large).
 */
sealed interface AttemptOutcome {
    /** {@code ok}, {@code status-503}, {@code timeout-headers}, {@code target-refused}, ... */
    String label();

    /** What a parked record says of it: the answer's status ({@code 503}), else the {@link #label()}. */
    default String status() {
        return label();
    }

    /** A human reason: the failure's message, else the {@link #label()}. */
    String reason();

    /** What an attempt that called the endpoint came to. */
    static AttemptOutcome of(CallResult r) {
        if (r.status() >= 200 && r.status() < 300 && r.ok()) {
            return new Delivered(r.status());
        }
        return r.status() > 0 ? new Answered(r.status(), r.failure()) : new Failed(r.failure());
    }

    /** A 2xx answer: delivered. */
    record Delivered(int answer) implements AttemptOutcome {
        @Override
        public String label() {
            return "ok";
        }

        @Override
        public String status() {
            return Integer.toString(answer);
        }

        @Override
        public String reason() {
            return label();
        }
    }

    /**
     * The endpoint answered, not with a 2xx: {@code failure} is the client's ({@link Reason#STATUS} for 400 or
     * more, {@link Reason#TOO_LARGE} for a body over the limit), or null for an answer the client took as success.
     */
    record Answered(int answer, CallFailure failure) implements AttemptOutcome {
        @Override
        public String label() {
            return CallFailure.label(Reason.STATUS, answer);
        }

        @Override
        public String status() {
            return Integer.toString(answer);
        }

        @Override
        public String reason() {
            return failure != null ? failure.message() : label();
        }
    }

    /** No answer: the client's failure (a timeout, a refused or reset connection, ...). */
    record Failed(CallFailure failure) implements AttemptOutcome {
        @Override
        public String label() {
            return failure.label();
        }

        @Override
        public String reason() {
            return failure.message();
        }
    }

    /** The target guard refused the endpoint's host before the attempt ({@code allow_private: false}). */
    record TargetRefused(String why) implements AttemptOutcome {
        @Override
        public String label() {
            return "target-refused";
        }

        @Override
        public String reason() {
            return "refused target: " + why;
        }
    }

    /** A bug between the attempt and its parking: the attempt failed with this exception. */
    record InternalError(RuntimeException error) implements AttemptOutcome {
        @Override
        public String label() {
            return "internal-error";
        }

        @Override
        public String reason() {
            return error.toString();
        }
    }
}
