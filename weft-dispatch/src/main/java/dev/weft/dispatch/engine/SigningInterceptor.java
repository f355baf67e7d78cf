package dev.weft.dispatch.engine;

import dev.weft.client.CallInterceptor;
import dev.weft.client.CallRequest;
import dev.weft.client.CallResult;

/**
 * Signs each try of a delivery (Standard Webhooks, {@link WebhookSigning#signature}): an exchange interceptor of
 * an endpoint that has a {@code secret}. It signs what the request carries, {@code webhook-id},
 * {@code webhook-timestamp} and the body, and adds {@code webhook-signature} after them.
 */
final class SigningInterceptor implements CallInterceptor {
    private final byte[] secret;

    SigningInterceptor(byte[] secret) {
        this.secret = secret.clone();
    }

    @Override
    public CallResult intercept(Chain chain) {
        CallRequest r = chain.request();
        String id = r.headers().first("webhook-id");
        String ts = r.headers().first("webhook-timestamp");
        if (id == null || ts == null) {
            throw new IllegalStateException("a delivery to sign needs webhook-id and webhook-timestamp: " + r);
        }
        byte[] body = r.body() == null ? new byte[0] : r.body();
        return chain.proceed(r.withHeaders(r.headers().with("webhook-signature",
                WebhookSigning.signature(secret, id, Long.parseLong(ts), body))));
    }
}
