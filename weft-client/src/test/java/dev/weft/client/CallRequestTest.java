package dev.weft.client;

import dev.weft.http.Headers;
import dev.weft.client.policy.HedgePolicy;
import dev.weft.client.policy.RetryPolicy;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class CallRequestTest {
    @Test
    void aPostWithHeadersBodyAndPolicies() {
        RetryPolicy retry = RetryPolicy.NONE;
        CallRequest r = CallRequest.builder("post", "http://127.0.0.1:9001/orders?x=1")
                .header("X-Id", "7").body("{\"a\":1}", "application/json").retry(retry).build();
        assertThat(r.method()).isEqualTo("POST");
        assertThat(r.uri().getRawQuery()).isEqualTo("x=1");
        assertThat(r.headers().fields()).containsExactly(Map.entry("X-Id", "7"),
                Map.entry("Content-Type", "application/json"));
        assertThat(new String(r.body(), StandardCharsets.UTF_8)).isEqualTo("{\"a\":1}");
        assertThat(r.retry()).isSameAs(retry);
        assertThat(r.hedge()).isNull();
        assertThat(r.destination()).isEqualTo(Destination.of("http://127.0.0.1:9001"));
    }

    /** A method goes on the wire as it is: one that is not a token could split the request in two. */
    @Test
    void aMethodThatIsNotATokenIsRefused() {
        for (String bad : new String[] {"GET /a HTTP/1.1\r\nX-Injected: 1\r\nX", "GE T", "GET\n", "", "G\u00c9T"}) {
            assertThatThrownBy(() -> CallRequest.builder(bad, "http://h/x").build()).as(bad)
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not a token");
        }
        assertThat(CallRequest.builder("propfind", "http://h/x").build().method()).isEqualTo("PROPFIND");
    }

    @Test
    void aUserAgentThatCouldNotGoOnTheWireIsRefusedAtBuild() {
        assertThatThrownBy(() -> Transport.builder().userAgent("weft\r\nX-Injected: 1"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("line break");
        assertThatThrownBy(() -> Transport.builder().userAgent(null)).isInstanceOf(NullPointerException.class);
    }

    @Test
    void aGivenContentTypeWinsOverTheBodysAndNoneIsAddedWithoutABody() {
        CallRequest r = CallRequest.builder("PUT", "http://h/x").header("content-type", "text/plain")
                .body(new byte[] {1}, "application/json").build();
        assertThat(r.headers().fields()).containsExactly(Map.entry("content-type", "text/plain"));
        CallRequest noType = CallRequest.builder("PUT", "http://h/x").body(new byte[] {1}, null).build();
        assertThat(noType.headers().fields()).isEmpty();
        CallRequest get = CallRequest.builder("GET", "http://h/x").build();
        assertThat(get.body()).isNull();
        assertThat(get.headers()).isSameAs(Headers.EMPTY);
    }

    @Test
    void headerReplacesAddHeaderAppends() {
        CallRequest r = CallRequest.builder("GET", "http://h/x")
                .headers(Headers.of("Webhook-Id", "fwd", "Accept", "a"))
                .header("webhook-id", "own").addHeader("Accept", "b").build();
        assertThat(r.headers().fields()).containsExactly(Map.entry("Accept", "a"), Map.entry("webhook-id", "own"),
                Map.entry("Accept", "b"));
    }

    @Test
    void theHedgeAndTheOldFactoriesStillWork() {
        HedgePolicy h = HedgePolicy.after(java.time.Duration.ofMillis(50));
        assertThat(CallRequest.builder("GET", "http://h/x").hedge(h).build().hedge()).isSameAs(h);
        CallRequest post = CallRequest.post("http://h/p", "{}");
        assertThat(post.method()).isEqualTo("POST");
        assertThat(post.body()).hasSize(2);
        assertThat(CallRequest.get("http://h/g").withHeaders(Headers.of("A", "1")).headers().first("a")).isEqualTo("1");
    }

    @Test
    void aRelativeOrMalformedUrlIsRefused() {
        assertThatThrownBy(() -> CallRequest.builder("GET", "/relative").build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("absolute");
        assertThatThrownBy(() -> CallRequest.builder("GET", "http://h/a b")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void tagsAreTypedAndEveryCopyOfTheRequestKeepsThem() {
        CallRequest r = CallRequest.builder("GET", "http://h/x").tag(Integer.class, 7).build();
        assertThat(r.tag(Integer.class)).isEqualTo(7);
        assertThat(r.tag(String.class)).isNull();
        CallRequest copy = r.withHeaders(Headers.of("a", "1")).withRetry(RetryPolicy.NONE).withBody(new byte[1])
                .withTag(String.class, "s");
        assertThat(copy.tag(Integer.class)).isEqualTo(7);
        assertThat(copy.tag(String.class)).isEqualTo("s");
        assertThat(copy.withTag(Integer.class, null).tags()).containsOnlyKeys(String.class);
        assertThat(CallRequest.get("http://h/g").tags()).isEmpty();
        assertThatThrownBy(() -> new CallRequest("GET", java.net.URI.create("http://h/"), null, null, null, null,
                Map.of(Integer.class, "not a number")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("java.lang.Integer");
    }
}
