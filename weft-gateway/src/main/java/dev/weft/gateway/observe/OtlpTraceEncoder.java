package dev.weft.gateway.observe;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.TraceState;
import io.opentelemetry.sdk.common.InstrumentationScopeInfo;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.trace.data.EventData;
import io.opentelemetry.sdk.trace.data.LinkData;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.data.StatusData;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Writes finished spans as an OTLP {@code ExportTraceServiceRequest} (protobuf, opentelemetry-proto v1), the
 * same bytes the SDK's OTLP marshaler writes for them (fields in number order, defaults left out; checked by
 * OtlpTraceEncoderTest against it), in one pass instead of its two (sizing, then writing): one growable buffer;
 * each nested message's length is reserved as one byte and the message moved up only when it turns out longer
 * than 127 bytes; the UTF-8 of the first {@link #CACHE} distinct short strings (attribute keys, span names,
 * routes, calls, destinations, outcomes) is kept. What it saves: docs/benchmarks.md, Round 6
 * ({@code lab/tracing/encoder-bench.sh}). Not thread-safe: one exporter thread uses it.
 */
public final class OtlpTraceEncoder {
    /**
     * Distinct strings whose UTF-8 is kept, the first ones seen (the keys, span names and values of the first
     * spans: routes, calls, destinations, outcomes); strings past it are encoded each time.
     */
    static final int CACHE = 1_024;
    /** Values longer than this are encoded each time (paths, messages), not cached. */
    private static final int CACHE_MAX_LENGTH = 64;

    private byte[] buf = new byte[1 << 16];
    private int pos;
    private final Map<String, byte[]> utf8 = new HashMap<>();

    /** The request for {@code spans}; valid until the next call. */
    public byte[] buffer() {
        return buf;
    }

    /** Encodes {@code spans}, returning the length of the message at the start of {@link #buffer()}. */
    public int encode(Collection<SpanData> spans) {
        pos = 0;
        Resource firstResource = null;
        InstrumentationScopeInfo firstScope = null;
        boolean oneGroup = true;
        for (SpanData s : spans) {
            if (firstResource == null) {
                firstResource = s.getResource();
                firstScope = s.getInstrumentationScopeInfo();
            } else if (s.getResource() != firstResource || s.getInstrumentationScopeInfo() != firstScope) {
                oneGroup = false;
                break;
            }
        }
        if (firstResource == null) {
            return 0;
        }
        if (oneGroup) { // the gateway's case: one provider, one tracer; no grouping maps
            resourceSpans(firstResource, Map.of(firstScope, spans));
            return pos;
        }
        Map<Resource, Map<InstrumentationScopeInfo, Collection<SpanData>>> groups = new LinkedHashMap<>();
        for (SpanData s : spans) {
            groups.computeIfAbsent(s.getResource(), r -> new LinkedHashMap<>())
                    .computeIfAbsent(s.getInstrumentationScopeInfo(), i -> new java.util.ArrayList<>()).add(s);
        }
        groups.forEach(this::resourceSpans);
        return pos;
    }

    /** One ResourceSpans: the resource, then its spans by scope. */
    private void resourceSpans(Resource resource, Map<InstrumentationScopeInfo, Collection<SpanData>> scopes) {
        int rs = begin(1);
        resource(resource);
        scopes.forEach(this::scopeSpans);
        schemaUrl(resource.getSchemaUrl());
        end(rs);
    }

    private void resource(Resource r) {
        int m = begin(1);
        attributes(1, r.getAttributes());
        end(m);
    }

    private void schemaUrl(String url) {
        if (url != null && !url.isEmpty()) {
            string(3, url);
        }
    }

    private void scopeSpans(InstrumentationScopeInfo scope, Collection<SpanData> spans) {
        int ss = begin(2);
        int sc = begin(1);
        string(1, scope.getName());
        if (scope.getVersion() != null) {
            string(2, scope.getVersion());
        }
        attributes(3, scope.getAttributes());
        end(sc);
        for (SpanData s : spans) {
            span(s);
        }
        schemaUrl(scope.getSchemaUrl());
        end(ss);
    }

    private void span(SpanData s) {
        int m = begin(2);
        SpanContext ctx = s.getSpanContext();
        hexBytes(1, ctx.getTraceId());
        hexBytes(2, ctx.getSpanId());
        traceState(3, ctx.getTraceState());
        SpanContext parent = s.getParentSpanContext();
        if (parent.isValid()) {
            hexBytes(4, parent.getSpanId());
        }
        string(5, s.getName());
        tag(6, 0);
        varint(kind(s.getKind()));
        fixed64(7, s.getStartEpochNanos());
        fixed64(8, s.getEndEpochNanos());
        Attributes attrs = s.getAttributes();
        attributes(9, attrs);
        uint32(10, s.getTotalAttributeCount() - attrs.size());
        List<EventData> events = s.getEvents();
        for (EventData e : events) {
            int em = begin(11);
            fixed64(1, e.getEpochNanos());
            string(2, e.getName());
            attributes(3, e.getAttributes());
            uint32(4, e.getTotalAttributeCount() - e.getAttributes().size());
            end(em);
        }
        uint32(12, s.getTotalRecordedEvents() - events.size());
        List<LinkData> links = s.getLinks();
        for (LinkData l : links) {
            int lm = begin(13);
            SpanContext lc = l.getSpanContext();
            hexBytes(1, lc.getTraceId());
            hexBytes(2, lc.getSpanId());
            traceState(3, lc.getTraceState());
            attributes(4, l.getAttributes());
            uint32(5, l.getTotalAttributeCount() - l.getAttributes().size());
            fixed32(6, flags(lc.getTraceFlags().asByte(), lc.isRemote()));
            end(lm);
        }
        uint32(14, s.getTotalRecordedLinks() - links.size());
        StatusData status = s.getStatus();
        int st = begin(15);
        if (!status.getDescription().isEmpty()) {
            string(2, status.getDescription());
        }
        int code = status.getStatusCode() == StatusCode.OK ? 1 : status.getStatusCode() == StatusCode.ERROR ? 2 : 0;
        if (code != 0) {
            tag(3, 0);
            varint(code);
        }
        end(st);
        fixed32(16, flags(ctx.getTraceFlags().asByte(), parent.isRemote()));
        end(m);
    }

    /** The span's flags field: the W3C trace flags, and that whether its parent is remote is known (and is it). */
    private static int flags(byte traceFlags, boolean parentRemote) {
        return (traceFlags & 0xff) | 0x100 | (parentRemote ? 0x200 : 0);
    }

    private static int kind(SpanKind k) {
        return switch (k) {
            case INTERNAL -> 1;
            case SERVER -> 2;
            case CLIENT -> 3;
            case PRODUCER -> 4;
            case CONSUMER -> 5;
        };
    }

    private void traceState(int field, TraceState state) {
        if (state.isEmpty()) {
            return;
        }
        StringBuilder b = new StringBuilder();
        state.forEach((k, v) -> {
            if (!b.isEmpty()) {
                b.append(',');
            }
            b.append(k).append('=').append(v);
        });
        string(field, b.toString());
    }

    private void attributes(int field, Attributes attrs) {
        if (attrs.isEmpty()) {
            return;
        }
        attributeField = field;
        attrs.forEach(writeAttribute);
    }

    /** The field {@link #writeAttribute} writes to (one lambda for every span, not one allocated each time). */
    private int attributeField;
    private final java.util.function.BiConsumer<AttributeKey<?>, Object> writeAttribute =
            (k, v) -> keyValue(attributeField, k, v);

    private void keyValue(int field, AttributeKey<?> key, Object value) {
        int kv = begin(field);
        string(1, key.getKey());
        int any = begin(2);
        switch (key.getType()) {
            case STRING -> value((String) value);
            case BOOLEAN -> bool(2, (Boolean) value);
            case LONG -> int64(3, (Long) value);
            case DOUBLE -> dbl(4, (Double) value);
            default -> {
                int arr = begin(5);
                for (Object o : (List<?>) value) {
                    int el = begin(1);
                    switch (o) {
                        case String str -> value(str);
                        case Boolean b -> bool(2, b);
                        case Long l -> int64(3, l);
                        case Double d -> dbl(4, d);
                        default -> value(String.valueOf(o));
                    }
                    end(el);
                }
                end(arr);
            }
        }
        end(any);
        end(kv);
    }

    // the protobuf wire format: a field's tag, then a varint, 8 or 4 bytes, or a length and that many bytes

    private void bool(int field, boolean v) {
        tag(field, 0);
        varint(v ? 1 : 0);
    }

    private void int64(int field, long v) {
        tag(field, 0);
        varint(v);
    }

    private void dbl(int field, double v) {
        tag(field, 1);
        long bits = Double.doubleToRawLongBits(v);
        ensure(8);
        for (int i = 0; i < 8; i++) {
            buf[pos++] = (byte) (bits >>> (8 * i));
        }
    }

    private void uint32(int field, int v) {
        if (v != 0) {
            tag(field, 0);
            varint(v & 0xffffffffL);
        }
    }

    private void fixed64(int field, long v) {
        tag(field, 1);
        ensure(8);
        for (int i = 0; i < 8; i++) {
            buf[pos++] = (byte) (v >>> (8 * i));
        }
    }

    private void fixed32(int field, int v) {
        tag(field, 5);
        ensure(4);
        for (int i = 0; i < 4; i++) {
            buf[pos++] = (byte) (v >>> (8 * i));
        }
    }

    /** A string field, left out when empty (the proto3 default). */
    private void string(int field, String s) {
        if (!s.isEmpty()) {
            utf8(field, s);
        }
    }

    /** An AnyValue's string_value: one of a oneof, so written even when empty. */
    private void value(String s) {
        utf8(1, s);
    }

    private void utf8(int field, String s) {
        byte[] b;
        if (s.length() <= CACHE_MAX_LENGTH) {
            b = utf8.get(s);
            if (b == null) {
                b = s.getBytes(StandardCharsets.UTF_8);
                if (utf8.size() < CACHE) {
                    utf8.put(s, b);
                }
            }
        } else {
            b = s.getBytes(StandardCharsets.UTF_8);
        }
        tag(field, 2);
        varint(b.length);
        ensure(b.length);
        System.arraycopy(b, 0, buf, pos, b.length);
        pos += b.length;
    }

    /** An id the SDK holds as lower-case hex, written as its bytes. */
    private void hexBytes(int field, String hex) {
        int n = hex.length() >> 1;
        tag(field, 2);
        varint(n);
        ensure(n);
        byte[] b = buf;
        int p = pos;
        for (int i = 0, c = 0; i < n; i++, c += 2) {
            b[p + i] = (byte) ((NIBBLE[hex.charAt(c) & 0x7f] << 4) | NIBBLE[hex.charAt(c + 1) & 0x7f]);
        }
        pos = p + n;
    }

    /** The value of each hex digit (ASCII), 0 for anything else (the SDK's ids are valid lower-case hex). */
    private static final byte[] NIBBLE = new byte[128];

    static {
        for (int i = 0; i < 10; i++) {
            NIBBLE['0' + i] = (byte) i;
        }
        for (int i = 0; i < 6; i++) {
            NIBBLE['a' + i] = (byte) (10 + i);
            NIBBLE['A' + i] = (byte) (10 + i);
        }
    }

    private void tag(int field, int wireType) {
        varint((field << 3) | wireType);
    }

    private void varint(long v) {
        ensure(10);
        while ((v & ~0x7FL) != 0) {
            buf[pos++] = (byte) ((v & 0x7F) | 0x80);
            v >>>= 7;
        }
        buf[pos++] = (byte) v;
    }

    /** Starts a nested message of {@code field}: its tag, and one byte reserved for its length. */
    private int begin(int field) {
        tag(field, 2);
        ensure(1);
        return pos++;
    }

    /** Ends the message {@link #begin} started at {@code lengthAt}: writes its length, moving it up if need be. */
    private void end(int lengthAt) {
        int len = pos - lengthAt - 1;
        if (len < 0x80) {
            buf[lengthAt] = (byte) len;
            return;
        }
        int extra = varintSize(len) - 1;
        ensure(extra);
        System.arraycopy(buf, lengthAt + 1, buf, lengthAt + 1 + extra, len);
        pos += extra;
        int p = lengthAt;
        long v = len;
        while ((v & ~0x7FL) != 0) {
            buf[p++] = (byte) ((v & 0x7F) | 0x80);
            v >>>= 7;
        }
        buf[p] = (byte) v;
    }

    private static int varintSize(int v) {
        return v < (1 << 7) ? 1 : v < (1 << 14) ? 2 : v < (1 << 21) ? 3 : v < (1 << 28) ? 4 : 5;
    }

    private void ensure(int n) {
        if (pos + n > buf.length) {
            buf = Arrays.copyOf(buf, Math.max(buf.length * 2, pos + n));
        }
    }
}
