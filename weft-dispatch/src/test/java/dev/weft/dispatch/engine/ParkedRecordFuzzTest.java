package dev.weft.dispatch.engine;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.header.internals.RecordHeaders;

import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Crafted parking headers (any bytes, repeated, missing, numbers at and past every bound): reading never throws,
 * and whatever reads as {@link ParkedRecord.Read.Ok} is within the bounds the dispatcher relies on (attempts
 * within the retry schedule's reach, a due time, an endpoint id, a webhook-id fit for an HTTP header).
 */
class ParkedRecordFuzzTest {
    static final List<String> NAMES = List.of(ParkedRecord.ENDPOINT, ParkedRecord.ATTEMPTS, ParkedRecord.DUE,
            ParkedRecord.REASON, ParkedRecord.STATUS, ParkedRecord.ORIGIN, ParkedRecord.WEBHOOK_ID);

    record Crafted(String name, byte[] value) {
        @Override
        public String toString() {
            return name + "=" + (value == null ? "null" : new String(value, StandardCharsets.ISO_8859_1));
        }
    }

    @Property(tries = 5000)
    void anyHeadersReadAsOkWithinBoundsOrBadWithAReason(@ForAll("headers") List<Crafted> crafted) {
        RecordHeaders h = new RecordHeaders();
        // a valid base that the crafted values replace, add to, or remove from
        ParkedRecordTest.P.headers(List.of()).forEach(x -> {
            if (crafted.stream().noneMatch(c -> c.name().equals(x.key()) || c.name().equals("-" + x.key()))) {
                h.add(x);
            }
        });
        crafted.stream().filter(c -> !c.name().startsWith("-")).forEach(c -> h.add(new RecordHeader(c.name(), c.value())));
        ParkedRecord.Read r = ParkedRecord.read(h);
        switch (r) {
            case ParkedRecord.Read.Ok(ParkedRecord p) -> {
                assertThat(p.attempts()).isBetween(0, ParkedRecord.MAX_PARKED_ATTEMPTS);
                assertThat(p.dueMillis()).isNotNegative();
                assertThat(p.endpoint()).matches("[A-Za-z0-9_-]{1,64}");
                assertThat(p.webhookId()).matches("[\\x21-\\x7e]{1,200}");
                assertThat(p.reason()).isNotNull();
            }
            case ParkedRecord.Read.Bad(String endpoint, String why) -> {
                assertThat(why).startsWith("bad parking header ");
                assertThat(endpoint).matches("|[A-Za-z0-9_-]{1,64}");
            }
        }
    }

    @Provide
    Arbitrary<List<Crafted>> headers() {
        Arbitrary<String> name = Arbitraries.of(NAMES);
        Arbitrary<String> numbers = Arbitraries.oneOf(
                Arbitraries.of("0", "1", "19", "20", "21", "2147483647", "2147483648", "-1", "-0", "00", "",
                        "9223372036854775807", "9223372036854775808", "1e3", " 1", "1 ", "+1", "\u0661"),
                Arbitraries.longs().map(v -> Long.toString(v)),
                Arbitraries.integers().between(0, 40).map(v -> Integer.toString(v)));
        Arbitrary<String> texts = Arbitraries.oneOf(
                Arbitraries.of("room", "failed", "acme", "msg_x", "a/0/1", "ac me", "msg\r\nx: 1", "é"),
                Arbitraries.strings().ofMaxLength(300));
        Arbitrary<byte[]> bytes = Arbitraries.oneOf(
                numbers.map(v -> v.getBytes(StandardCharsets.UTF_8)),
                texts.map(v -> v.getBytes(StandardCharsets.UTF_8)),
                Arbitraries.bytes().array(byte[].class).ofMaxSize(40),
                Arbitraries.just((byte[]) null));
        // a name with a value: set (replacing the base's); twice: given twice; "-name": removed
        Arbitrary<Crafted> one = Arbitraries.oneOf(
                net.jqwik.api.Combinators.combine(name, bytes).as(Crafted::new),
                name.map(n -> new Crafted("-" + n, null)));
        return one.list().ofMinSize(1).ofMaxSize(4);
    }
}
