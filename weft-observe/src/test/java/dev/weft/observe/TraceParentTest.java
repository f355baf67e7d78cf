package dev.weft.observe;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** W3C traceparent, read strictly: the table of accepted and refused bytes, and a property over mutations. */
class TraceParentTest {
    private static final String GOOD = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    @Test
    void readsTheSpecificationsExample() {
        TraceParent t = TraceParent.parse(GOOD);
        assertThat(t).isNotNull();
        assertThat(t.traceId()).isEqualTo("4bf92f3577b34da6a3ce929d0e0e4736");
        assertThat(t.spanIdHex()).isEqualTo("00f067aa0ba902b7");
        assertThat(t.sampled()).isTrue();
        assertThat(t.header()).isEqualTo(GOOD);
    }

    @Test
    void allOnesIdsAreValid() {
        String s = "00-ffffffffffffffffffffffffffffffff-ffffffffffffffff-00";
        assertThat(TraceParent.parse(s)).isNotNull().extracting(TraceParent::header).isEqualTo(s);
    }

    @Test
    void aLaterVersionMayCarryMoreFieldsAfterADash() {
        assertThat(TraceParent.parse("cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-the-future-holds"))
                .isNotNull();
        assertThat(TraceParent.parse("cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"))
                .isNotNull();
        assertThat(TraceParent.parse("cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x")).isNull();
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "",
            "00",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0",           // short
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-",         // version 00 has nothing after
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-011",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",          // upper case
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00F067AA0BA902B7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0A",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",          // zero trace id
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",          // zero span id
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",          // version ff
            "0g-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",          // separators
            "00-4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7_01",
            " 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",         // padding
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 ",
            "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",          // a non-hex digit
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902bz-01",
            "00-+bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-\u00e101",
            "00-4bf92f3577b34da6a3ce929d0e0e47360-0f067aa0ba902b7-01",          // field boundaries moved
    })
    void refusesMalformed(String value) {
        assertThat(TraceParent.parse(value)).isNull();
    }

    @Test
    void absentIsNull() {
        assertThat(TraceParent.parse(null)).isNull();
    }

    @Test
    void childKeepsTraceAndFlagsWithANewSpan() {
        TraceParent t = TraceParent.parse(GOOD);
        Set<String> spans = new HashSet<>();
        for (int i = 0; i < 100; i++) {
            TraceParent c = t.child();
            assertThat(c.traceId()).isEqualTo(t.traceId());
            assertThat(c.flags()).isEqualTo(1);
            assertThat(c.spanIdHex()).isNotEqualTo(t.spanIdHex());
            spans.add(c.spanIdHex());
        }
        assertThat(spans).hasSize(100);
    }

    @Test
    void newTracesAreDistinctAndRoundTrip() {
        TraceParent a = TraceParent.newTrace(false);
        TraceParent b = TraceParent.newTrace(true);
        assertThat(a.traceId()).isNotEqualTo(b.traceId());
        assertThat(a.header()).endsWith("-00");
        assertThat(b.header()).endsWith("-01");
        assertThat(TraceParent.parse(a.header())).isEqualTo(a);
    }

    @Test
    void tracestateIsKeptOnlyWhenPrintableAndBounded() {
        assertThat(TraceParent.cleanState("congo=t61rcWkgMzE,rojo=00f067aa0ba902b7"))
                .isEqualTo("congo=t61rcWkgMzE,rojo=00f067aa0ba902b7");
        assertThat(TraceParent.cleanState("a=b\r\nX-Injected: 1")).isNull();
        assertThat(TraceParent.cleanState("a=" + "x".repeat(600))).isNull();
        assertThat(TraceParent.cleanState("")).isNull();
        assertThat(TraceParent.cleanState(null)).isNull();
    }

    // ---- properties ------------------------------------------------------------------------------

    /** Whatever the bytes: no exception, and what is accepted prints back to a valid version-00 header. */
    @Property(tries = 5000)
    void anyTextParsesOrIsRefused(@ForAll("mutated") String value) {
        TraceParent t = TraceParent.parse(value);
        if (t != null) {
            assertThat(t.header()).matches("00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}");
            assertThat(t.traceId()).isNotEqualTo("0".repeat(32));
            assertThat(t.spanIdHex()).isNotEqualTo("0".repeat(16));
            assertThat(TraceParent.parse(t.header())).isEqualTo(t);
            if (value.startsWith("00")) {
                assertThat(value).isEqualTo(t.header()); // version 00: exactly one spelling
            }
        }
    }

    /** Every well-formed value is accepted and printed back exactly. */
    @Property(tries = 2000)
    void wellFormedRoundTrips(@ForAll("wellFormed") String value) {
        TraceParent t = TraceParent.parse(value);
        assertThat(t).isNotNull();
        assertThat(t.header()).isEqualTo(value);
    }

    @Provide
    Arbitrary<String> wellFormed() {
        Arbitrary<String> hex32 = Arbitraries.strings().withChars("0123456789abcdef").ofLength(32)
                .filter(s -> !s.equals("0".repeat(32)));
        Arbitrary<String> hex16 = Arbitraries.strings().withChars("0123456789abcdef").ofLength(16)
                .filter(s -> !s.equals("0".repeat(16)));
        Arbitrary<String> hex2 = Arbitraries.strings().withChars("0123456789abcdef").ofLength(2);
        return net.jqwik.api.Combinators.combine(hex32, hex16, hex2).as((a, b, c) -> "00-" + a + "-" + b + "-" + c);
    }

    @Provide
    Arbitrary<String> mutated() {
        Arbitrary<String> base = Arbitraries.oneOf(wellFormed(), Arbitraries.just(GOOD));
        Arbitrary<Integer> pos = Arbitraries.integers().between(0, 60);
        Arbitrary<Character> ch = Arbitraries.oneOf(Arbitraries.chars().all(),
                Arbitraries.of('-', '0', 'f', 'F', 'g', ' ', '\u0000', '\u00e9'));
        Arbitrary<String> oneEdit = net.jqwik.api.Combinators.combine(base, pos, ch, Arbitraries.integers().between(0, 2))
                .as((s, p, c, kind) -> {
                    int i = Math.min(p, s.length());
                    return switch (kind) {
                        case 0 -> s.substring(0, i) + c + s.substring(i);                       // insert
                        case 1 -> i < s.length() ? s.substring(0, i) + s.substring(i + 1) : s;  // delete
                        default -> i < s.length() ? s.substring(0, i) + c + s.substring(i + 1) : s + c; // replace
                    };
                });
        return Arbitraries.oneOf(oneEdit, Arbitraries.strings().ofMaxLength(80),
                Arbitraries.strings().withChars("0123456789abcdefABCDEF-").ofMinLength(50).ofMaxLength(60));
    }
}
