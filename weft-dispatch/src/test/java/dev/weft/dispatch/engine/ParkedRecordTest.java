package dev.weft.dispatch.engine;

import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class ParkedRecordTest {
    static final ParkedRecord P = new ParkedRecord("acme", "msg_0123456789abcdef0123456789abcdef", 3, 1_700_000_000_123L,
            ParkedRecord.Reason.FAILED, "503", "events/2/41");

    static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** P's headers with {@code name} replaced by the given raw values (none: missing; two: duplicated). */
    static RecordHeaders with(String name, byte[]... values) {
        RecordHeaders h = new RecordHeaders();
        for (Header x : P.headers(List.of(new RecordHeader("content-type", b("application/json"))))) {
            if (!x.key().equals(name)) {
                h.add(x);
            }
        }
        for (byte[] v : values) {
            h.add(new RecordHeader(name, v));
        }
        return h;
    }

    @Test
    void whatIsWrittenReadsBack() {
        RecordHeaders h = new RecordHeaders();
        P.headers(List.of(new RecordHeader("content-type", b("text/plain")))).forEach(h::add);
        assertThat(ParkedRecord.read(h)).isEqualTo(new ParkedRecord.Read.Ok(P));
        assertThat(h.lastHeader("content-type").value()).isEqualTo(b("text/plain"));
        ParkedRecord room = new ParkedRecord("a", "msg_x", 0, 0, ParkedRecord.Reason.ROOM, "", null);
        RecordHeaders r = new RecordHeaders();
        room.headers(List.of()).forEach(r::add);
        assertThat(ParkedRecord.read(r)).as("due 0 is due now; no origin written reads as none")
                .isEqualTo(new ParkedRecord.Read.Ok(room));
    }

    record Bad(String header, byte[][] values, String why) {
        static Bad of(String header, String why, String... values) {
            byte[][] raw = new byte[values.length][];
            for (int i = 0; i < values.length; i++) {
                raw[i] = values[i] == null ? null : b(values[i]);
            }
            return new Bad(header, raw, why);
        }
    }

    /** A bad header of ours dead-letters the record with the reason; it is never read as "due now". */
    @Test
    void aBadHeaderIsBadWithItsReason() {
        List<Bad> table = List.of(
                Bad.of(ParkedRecord.DUE, "missing"),
                Bad.of(ParkedRecord.DUE, "empty", ""),
                Bad.of(ParkedRecord.DUE, "empty", (String) null),
                Bad.of(ParkedRecord.DUE, "given 2 times", "1", "2"),
                Bad.of(ParkedRecord.DUE, "not a decimal number", "soon"),
                Bad.of(ParkedRecord.DUE, "not a decimal number", "12a"),
                Bad.of(ParkedRecord.DUE, "not a decimal number", " 12"),
                Bad.of(ParkedRecord.DUE, "not a decimal number", "12 "),
                Bad.of(ParkedRecord.DUE, "not a decimal number", "+12"),
                Bad.of(ParkedRecord.DUE, "not a decimal number", "1.5"),
                Bad.of(ParkedRecord.DUE, "not a decimal number", "1e3"),
                Bad.of(ParkedRecord.DUE, "not a decimal number", "0x10"),
                Bad.of(ParkedRecord.DUE, "not a decimal number", "\u0661\u0662"), // Arabic-Indic digits
                Bad.of(ParkedRecord.DUE, "negative", "-1"),
                Bad.of(ParkedRecord.DUE, "out of range", "9223372036854775808"),
                Bad.of(ParkedRecord.DUE, "out of range", "99999999999999999999"),
                Bad.of(ParkedRecord.DUE, "out of range", "1".repeat(400)),
                Bad.of(ParkedRecord.ATTEMPTS, "missing"),
                Bad.of(ParkedRecord.ATTEMPTS, "empty", ""),
                Bad.of(ParkedRecord.ATTEMPTS, "negative", "-3"),
                Bad.of(ParkedRecord.ATTEMPTS, "out of range", "2147483648"),
                Bad.of(ParkedRecord.ATTEMPTS, "'2147483647' is out of range (at most 20)", "2147483647"),
                Bad.of(ParkedRecord.ATTEMPTS, "out of range (at most 20)", "21"),
                Bad.of(ParkedRecord.ATTEMPTS, "given 2 times", "3", "3"),
                Bad.of(ParkedRecord.ATTEMPTS, "not a decimal number", "three"),
                Bad.of(ParkedRecord.ENDPOINT, "missing"),
                Bad.of(ParkedRecord.ENDPOINT, "empty", ""),
                Bad.of(ParkedRecord.ENDPOINT, "given 2 times", "acme", "other"),
                Bad.of(ParkedRecord.ENDPOINT, "is not an endpoint id", "ac me"),
                Bad.of(ParkedRecord.WEBHOOK_ID, "missing"),
                Bad.of(ParkedRecord.WEBHOOK_ID, "empty", ""),
                Bad.of(ParkedRecord.WEBHOOK_ID, "visible ASCII", "msg_1\r\nx-injected: 1"),
                Bad.of(ParkedRecord.WEBHOOK_ID, "given 2 times", "msg_a", "msg_b"),
                Bad.of(ParkedRecord.REASON, "missing"),
                Bad.of(ParkedRecord.REASON, "neither room nor failed", "later"),
                Bad.of(ParkedRecord.STATUS, "given 2 times", "500", "503"),
                Bad.of(ParkedRecord.ORIGIN, "given 2 times", "a/0/1", "a/0/2"));
        for (Bad bad : table) {
            ParkedRecord.Read r = ParkedRecord.read(with(bad.header(), bad.values()));
            assertThat(r).as("%s", bad).isInstanceOf(ParkedRecord.Read.Bad.class);
            ParkedRecord.Read.Bad b = (ParkedRecord.Read.Bad) r;
            assertThat(b.why()).as("%s", bad).startsWith("bad parking header " + bad.header() + ": ")
                    .contains(bad.why());
            assertThat(b.endpoint()).as("%s", bad).isEqualTo(bad.header().equals(ParkedRecord.ENDPOINT) ? "" : "acme");
        }
    }

    @Test
    void bytesThatAreNotUtf8AreBad() {
        ParkedRecord.Read r = ParkedRecord.read(with(ParkedRecord.DUE, new byte[]{(byte) 0xff, '1'}));
        assertThat(r).isEqualTo(new ParkedRecord.Read.Bad("acme", "bad parking header weft-due: not UTF-8"));
    }

    @Test
    void optionalHeadersMayBeMissingOrEmpty() {
        assertThat(ParkedRecord.read(with(ParkedRecord.STATUS))).isInstanceOf(ParkedRecord.Read.Ok.class);
        assertThat(ParkedRecord.read(with(ParkedRecord.ORIGIN, b("")))).isEqualTo(new ParkedRecord.Read.Ok(
                new ParkedRecord(P.endpoint(), P.webhookId(), P.attempts(), P.dueMillis(), P.reason(), P.status(), null)));
        assertThat(ParkedRecord.read(with(ParkedRecord.DUE, b("9223372036854775807"))))
                .as("the largest long is a (far) due time, not an error").isInstanceOf(ParkedRecord.Read.Ok.class);
    }
}
