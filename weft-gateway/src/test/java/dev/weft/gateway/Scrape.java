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

    /**
     * The sum of every sample of {@code name} whose labels contain {@code labels} (each label set is a series of its
     * own); fails the test when there is none. A label value may hold braces (a route such as {@code GET /a/{id}}).
     */
    static double sum(String scrape, String name, String labels) {
        double total = 0;
        int series = 0;
        for (String line : scrape.split("\n")) {
            int close = line.lastIndexOf("} ");
            if (line.startsWith(name + "{") && close > 0 && line.substring(0, close).contains(labels)) {
                total += Double.parseDouble(line.substring(close + 2).strip());
                series++;
            }
        }
        assertThat(series).as("series of " + name + " with " + labels + " in\n" + scrape).isPositive();
        return total;
    }
}
