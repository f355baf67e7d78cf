package dev.weft.client.policy;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

class RetryAfterTest {
    static final Instant NOW = Instant.parse("2015-10-21T07:27:00Z");
    static final Duration MAX = Duration.ofHours(24);

    static Optional<Duration> parse(String v) {
        return RetryAfter.parse(v, NOW, MAX);
    }

    @Test
    void deltaSeconds() {
        assertThat(parse("120")).contains(Duration.ofSeconds(120));
        assertThat(parse("0")).contains(Duration.ZERO);
        assertThat(parse(" 5 ")).as("surrounding whitespace is not part of the value").contains(Duration.ofSeconds(5));
        assertThat(parse("007")).contains(Duration.ofSeconds(7));
    }

    @Test
    void aLongWaitIsBounded() {
        assertThat(parse("86401")).contains(MAX);
        assertThat(parse("99999999999999999999999")).as("more than a long").contains(MAX);
        assertThat(RetryAfter.parse("30", NOW, Duration.ofSeconds(10))).contains(Duration.ofSeconds(10));
        assertThat(parse("Fri, 01 Jan 2100 00:00:00 GMT")).contains(MAX);
    }

    @Test
    void theThreeFormsOfAnHttpDate() {
        assertThat(parse("Wed, 21 Oct 2015 07:28:00 GMT")).contains(Duration.ofSeconds(60));
        assertThat(parse("Wednesday, 21-Oct-15 07:28:00 GMT")).contains(Duration.ofSeconds(60));
        assertThat(parse("Wed Oct 21 07:28:00 2015")).contains(Duration.ofSeconds(60));
        assertThat(parse("Wed Oct  7 07:27:00 2015")).as("asctime pads the day with a space").isPresent();
    }

    @Test
    void aDateInThePastIsNoWait() {
        assertThat(parse("Wed, 21 Oct 2015 07:26:00 GMT")).contains(Duration.ZERO);
        assertThat(parse("Thu, 01 Jan 1970 00:00:00 GMT")).contains(Duration.ZERO);
    }

    @Test
    void aBadValueIsEmpty() {
        for (String v : new String[]{null, "", "   ", "-1", "+5", "1.5", "1e3", "5s", "1 2", "0x10", "\u0661\u0662",
                "soon", "Wed, 32 Oct 2015 07:28:00 GMT", "Wed, 21 Oct 2015 25:28:00 GMT",
                "Wed, 21 Oct 2015 07:28:00 +0200", "Wed, 21 Oct 2015 07:28:00", "2015-10-21T07:28:00Z",
                "Thu, 21 Oct 2015 07:28:00 GMT"}) {
            assertThat(parse(v)).as("'%s'", v).isEmpty();
        }
    }
}
