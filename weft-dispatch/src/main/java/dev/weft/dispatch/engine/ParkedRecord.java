package dev.weft.dispatch.engine;

import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeader;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Weft's own headers on a parked record (a retry or wait topic) and on a dead letter: written and read
 * back here only. Reading is strict: a header of ours that is missing, given twice, empty, not UTF-8 or
 * not the number it should be makes the record {@link Read.Bad} (the dispatcher dead-letters it with the
 * reason), never "due now".
 *
 * @param endpoint  the endpoint id it is parked for
 * @param webhookId the delivery's {@code webhook-id}; sent as an HTTP header, so visible ASCII only
 * @param attempts  attempts already made (0: never tried, parked for room)
 * @param dueMillis when it may be tried again, epoch ms (0: at once)
 * @param status    the last attempt's status or failure, "" when none
 * @param origin    {@code topic/partition/offset} of the record as first consumed; null when not written
 */
public record ParkedRecord(String endpoint, String webhookId, int attempts, long dueMillis, Reason reason,
                           String status, String origin) {
    public static final String ENDPOINT = "weft-endpoint";
    public static final String ATTEMPTS = "weft-attempts";
    public static final String DUE = "weft-due";
    public static final String REASON = "weft-reason";
    public static final String STATUS = "weft-status";
    public static final String ORIGIN = "weft-origin";
    public static final String WEBHOOK_ID = "webhook-id";
    /** Our headers: left out of a record's own headers when it is parked again or dead-lettered. */
    static final List<String> OURS = List.of(ENDPOINT, ATTEMPTS, DUE, REASON, STATUS, ORIGIN, WEBHOOK_ID);
    /**
     * The most attempts a parked record may say it made: one less than the most an endpoint may have (the first
     * and {@link dev.weft.dispatch.config.DispatchConfigLoader#MAX_RETRIES} retries); after its last attempt a
     * delivery is dead-lettered, never parked.
     */
    public static final int MAX_PARKED_ATTEMPTS = dev.weft.dispatch.config.DispatchConfigLoader.MAX_RETRIES;
    /** A dead letter's reason is clipped to this many characters (an exception's message may be long). */
    static final int MAX_REASON_CHARS = 1000;
    private static final Pattern ENDPOINT_ID = Pattern.compile("[A-Za-z0-9_-]{1,64}");
    private static final Pattern VISIBLE_ASCII = Pattern.compile("[\\x21-\\x7e]{1,200}");

    /** Why a delivery was parked. */
    public enum Reason {
        /** Its lane was full: on the endpoint's wait topic. */
        ROOM("room"),
        /** An attempt failed: on the retry topic of the next delay. */
        FAILED("failed");

        private final String text;

        Reason(String text) {
            this.text = text;
        }

        public String text() {
            return text;
        }
    }

    /** What reading a parked record's headers gave. */
    public sealed interface Read {
        record Ok(ParkedRecord parked) implements Read {
        }

        /** @param endpoint the endpoint header when it could be read, else "" */
        record Bad(String endpoint, String why) implements Read {
        }
    }

    public ParkedRecord {
        if (attempts < 0 || dueMillis < 0) {
            throw new IllegalArgumentException("attempts " + attempts + ", due " + dueMillis);
        }
        status = status == null ? "" : status;
    }

    /** The headers of the parked copy: the record's {@code own} headers, then ours. */
    List<Header> headers(List<Header> own) {
        List<Header> h = new ArrayList<>(own.size() + OURS.size());
        h.addAll(own);
        h.add(header(ENDPOINT, endpoint));
        h.add(header(ATTEMPTS, Integer.toString(attempts)));
        h.add(header(REASON, reason.text()));
        h.add(header(STATUS, status));
        h.add(header(ORIGIN, origin == null ? "" : origin));
        h.add(header(WEBHOOK_ID, webhookId));
        h.add(header(DUE, Long.toString(dueMillis)));
        return h;
    }

    /** The headers of a dead letter: the record's {@code own} headers, then ours with a free-text reason and no due. */
    static List<Header> deadLetterHeaders(List<Header> own, String endpoint, String webhookId, int attempts,
                                          String reason, String status, String origin) {
        List<Header> h = new ArrayList<>(own.size() + OURS.size());
        h.addAll(own);
        h.add(header(ENDPOINT, endpoint == null ? "" : endpoint));
        h.add(header(ATTEMPTS, Integer.toString(attempts)));
        h.add(header(REASON, reason == null ? "" : reason.length() <= MAX_REASON_CHARS ? reason
                : reason.substring(0, MAX_REASON_CHARS) + "..."));
        h.add(header(STATUS, status == null ? "" : status));
        h.add(header(ORIGIN, origin == null ? "" : origin));
        h.add(header(WEBHOOK_ID, webhookId == null ? "" : webhookId));
        return h;
    }

    /** Reads the headers of a record of a retry or wait topic. */
    public static Read read(Headers headers) {
        String endpoint = "";
        try {
            endpoint = text(headers, ENDPOINT, true);
            if (!ENDPOINT_ID.matcher(endpoint).matches()) {
                throw new BadHeader(ENDPOINT, "'" + endpoint + "' is not an endpoint id");
            }
            String id = text(headers, WEBHOOK_ID, true);
            if (!VISIBLE_ASCII.matcher(id).matches()) {
                throw new BadHeader(WEBHOOK_ID, "not 1-200 visible ASCII characters");
            }
            long attempts = number(headers, ATTEMPTS, MAX_PARKED_ATTEMPTS);
            long due = number(headers, DUE, Long.MAX_VALUE);
            String reasonText = text(headers, REASON, true);
            Reason reason = null;
            for (Reason r : Reason.values()) {
                if (r.text().equals(reasonText)) {
                    reason = r;
                }
            }
            if (reason == null) {
                throw new BadHeader(REASON, "'" + reasonText + "' is neither room nor failed");
            }
            String status = text(headers, STATUS, false);
            String origin = text(headers, ORIGIN, false);
            return new Read.Ok(new ParkedRecord(endpoint, id, (int) attempts, due, reason, status,
                    origin == null || origin.isEmpty() ? null : origin));
        } catch (BadHeader e) {
            return new Read.Bad(e.header.equals(ENDPOINT) ? "" : endpoint, "bad parking header " + e.header + ": "
                    + e.getMessage());
        }
    }

    private static final class BadHeader extends Exception {
        final String header;

        BadHeader(String header, String why) {
            super(why, null, false, false);
            this.header = header;
        }
    }

    /** The one value of {@code name} as UTF-8; null when absent and not {@code required}. */
    private static String text(Headers headers, String name, boolean required) throws BadHeader {
        byte[] raw = null;
        int n = 0;
        for (Header h : headers.headers(name)) {
            raw = h.value();
            n++;
        }
        if (n == 0) {
            if (required) {
                throw new BadHeader(name, "missing");
            }
            return null;
        }
        if (n > 1) {
            throw new BadHeader(name, "given " + n + " times");
        }
        if (raw == null || (required && raw.length == 0)) {
            throw new BadHeader(name, "empty");
        }
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(raw)).toString();
        } catch (CharacterCodingException e) {
            throw new BadHeader(name, "not UTF-8");
        }
    }

    /** The one value of {@code name}: ASCII decimal digits only (no sign, space or exponent), at most {@code max}. */
    private static long number(Headers headers, String name, long max) throws BadHeader {
        String s = text(headers, name, true);
        if (s.length() > 19) {
            throw new BadHeader(name, "'" + clip(s) + "' is out of range");
        }
        long v = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < '0' || c > '9') {
                throw new BadHeader(name, "'" + clip(s) + "' is " + (c == '-' && i == 0 ? "negative" : "not a decimal number"));
            }
            try {
                v = Math.addExact(Math.multiplyExact(v, 10), c - '0');
            } catch (ArithmeticException e) {
                throw new BadHeader(name, "'" + clip(s) + "' is out of range");
            }
        }
        if (v > max) {
            throw new BadHeader(name, "'" + clip(s) + "' is out of range (at most " + max + ")");
        }
        return v;
    }

    private static String clip(String s) {
        return s.length() <= 40 ? s : s.substring(0, 40) + "...";
    }

    private static Header header(String k, String v) {
        return new RecordHeader(k, v.getBytes(StandardCharsets.UTF_8));
    }
}
