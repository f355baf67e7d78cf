package dev.weft.gateway.observe;

import dev.weft.client.Attempt;
import dev.weft.client.CallResult;

import java.util.List;
import java.util.Map;

/**
 * The gateway's spans as OTLP protobuf (opentelemetry-proto v1, {@code trace.proto}): each span is written when
 * it ends, on the request's thread, as the content of one {@code Span} message ({@link #serverSpan},
 * {@link #callSpan}); {@link #request} puts a batch of them into one {@code ExportTraceServiceRequest} under the
 * gateway's resource and scope, copying their bytes. Fields in number order, proto3 defaults left out, as the
 * OpenTelemetry SDK's marshaler writes them. Why the gateway writes its spans itself instead of recording them
 * with the SDK: docs/design/observability.md.
 */
final class OtlpTraceEncoder {
    // Span's fields
    private static final int TRACE_ID = 1;
    private static final int SPAN_ID = 2;
    private static final int TRACE_STATE = 3;
    private static final int PARENT_SPAN_ID = 4;
    private static final int NAME = 5;
    private static final int KIND = 6;
    private static final int START = 7;
    private static final int END = 8;
    private static final int ATTRIBUTES = 9;
    private static final int STATUS = 15;
    private static final int FLAGS = 16;
    static final int KIND_SERVER = 2;
    static final int KIND_CLIENT = 3;
    static final int STATUS_ERROR = 2;

    static final String ROUTE = "http.route";
    static final String CALL = "weft.call";
    static final String DESTINATION = "weft.destination";
    static final String OUTCOME = "weft.outcome";
    static final String ATTEMPTS = "weft.attempt_kinds";
    static final String HTTP_STATUS = "http.response.status_code";
    static final String METHOD = "http.request.method";
    static final String PATH = "url.path";

    private static final List<String> FIRST_ONLY = List.of("first");
    private static final String[] KIND_NAMES = kindNames();

    /** ResourceSpans' {@code resource} field, whole: the same for every request. */
    private final byte[] resource;
    /** ScopeSpans' {@code scope} field, whole. */
    private final byte[] scope;

    /** @param resource the resource's attributes, in order (string values); @param scopeName the scope's name */
    OtlpTraceEncoder(Map<String, String> resource, String scopeName) {
        ProtoWriter w = new ProtoWriter(256);
        int r = w.begin(1);
        resource.forEach((k, v) -> stringAttribute(w, 1, k, v));
        w.end(r);
        this.resource = w.toByteArray();
        w.reset();
        int s = w.begin(1);
        w.string(1, scopeName);
        w.end(s);
        this.scope = w.toByteArray();
    }

    /**
     * One ExportTraceServiceRequest: a ResourceSpans with the resource, one ScopeSpans with the scope and
     * {@code spans} (each the content of a Span message), written into an array of its exact length.
     */
    byte[] request(List<byte[]> spans) {
        long spansLength = 0;
        for (byte[] s : spans) {
            spansLength += 1 + ProtoWriter.varintSize(s.length) + s.length;
        }
        long scopeSpans = scope.length + spansLength;
        long resourceSpans = resource.length + 1 + ProtoWriter.varintSize(scopeSpans) + scopeSpans;
        long total = 1 + ProtoWriter.varintSize(resourceSpans) + resourceSpans;
        if (total > Integer.MAX_VALUE - 16) {
            throw new IllegalArgumentException("a batch of " + total + " bytes");
        }
        ProtoWriter w = new ProtoWriter((int) total);
        w.tag(1, 2);
        w.varint(resourceSpans);
        w.bytes(resource, 0, resource.length);
        w.tag(2, 2);
        w.varint(scopeSpans);
        w.bytes(scope, 0, scope.length);
        for (byte[] s : spans) {
            w.tag(2, 2);
            w.varint(s.length);
            w.bytes(s, 0, s.length);
        }
        return w.exact();
    }

    /**
     * The request's span (kind SERVER): named after its route (its method when no route matched), with the
     * method, path, route and status; status ERROR for an answer of 500 or more.
     *
     * @param parentId     the caller's span id, 0 when the request started the trace
     * @param parentRemote whether {@code parentId} came from the request's traceparent
     */
    static void serverSpan(ProtoWriter w, long traceHi, long traceLo, long spanId, long parentId, boolean parentRemote,
                           String traceState, long startEpochNanos, long endEpochNanos, String method, String path,
                           String route, int status) {
        head(w, traceHi, traceLo, spanId, traceState, parentId, route != null ? route : method, KIND_SERVER,
                startEpochNanos, endEpochNanos);
        stringAttribute(w, ATTRIBUTES, METHOD, method);
        stringAttribute(w, ATTRIBUTES, PATH, path);
        if (route != null) {
            stringAttribute(w, ATTRIBUTES, ROUTE, route);
        }
        longAttribute(w, HTTP_STATUS, status);
        status(w, status >= 500 ? STATUS_ERROR : 0, null);
        w.fixed32(FLAGS, flags(parentRemote));
    }

    /**
     * One backend call's span (kind CLIENT, its id the span id the call sent): named after the call, with the
     * call, its destination ({@code scheme://authority}), outcome, status when an answer came, and the kind of
     * each attempt; status ERROR with the outcome for a failed call.
     */
    static void callSpan(ProtoWriter w, long traceHi, long traceLo, long spanId, long parentId, String traceState,
                         long startEpochNanos, long endEpochNanos, String call, String destination, CallResult r) {
        head(w, traceHi, traceLo, spanId, traceState, parentId, call, KIND_CLIENT, startEpochNanos, endEpochNanos);
        stringAttribute(w, ATTRIBUTES, CALL, call);
        stringAttribute(w, ATTRIBUTES, DESTINATION, destination);
        stringAttribute(w, ATTRIBUTES, OUTCOME, r.outcome());
        if (r.status() > 0) {
            longAttribute(w, HTTP_STATUS, r.status());
        }
        int kv = w.begin(ATTRIBUTES);
        w.utf8(1, ATTEMPTS);
        int any = w.begin(2);
        int array = w.begin(5);
        for (String k : attemptKinds(r.attempts())) {
            int el = w.begin(1);
            w.utf8(1, k);
            w.end(el);
        }
        w.end(array);
        w.end(any);
        w.end(kv);
        status(w, r.ok() ? 0 : STATUS_ERROR, r.ok() ? null : r.outcome());
        w.fixed32(FLAGS, flags(false));
    }

    private static void head(ProtoWriter w, long traceHi, long traceLo, long spanId, String traceState, long parentId,
                             String name, int kind, long start, long end) {
        w.id16(TRACE_ID, traceHi, traceLo);
        w.id8(SPAN_ID, spanId);
        w.string(TRACE_STATE, traceState);
        if (parentId != 0) {
            w.id8(PARENT_SPAN_ID, parentId);
        }
        w.string(NAME, name);
        w.uint(KIND, kind);
        w.fixed64(START, start);
        w.fixed64(END, end);
    }

    /** The Status message (written even when empty, as the SDK does): its message, then its code. */
    private static void status(ProtoWriter w, int code, String message) {
        int st = w.begin(STATUS);
        w.string(2, message);
        w.uint(3, code);
        w.end(st);
    }

    /** The span's flags: sampled (the only spans recorded), and that whether its parent is remote is known (and is it). */
    private static int flags(boolean parentRemote) {
        return 0x01 | 0x100 | (parentRemote ? 0x200 : 0);
    }

    /** A KeyValue of a string value in {@code field}; left out when the value is null. */
    private static void stringAttribute(ProtoWriter w, int field, String key, String value) {
        if (value == null) {
            return;
        }
        int kv = w.begin(field);
        w.utf8(1, key);
        int any = w.begin(2);
        w.utf8(1, value);
        w.end(any);
        w.end(kv);
    }

    private static void longAttribute(ProtoWriter w, String key, long value) {
        int kv = w.begin(ATTRIBUTES);
        w.utf8(1, key);
        int any = w.begin(2);
        w.int64(3, value);
        w.end(any);
        w.end(kv);
    }

    /** {@code weft.attempt_kinds}: the kind of each attempt in order ({@code first}, {@code retry}, {@code hedge}). */
    static List<String> attemptKinds(List<Attempt> attempts) {
        if (attempts.size() == 1 && attempts.get(0).kind() == Attempt.Kind.FIRST) {
            return FIRST_ONLY;
        }
        String[] kinds = new String[attempts.size()];
        for (int i = 0; i < kinds.length; i++) {
            kinds[i] = KIND_NAMES[attempts.get(i).kind().ordinal()];
        }
        return List.of(kinds);
    }

    private static String[] kindNames() {
        Attempt.Kind[] kinds = Attempt.Kind.values();
        String[] names = new String[kinds.length];
        for (Attempt.Kind k : kinds) {
            names[k.ordinal()] = k.name().toLowerCase(java.util.Locale.ROOT);
        }
        return names;
    }
}
