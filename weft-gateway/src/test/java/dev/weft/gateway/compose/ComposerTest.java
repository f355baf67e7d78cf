package dev.weft.gateway.compose;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

/** Which bodies the answer may copy as sent: exactly one strict JSON value, nothing else. */
class ComposerTest {
    private static boolean one(String s) {
        return Composer.isOneJsonValue(s.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void oneJsonValueWithOptionalSurroundingWhitespace() {
        assertThat(one("{\"a\":[1,2.50,{\"b\":null}],\"c\":\"\\u00e9\\n\"}")).isTrue();
        assertThat(one(" \r\n\t[true,false] \n")).isTrue();
        assertThat(one("\"text\"")).isTrue();
        assertThat(one("-0.5e3")).isTrue();
        assertThat(one("null")).isTrue();
    }

    @Test
    void anythingElseIsNotCopied() {
        assertThat(one("")).isFalse();
        assertThat(one("   ")).isFalse();
        assertThat(one("{\"a\":1} {\"a\":2}")).as("two values").isFalse();
        assertThat(one("{\"a\":1} junk")).as("trailing data").isFalse();
        assertThat(one("1 2")).as("two scalars").isFalse();
        assertThat(one("{\"a\":1")).as("cut short").isFalse();
        assertThat(one("{\"a\":1}}")).as("one brace too many").isFalse();
        assertThat(one("{'a':1}")).as("single quotes").isFalse();
        assertThat(one("{\"a\":1 /* c */}")).as("comment").isFalse();
        assertThat(one("[NaN]")).isFalse();
        assertThat(one("[01]")).as("leading zero").isFalse();
        assertThat(one("\"bad \\x escape\"")).isFalse();
        assertThat(one("hello")).isFalse();
        assertThat(Composer.isOneJsonValue(new byte[]{'"', (byte) 0xC3, '"'})).as("broken UTF-8").isFalse();
        assertThat(Composer.isOneJsonValue(new byte[]{(byte) 0xEF, (byte) 0xBB, (byte) 0xBF, '1'}))
                .as("a byte order mark").isFalse();
        assertThat(Composer.isOneJsonValue(new byte[]{'"', (byte) 0xC0, (byte) 0xA2, '"'}))
                .as("an overlong quote").isFalse();
        assertThat(Composer.isOneJsonValue(new byte[]{'{', '"', 'a', '"', ':', '"', (byte) 0xC0, (byte) 0xA2, '"', '}'}))
                .as("an overlong quote in a member").isFalse();
        assertThat(Composer.isOneJsonValue(new byte[]{'"', (byte) 0xF5, (byte) 0x80, (byte) 0x80, (byte) 0x80, '"'}))
                .as("above U+10FFFF").isFalse();
        assertThat(Composer.isOneJsonValue(new byte[]{'"', (byte) 0xED, (byte) 0xA0, (byte) 0x80, '"'}))
                .as("a surrogate").isFalse();
        assertThat(Composer.isOneJsonValue("\"caf\u00e9 \uD83D\uDE00\"".getBytes(StandardCharsets.UTF_8)))
                .as("well-formed UTF-8").isTrue();
    }

    /**
     * {@code status_from} passes a call's status on, an error status too, but not one outside 100-599 (RFC 9110
     * section 15: not HTTP's, read as a 5xx): that is a 502 (before: 999 went out as 999).
     */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.CsvSource({"201, 201", "404, 404", "599, 599", "600, 502", "999, 502"})
    void statusFromPassesOnlyAnHttpStatus(int backend, int answered) {
        dev.weft.gateway.plan.CallSpec call = new dev.weft.gateway.plan.CallSpec("a", "GET",
                dev.weft.gateway.plan.Template.parse("http://127.0.0.1:9/a"), java.util.Map.of(), null,
                java.util.Set.of(), null, 16, null, false, null, null, java.util.List.of(), java.util.List.of(), null,
                "test:1:1");
        dev.weft.gateway.plan.RoutePlan plan = new dev.weft.gateway.plan.RoutePlan("GET",
                dev.weft.gateway.plan.PathPattern.parse("/a"), java.time.Duration.ofSeconds(1), java.util.List.of(),
                java.util.List.of(call), "a", false, "test:1:1");
        byte[] body = "{\"k\":1}".getBytes(StandardCharsets.UTF_8);
        dev.weft.gateway.plan.CallOutcome outcome = backend < 400
                ? new dev.weft.gateway.plan.CallOutcome("a", backend, body, null, null, 0, 1)
                : new dev.weft.gateway.plan.CallOutcome("a", backend, body, null,
                new dev.weft.gateway.plan.Failure.Call(dev.weft.client.CallFailure.status(backend)), 0, 1);
        assertThat(Composer.compose(plan, java.util.Map.of("a", outcome), false).status()).isEqualTo(answered);
    }
}
