package dev.weft.observe;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A W3C Trace Context {@code traceparent} (https://www.w3.org/TR/trace-context/): a 128-bit trace id, a
 * 64-bit span id and the trace flags. Read strictly, since it comes from the internet: {@link #parse} answers
 * null for anything that is not exactly {@code 00-<32 lower hex>-<16 lower hex>-<2 lower hex>} (or, for a
 * later version, that form followed by nothing or by {@code -}), for an all-zero trace or span id, and for
 * version {@code ff}; the caller then starts a new trace.
 *
 * @param traceHi the trace id's first 64 bits
 * @param traceLo the trace id's last 64 bits
 * @param spanId  the id of the span this traceparent names (the parent of whoever receives it)
 * @param flags   the trace flags; bit 0 is "sampled"
 */
public record TraceParent(long traceHi, long traceLo, long spanId, int flags) {
    /** The header's name. */
    public static final String HEADER = "traceparent";
    /** The vendor-specific companion header, passed on unchanged when it is well formed. */
    public static final String STATE_HEADER = "tracestate";
    /** The longest {@code tracestate} passed on (the specification's limit is 512 characters). */
    public static final int MAX_STATE_LENGTH = 512;

    private static final int LENGTH = 55;

    public TraceParent {
        if ((traceHi | traceLo) == 0 || spanId == 0) {
            throw new IllegalArgumentException("trace and span ids must not be all zeros");
        }
        if (flags < 0 || flags > 0xff) {
            throw new IllegalArgumentException("flags are one byte");
        }
    }

    /** The traceparent in {@code value}, or null when it is absent or malformed. */
    public static TraceParent parse(String value) {
        if (value == null || value.length() < LENGTH) {
            return null;
        }
        int version = hex(value, 0, 2);
        if (version < 0 || version == 0xff) {
            return null;
        }
        if (version == 0 ? value.length() != LENGTH : value.length() > LENGTH && value.charAt(LENGTH) != '-') {
            return null;
        }
        if (value.charAt(2) != '-' || value.charAt(35) != '-' || value.charAt(52) != '-') {
            return null;
        }
        long hi = hexLong(value, 3);
        long lo = hexLong(value, 19);
        long span = hexLong(value, 36);
        int flags = hex(value, 53, 2);
        if (hi == -1 && !allHex(value, 3) || lo == -1 && !allHex(value, 19) || span == -1 && !allHex(value, 36)
                || flags < 0) {
            return null;
        }
        if ((hi | lo) == 0 || span == 0) {
            return null;
        }
        return new TraceParent(hi, lo, span, flags);
    }

    /** A new trace (random ids), with the sampled flag as given. */
    public static TraceParent newTrace(boolean sampled) {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        long hi;
        long lo;
        do {
            hi = r.nextLong();
            lo = r.nextLong();
        } while ((hi | lo) == 0);
        return new TraceParent(hi, lo, newSpanId(), sampled ? 1 : 0);
    }

    /** The same trace and flags with a new span id: what one outgoing call sends. */
    public TraceParent child() {
        return new TraceParent(traceHi, traceLo, newSpanId(), flags);
    }

    public boolean sampled() {
        return (flags & 1) != 0;
    }

    /** The trace id, 32 lower-case hex digits. */
    public String traceId() {
        return traceId(traceHi, traceLo);
    }

    /** The span id, 16 lower-case hex digits. */
    public String spanIdHex() {
        byte[] b = new byte[16];
        hex(spanId, b, 0);
        return new String(b, StandardCharsets.ISO_8859_1);
    }

    /** The header value, version 00. */
    public String header() {
        return header(traceHi, traceLo, spanId, flags);
    }

    /** A version 00 header for these ids and flags (one string, no intermediate ones: a request's calls each make one). */
    public static String header(long traceHi, long traceLo, long spanId, int flags) {
        byte[] b = new byte[LENGTH];
        b[0] = '0';
        b[1] = '0';
        b[2] = '-';
        hex(traceHi, b, 3);
        hex(traceLo, b, 19);
        b[35] = '-';
        hex(spanId, b, 36);
        b[52] = '-';
        b[53] = HEX[(flags >>> 4) & 0xf];
        b[54] = HEX[flags & 0xf];
        return new String(b, StandardCharsets.ISO_8859_1);
    }

    /** The trace id of these two halves, 32 lower-case hex digits. */
    public static String traceId(long traceHi, long traceLo) {
        byte[] b = new byte[32];
        hex(traceHi, b, 0);
        hex(traceLo, b, 16);
        return new String(b, StandardCharsets.ISO_8859_1);
    }

    private static final byte[] HEX = "0123456789abcdef".getBytes(StandardCharsets.ISO_8859_1);

    /** {@code v} as 16 lower-case hex digits at {@code b[at]}. */
    private static void hex(long v, byte[] b, int at) {
        for (int i = 15; i >= 0; i--) {
            b[at + i] = HEX[(int) (v & 0xf)];
            v >>>= 4;
        }
    }

    @Override
    public String toString() {
        return header();
    }

    /**
     * {@code value} when it is a {@code tracestate} to pass on (printable ASCII, at most
     * {@value #MAX_STATE_LENGTH} characters), else null: a bad one is dropped, the traceparent kept.
     */
    public static String cleanState(String value) {
        if (value == null || value.isEmpty() || value.length() > MAX_STATE_LENGTH) {
            return null;
        }
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c < 0x20 || c > 0x7e) {
                return null;
            }
        }
        return value;
    }

    /** A random span id (never 0). */
    public static long newSpanId() {
        long s;
        do {
            s = ThreadLocalRandom.current().nextLong();
        } while (s == 0);
        return s;
    }

    /** Lower-case hex digits only: 0-9, a-f. */
    private static int digit(char c) {
        if (c >= '0' && c <= '9') {
            return c - '0';
        }
        if (c >= 'a' && c <= 'f') {
            return c - 'a' + 10;
        }
        return -1;
    }

    private static int hex(String s, int from, int n) {
        int v = 0;
        for (int i = from; i < from + n; i++) {
            int d = digit(s.charAt(i));
            if (d < 0) {
                return -1;
            }
            v = v << 4 | d;
        }
        return v;
    }

    private static boolean allHex(String s, int from) {
        for (int i = from; i < from + 16; i++) {
            if (digit(s.charAt(i)) < 0) {
                return false;
            }
        }
        return true;
    }

    /** 16 hex digits as a long; -1 both for ffffffffffffffff and for a bad digit (see {@link #allHex}). */
    private static long hexLong(String s, int from) {
        long v = 0;
        for (int i = from; i < from + 16; i++) {
            int d = digit(s.charAt(i));
            if (d < 0) {
                return -1;
            }
            v = v << 4 | d;
        }
        return v;
    }
}
