package dev.weft.dispatch.engine;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.HexFormat;

/** Standard Webhooks ids and signatures (https://www.standardwebhooks.com). */
public final class WebhookSigning {
    private WebhookSigning() {
    }

    /**
     * The {@code webhook-id} of one (record, endpoint) pair: {@code msg_} + 32 hex digits of
     * SHA-256(topic/partition/offset/endpoint). The same across retries, restarts and instances.
     */
    public static String webhookId(String topic, int partition, long offset, String endpointId) {
        try {
            byte[] h = MessageDigest.getInstance("SHA-256").digest((topic + "/" + partition + "/" + offset + "/"
                    + endpointId).getBytes(StandardCharsets.UTF_8));
            return "msg_" + HexFormat.of().formatHex(h, 0, 16);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    /** {@code v1,} + base64 HMAC-SHA256 of {@code id.timestamp.body} with {@code key}. */
    public static String signature(byte[] key, String id, long timestampSeconds, byte[] body) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            mac.update((id + "." + timestampSeconds + ".").getBytes(StandardCharsets.UTF_8));
            mac.update(body);
            return "v1," + Base64.getEncoder().encodeToString(mac.doFinal());
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }
}
