package dev.weft.gateway;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/** Values read out of a {@code /-/metrics} scrape (Prometheus text), for the gateway's integration tests. */
final class Scrape {
    private Scrape() {
    }

    /** The value of the first sample of {@code name}, with any labels; fails the test when there is none. */
    static double value(String scrape, String name) {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name) + "(\\{[^}]*})? ([0-9.eE+-]+)$").matcher(scrape);
        assertThat(m.find()).as(name + " in\n" + scrape).isTrue();
        return Double.parseDouble(m.group(2));
    }
}
