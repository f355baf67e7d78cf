package dev.weft.gateway.plan;

import dev.weft.client.CallRequest;
import dev.weft.client.CallResult;
import dev.weft.http.Headers;
import dev.weft.client.Transport;
import dev.weft.core.Deadline;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Makes the backend call of a {@link ProxyRoute} through the {@link Transport}, so that it gets the destination's
 * deadline, breaker, bulkhead, hedge and retry (the retry policy itself keeps POST and PATCH to one attempt
 * unless {@code non_idempotent} is set). Hop-by-hop fields are removed both ways (RFC 9110 section 7.6.1).
 */
public final class Relay {
    /**
     * Fields that describe one connection, never the message: not relayed in either direction. {@code te} is one
     * too; {@link #call} says {@code TE: trailers} again to the backend when an HTTP/2 client said it (gRPC). {@code host}
     * and {@code content-length} are written again by the client for the backend's URL and the body it sends.
     * {@code expect: 100-continue} was met by the gateway's server, which said 100 when the body was first read.
     */
    private static final Set<String> HOP_BY_HOP = Set.of("connection", "keep-alive", "te", "trailer",
            "transfer-encoding", "upgrade", "http2-settings", "host", "content-length", "expect");

    private final Transport transport;

    public Relay(Transport transport) {
        this.transport = transport;
    }

    /**
     * What the gateway knows about the inbound request besides its head.
     *
     * @param bodyStream null, or the request's body as it comes (a streamed gRPC request; {@code body} is empty)
     */
    public record Inbound(String method, String rawPath, String rawQuery, Headers headers,
                          byte[] body, InetSocketAddress remote, boolean tls,
                          dev.weft.server.BodySource bodyStream) {
    }

    /**
     * A request body at most this large is held whole, so that its call may be retried or hedged; a larger one, or one
     * of no declared length, streams ({@link #isUpload}).
     */
    public static final long HELD_BODY_BYTES = 64 * 1024;

    /**
     * Whether a request is an upload whose body streams to the backend: a POST, PUT or PATCH whose
     * {@code content-length} is over {@link #HELD_BODY_BYTES} or absent (an HTTP/1.1 chunked body; over HTTP/2 a body
     * with no length).
     */
    public static boolean isUpload(String method, Headers headers) {
        if (!dev.weft.http.Method.definesContent(method)) {
            return false;
        }
        long n = declaredLength(headers);
        return n < 0 || n > HELD_BODY_BYTES;
    }

    /**
     * The body's length as {@code content-length} declares it: -1 when absent or not one value of digits (the server
     * that read the head refused a malformed one already; a chunked HTTP/1.1 body has none).
     */
    public static long declaredLength(Headers headers) {
        String v = headers.joined("content-length"); // two fields join with a comma: not one value
        if (v == null || v.isEmpty() || v.length() > 18) {
            return -1;
        }
        for (int i = 0; i < v.length(); i++) {
            if (v.charAt(i) < '0' || v.charAt(i) > '9') {
                return -1;
            }
        }
        return Long.parseLong(v);
    }

    /** Whether {@code headers} say gRPC ({@code content-type: application/grpc...}). */
    public static boolean isGrpc(Headers headers) {
        return isGrpcType(headers.first("content-type"));
    }

    /** Whether a content-type is gRPC's ({@code application/grpc}, {@code application/grpc+proto}, ...). */
    static boolean isGrpcType(String contentType) {
        return contentType != null && contentType.regionMatches(true, 0, "application/grpc", 0, 16);
    }

    /** Calls the backend; blocks until its answer, a failure or the deadline. Never throws for network failures. */
    public CallResult call(ProxyRoute route, Inbound in, Deadline deadline) {
        return transport.call(request(route, in).build(), deadline);
    }

    /**
     * Whether the answer to {@code in} may stream (docs/gateway.md, Proxy routes): a request for gRPC
     * ({@code content-type: application/grpc...}) or for server-sent events ({@code accept: text/event-stream}), that
     * the server can answer as it comes ({@code ServerRequest.streamable()}: not HTTP/1.0, not HEAD; the caller asks).
     * It streams only if the backend's answer says it is one of those ({@link RelayStream#head}); the call is neither
     * retried nor hedged either way.
     */
    public static boolean streams(Inbound in) {
        return isGrpc(in.headers()) || in.headers().lists("accept", "text/event-stream");
    }

    /**
     * Starts the backend call of a streamed answer on a thread of its own, its answer going into {@code pipe}; the
     * caller then waits for {@link RelayStream#awaitHead}.
     */
    public void stream(ProxyRoute route, Inbound in, Deadline deadline, RelayStream pipe) {
        CallRequest request = request(route, in).tag(dev.weft.client.AnswerSink.class, pipe).build();
        pipe.start(() -> transport.call(request, deadline));
    }

    private CallRequest.Builder request(ProxyRoute route, Inbound in) {
        CallRequest.Builder b = CallRequest.builder(in.method(), route.backendUri(in.rawPath(), in.rawQuery()));
        Headers passed = endToEnd(in.headers());
        for (Map.Entry<String, String> f : passed) {
            b.addHeader(f.getKey(), f.getValue());
        }
        if (takesTrailers(in.headers())) {
            // the client takes trailers (an HTTP/1.1 one in its chunked answer); weft-client sends it over HTTP/2 only
            b.header("TE", "trailers");
        }
        if (route.xForwarded()) {
            String prior = passed.joined("x-forwarded-for"); // none when a Connection field named it: hop-by-hop
            String client = in.remote().getAddress().getHostAddress();
            b.header("X-Forwarded-For", prior == null ? client : prior + ", " + client);
            b.header("X-Forwarded-Proto", in.tls() ? "https" : "http");
            String host = in.headers().first("host");
            if (host != null) {
                b.header("X-Forwarded-Host", host);
            }
        }
        if (route.via() != null) {
            String prior = passed.joined("via");
            String mine = "1.1 " + route.via();
            b.header("Via", prior == null ? mine : prior + ", " + mine);
        }
        if (in.bodyStream() != null) {
            dev.weft.server.BodySource source = in.bodyStream();
            long length = declaredLength(in.headers()); // the client sends no more nor fewer (its server checks)
            b.tag(dev.weft.client.RequestStream.class, new dev.weft.client.RequestStream() {
                @Override
                public byte[] next() throws java.io.IOException, InterruptedException {
                    return source.next();
                }

                @Override
                public void cancel() {
                    source.cancel();
                }

                @Override
                public long length() {
                    return length;
                }
            });
        } else if (in.body() != null && in.body().length > 0) {
            b.body(in.body(), null);
        }
        if (route.retry() != null) {
            b.retry(route.retry());
        }
        if (route.hedge() != null) {
            b.hedge(route.hedge());
        }
        return b;
    }

    /** Whether the client's {@code TE} lists {@code trailers} (RFC 9110 section 10.1.4): it takes trailer fields. */
    public static boolean takesTrailers(Headers fields) {
        return fields.lists("te", "trailers");
    }

    /**
     * {@code fields} less the hop-by-hop ones: the fixed set, {@code Proxy-*}, and every field that a
     * {@code Connection} field names.
     */
    public static Headers endToEnd(Headers fields) {
        Set<String> named = new HashSet<>();
        for (Map.Entry<String, String> f : fields) {
            if (f.getKey().equalsIgnoreCase("connection")) {
                for (String t : f.getValue().split(",")) {
                    named.add(t.strip().toLowerCase(Locale.ROOT));
                }
            }
        }
        List<Map.Entry<String, String>> out = new ArrayList<>(fields.size());
        for (Map.Entry<String, String> f : fields) {
            String n = f.getKey().toLowerCase(Locale.ROOT);
            if (!HOP_BY_HOP.contains(n) && !n.startsWith("proxy-") && !named.contains(n)) {
                out.add(f);
            }
        }
        return Headers.of(out);
    }
}
