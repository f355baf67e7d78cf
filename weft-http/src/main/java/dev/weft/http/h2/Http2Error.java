package dev.weft.http.h2;

/** HTTP/2 error codes (RFC 9113 section 7). */
public enum Http2Error {
    NO_ERROR(0x0),
    PROTOCOL_ERROR(0x1),
    INTERNAL_ERROR(0x2),
    FLOW_CONTROL_ERROR(0x3),
    SETTINGS_TIMEOUT(0x4),
    STREAM_CLOSED(0x5),
    FRAME_SIZE_ERROR(0x6),
    REFUSED_STREAM(0x7),
    CANCEL(0x8),
    COMPRESSION_ERROR(0x9),
    CONNECT_ERROR(0xa),
    ENHANCE_YOUR_CALM(0xb),
    INADEQUATE_SECURITY(0xc),
    HTTP_1_1_REQUIRED(0xd);

    private final int code;

    Http2Error(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }

    /** The error of {@code code}; an unknown code is treated as INTERNAL_ERROR, as RFC 9113 section 7 allows. */
    public static Http2Error of(int code) {
        for (Http2Error e : values()) {
            if (e.code == code) {
                return e;
            }
        }
        return INTERNAL_ERROR;
    }
}
