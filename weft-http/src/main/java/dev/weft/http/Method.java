package dev.weft.http;

/**
 * A request method (RFC 9110 section 9): a case-sensitive token. The standard ones are constants with what the
 * RFC says of them; any other token is a method too (an extension), neither safe nor idempotent.
 *
 * @param name the token, as it goes on the wire
 */
public record Method(String name) {
    public static final Method GET = new Method("GET");
    public static final Method HEAD = new Method("HEAD");
    public static final Method POST = new Method("POST");
    public static final Method PUT = new Method("PUT");
    public static final Method DELETE = new Method("DELETE");
    public static final Method CONNECT = new Method("CONNECT");
    public static final Method OPTIONS = new Method("OPTIONS");
    public static final Method TRACE = new Method("TRACE");
    public static final Method PATCH = new Method("PATCH");

    /** @throws IllegalArgumentException when {@code name} is not a token */
    public Method {
        if (name == null || !Http1.isToken(name)) {
            throw new IllegalArgumentException("method '" + (name == null ? "null" : Http1.printable(name))
                    + "' is not a token");
        }
    }

    /** The method named {@code name}: a constant for a standard one, else a new one (checked to be a token). */
    public static Method of(String name) {
        return switch (name) {
            case "GET" -> GET;
            case "HEAD" -> HEAD;
            case "POST" -> POST;
            case "PUT" -> PUT;
            case "DELETE" -> DELETE;
            case "CONNECT" -> CONNECT;
            case "OPTIONS" -> OPTIONS;
            case "TRACE" -> TRACE;
            case "PATCH" -> PATCH;
            default -> new Method(name);
        };
    }

    /** Whether a request with the method named {@code name} may be sent more than once (RFC 9110 section 9.2.2). */
    public static boolean isIdempotent(String name) {
        return switch (name) {
            case "GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE" -> true;
            default -> false;
        };
    }

    /**
     * Whether the method named {@code name} defines a meaning for enclosed content (POST, PUT, PATCH), so that a
     * request of it says its length even when it has no body (RFC 9110 section 8.6).
     */
    public static boolean definesContent(String name) {
        return switch (name) {
            case "POST", "PUT", "PATCH" -> true;
            default -> false;
        };
    }

    public boolean isIdempotent() {
        return isIdempotent(name);
    }

    public boolean definesContent() {
        return definesContent(name);
    }

    @Override
    public String toString() {
        return name;
    }
}
