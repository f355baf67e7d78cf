package dev.weft.dispatch.engine;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.Base64;

import static org.assertj.core.api.Assertions.assertThat;

class WebhookSigningTest {
    /** The test vector of the Standard Webhooks spec (and its reference libraries). */
    @Test
    void signsTheStandardWebhooksTestVector() {
        byte[] key = Base64.getDecoder().decode("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
        String sig = WebhookSigning.signature(key, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330L,
                "{\"test\": 2432232314}".getBytes(StandardCharsets.UTF_8));
        assertThat(sig).isEqualTo("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    }

    @Test
    void theWebhookIdIsStablePerRecordAndEndpoint() {
        String id = WebhookSigning.webhookId("orders", 2, 41, "acme");
        assertThat(id).matches("msg_[0-9a-f]{32}").isEqualTo(WebhookSigning.webhookId("orders", 2, 41, "acme"));
        assertThat(id).isNotEqualTo(WebhookSigning.webhookId("orders", 2, 41, "other"))
                .isNotEqualTo(WebhookSigning.webhookId("orders", 2, 42, "acme"))
                .isNotEqualTo(WebhookSigning.webhookId("orders", 1, 41, "acme"));
    }
}
