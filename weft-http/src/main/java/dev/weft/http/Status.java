package dev.weft.http;

import java.nio.charset.StandardCharsets;

/**
 * A response's status code (100-999) and the reason phrase Weft writes after it. One instance a code, made once, with
 * its HTTP/1.1 status line ready as bytes, so an answer's status costs the writer a copy and no allocation.
 *
 * <p>The reason phrases are part of the bytes on the wire (a compatibility contract): a code this class does not name
 * is written with the phrase {@code Status}, as it always was (RFC 9112 section 4: a client ignores the phrase).
 */
public final class Status {
    /** The phrase of a code this class does not name. */
    static final String UNNAMED = "Status";
    private static final Status[] ALL = new Status[1000];

    static {
        for (int c = 100; c < 1000; c++) {
            ALL[c] = new Status(c);
        }
    }

    public static final Status OK = ALL[200];
    public static final Status CREATED = ALL[201];
    public static final Status ACCEPTED = ALL[202];
    public static final Status NO_CONTENT = ALL[204];
    public static final Status BAD_REQUEST = ALL[400];
    public static final Status NOT_FOUND = ALL[404];
    public static final Status METHOD_NOT_ALLOWED = ALL[405];
    public static final Status GONE = ALL[410];
    public static final Status CONTENT_TOO_LARGE = ALL[413];
    public static final Status URI_TOO_LONG = ALL[414];
    public static final Status TOO_MANY_REQUESTS = ALL[429];
    public static final Status REQUEST_HEADER_FIELDS_TOO_LARGE = ALL[431];
    public static final Status INTERNAL_SERVER_ERROR = ALL[500];
    public static final Status NOT_IMPLEMENTED = ALL[501];
    public static final Status BAD_GATEWAY = ALL[502];
    public static final Status SERVICE_UNAVAILABLE = ALL[503];
    public static final Status GATEWAY_TIMEOUT = ALL[504];
    public static final Status HTTP_VERSION_NOT_SUPPORTED = ALL[505];

    private final int code;
    private final String reason;
    /** {@code HTTP/1.1 nnn Reason\r\n}. */
    private final byte[] http1Line;

    private Status(int code) {
        this.code = code;
        this.reason = phrase(code);
        this.http1Line = ("HTTP/1.1 " + code + " " + reason + "\r\n").getBytes(StandardCharsets.US_ASCII);
    }

    /**
     * The status of {@code code}.
     *
     * @throws IllegalArgumentException when it is not three digits (100-999)
     */
    public static Status of(int code) {
        if (code < 100 || code > 999) {
            throw new IllegalArgumentException("status " + code + " is not three digits");
        }
        return ALL[code];
    }

    public int code() {
        return code;
    }

    /** The reason phrase written after the code ({@code Status} for a code this class does not name). */
    public String reason() {
        return reason;
    }

    /** 1xx: an interim answer; the final one follows. */
    public boolean isInformational() {
        return code < 200;
    }

    /** 4xx or 5xx. */
    public boolean isError() {
        return code >= 400;
    }

    /** The status line as the HTTP/1.1 writer copies it (do not modify). */
    byte[] http1Line() {
        return http1Line;
    }

    private static String phrase(int code) {
        return switch (code) {
            case 200 -> "OK";
            case 201 -> "Created";
            case 202 -> "Accepted";
            case 204 -> "No Content";
            case 400 -> "Bad Request";
            case 404 -> "Not Found";
            case 405 -> "Method Not Allowed";
            case 410 -> "Gone";
            case 413 -> "Content Too Large";
            case 414 -> "URI Too Long";
            case 429 -> "Too Many Requests";
            case 431 -> "Request Header Fields Too Large";
            case 500 -> "Internal Server Error";
            case 501 -> "Not Implemented";
            case 502 -> "Bad Gateway";
            case 503 -> "Service Unavailable";
            case 504 -> "Gateway Timeout";
            case 505 -> "HTTP Version Not Supported";
            default -> UNNAMED;
        };
    }

    @Override
    public String toString() {
        return code + " " + reason;
    }
}
