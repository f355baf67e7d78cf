package dev.weft.dispatch.engine;

import dev.weft.dispatch.config.DispatchConfig;
import dev.weft.dispatch.config.DispatchConfigLoader;
import dev.weft.dispatch.config.EndpointConfig;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class MatcherTest {
    static final DispatchConfig CFG = config();

    static DispatchConfig config() {
        try {
            return DispatchConfigLoader.parse("m.yaml", """
                    source: { bootstrap: "127.0.0.1:9092", topics: [t], group: g, type_pointer: /meta/kind }
                    defaults: { allow_private: true }
                    endpoints:
                      - { id: all, url: "http://127.0.0.1:1/a" }
                      - { id: orders, url: "http://127.0.0.1:1/o", match: { type: [order.created, order.paid] } }
                      - { id: de, url: "http://127.0.0.1:1/d", match: { pointer: /country, equals: [DE, AT] } }
                      - id: de-orders
                        url: "http://127.0.0.1:1/x"
                        match: { type: [order.created], pointer: /country, equals: DE }
                      - { id: seven, url: "http://127.0.0.1:1/s", match: { pointer: /n, equals: "7" } }
                    """);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    final Matcher matcher = new Matcher(CFG.endpoints(), CFG.typePointer());

    static RecordHeaders headers(String type) {
        RecordHeaders h = new RecordHeaders();
        h.add(new RecordHeader("other", "x".getBytes(StandardCharsets.UTF_8)));
        if (type != null) {
            h.add(new RecordHeader("type", type.getBytes(StandardCharsets.UTF_8)));
        }
        return h;
    }

    Matcher.Matched match(String type, String value) {
        return matcher.match(headers(type), value == null ? null : value.getBytes(StandardCharsets.UTF_8));
    }

    static List<String> ids(List<EndpointConfig> es) {
        return es.stream().map(EndpointConfig::id).toList();
    }

    @Test
    void theTypeComesFromTheTypePointerOfAJsonRecord() {
        Matcher.Matched m = match(null, "{\"meta\":{\"kind\":\"order.paid\"},\"country\":\"FR\"}");
        assertThat(ids(m.endpoints())).containsExactly("all", "orders");
        assertThat(m.notJson()).isEmpty();
        assertThat(ids(match(null, "{\"type\":\"order.paid\"}").endpoints()))
                .as("/type is not the configured type_pointer").containsExactly("all");
    }

    @Test
    void aTypeHeaderWinsOverTheJsonTypeAndNeedsNoJson() {
        assertThat(ids(match("order.created", "{\"meta\":{\"kind\":\"user.created\"},\"country\":\"DE\"}").endpoints()))
                .containsExactly("all", "orders", "de", "de-orders");
        assertThat(ids(match("user.created", "{\"meta\":{\"kind\":\"order.created\"}}").endpoints()))
                .containsExactly("all");
        Matcher.Matched notJson = match("order.paid", "not json");
        assertThat(ids(notJson.endpoints())).containsExactly("all", "orders");
        assertThat(ids(notJson.notJson())).as("only the endpoints that need the JSON value")
                .containsExactly("de", "de-orders", "seven");
    }

    @Test
    void aPointerMatchesItsValueAsTextAndOnlyAScalar() {
        assertThat(ids(match(null, "{\"country\":\"AT\"}").endpoints())).containsExactly("all", "de");
        assertThat(ids(match(null, "{\"country\":\"de\"}").endpoints())).as("case matters").containsExactly("all");
        assertThat(ids(match(null, "{\"n\":7}").endpoints())).as("a number as text").containsExactly("all", "seven");
        assertThat(ids(match(null, "{\"n\":7.0}").endpoints())).containsExactly("all");
        assertThat(ids(match(null, "{\"country\":null}").endpoints())).containsExactly("all");
        assertThat(ids(match(null, "{\"country\":[\"DE\"]}").endpoints())).containsExactly("all");
        assertThat(ids(match(null, "{\"country\":{\"code\":\"DE\"}}").endpoints())).containsExactly("all");
        assertThat(ids(match(null, "{}").endpoints())).containsExactly("all");
    }

    @Test
    void typeAndPointerMustBothHold() {
        assertThat(ids(match(null, "{\"meta\":{\"kind\":\"order.created\"},\"country\":\"DE\"}").endpoints()))
                .containsExactly("all", "orders", "de", "de-orders");
        assertThat(ids(match(null, "{\"meta\":{\"kind\":\"order.paid\"},\"country\":\"DE\"}").endpoints()))
                .containsExactly("all", "orders", "de");
        assertThat(ids(match(null, "{\"meta\":{\"kind\":\"order.created\"},\"country\":\"FR\"}").endpoints()))
                .containsExactly("all", "orders");
    }

    @Test
    void aValueThatIsNotJsonMatchesOnlyWhatNeedsNoJson() {
        for (String v : new String[]{null, "", "not json", "{\"open\":", "\u00ff\u00fe"}) {
            Matcher.Matched m = match(null, v);
            assertThat(ids(m.endpoints())).as("value %s", v).containsExactly("all");
            assertThat(ids(m.notJson())).as("value %s", v).containsExactly("orders", "de", "de-orders", "seven");
        }
    }
}
