package dev.weft.dispatch.engine;

/** The dispatcher cannot start: unreachable broker, unknown topic, a port in use. The message says which. */
public final class DispatchException extends Exception {
    public DispatchException(String message, Throwable cause) {
        super(message, cause);
    }
}
