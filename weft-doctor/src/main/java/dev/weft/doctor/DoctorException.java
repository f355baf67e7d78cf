package dev.weft.doctor;

/**
 * Why the doctor could not do its work, as one line, with the exit code the command should end with:
 * 2 for a target it cannot examine (not a JVM, another user's, JDK older than 21), 1 for a failure while
 * examining it (the target exited while attached).
 */
public final class DoctorException extends Exception {
    private final int exitCode;

    public DoctorException(int exitCode, String message, Throwable cause) {
        super(message, cause);
        this.exitCode = exitCode;
    }

    public int exitCode() {
        return exitCode;
    }
}
