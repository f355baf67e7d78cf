package dev.weft.core.http;

/** A request that cannot be read; answer {@link #status()} (400, 413, 431) and close the connection. */
public final class HttpParseException extends Exception {
    private final int status;

    public HttpParseException(int status, String message) {
        super(message, null, false, false);
        this.status = status;
    }

    public int status() {
        return status;
    }
}
