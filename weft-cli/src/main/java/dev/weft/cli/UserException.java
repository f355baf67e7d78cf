package dev.weft.cli;

/** A failure the user can act on: printed as one line (per problem), no stack trace unless --verbose. */
public final class UserException extends RuntimeException {
    private final int exitCode;

    public UserException(String message) {
        this(message, null, 1);
    }

    public UserException(String message, Throwable cause) {
        this(message, cause, 1);
    }

    public UserException(String message, Throwable cause, int exitCode) {
        super(message, cause);
        this.exitCode = exitCode;
    }

    public int exitCode() {
        return exitCode;
    }
}
