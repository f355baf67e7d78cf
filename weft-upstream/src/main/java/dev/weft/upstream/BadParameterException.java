package dev.weft.upstream;

/** A query parameter or config value that the simulator cannot use; answered with 400. */
public final class BadParameterException extends IllegalArgumentException {
    private final String parameter;

    public BadParameterException(String parameter, String message) {
        super("bad parameter '" + parameter + "': " + message);
        this.parameter = parameter;
    }

    public String parameter() {
        return parameter;
    }
}
