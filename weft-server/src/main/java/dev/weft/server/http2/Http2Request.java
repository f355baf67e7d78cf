package dev.weft.server.http2;

import dev.weft.http.Http1;
import dev.weft.http.RequestHead;
import dev.weft.http.h2.Http2Error;
import dev.weft.http.h2.Http2Exception;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpURI;
import org.eclipse.jetty.http.MetaData;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A request's header block mapped onto the head the HTTP/1.1 path hands to a handler ({@link RequestHead}), so that
 * one {@link dev.weft.server.HttpHandler} serves both protocols: {@code :method}, {@code :path} (target, path and
 * query), {@code :authority} as {@code host} when no {@code host} field came, {@code cookie} fields joined with
 * {@code "; "} (RFC 9113 section 8.2.3), names in lower case as HTTP/2 sends them.
 *
 * @param contentLength the {@code content-length} field, or -1
 */
record Http2Request(RequestHead head, long contentLength) {

    /**
     * @throws Http2Exception a stream error PROTOCOL_ERROR when the block is not a well-formed request (RFC 9113
     *                        section 8.3.1: {@code :method}, {@code :scheme} and a non-empty {@code :path}, one
     *                        {@code content-length} of digits; CONNECT is not served; section 8.2.2: no
     *                        connection-specific field, {@code te} only {@code trailers}), or one the HTTP/1.1 codec
     *                        would refuse: a {@code :method} not a token, a {@code :path} not in origin-form (or
     *                        {@code *} for OPTIONS) or with a character outside Http1's request-target set, a
     *                        {@code host} that differs from {@code :authority}, two of them, or a host character no
     *                        host name has, a control character in a value)
     */
    static Http2Request of(int streamId, MetaData meta, boolean endStream) throws Http2Exception {
        if (!(meta instanceof MetaData.Request r)) {
            throw malformed(streamId, "a request's header block without :method, :scheme and :path");
        }
        String method = r.getMethod();
        HttpURI uri = r.getHttpURI();
        if (method == null || method.isEmpty()) {
            throw malformed(streamId, "no :method");
        }
        if (!Http1.isToken(method)) {
            throw malformed(streamId, ":method is not a token");
        }
        if ("CONNECT".equals(method)) {
            throw malformed(streamId, "CONNECT is not served");
        }
        if (uri == null || uri.getScheme() == null || uri.getScheme().isEmpty()) {
            throw malformed(streamId, "no :scheme");
        }
        String path = uri.getPath();
        if (path == null || path.isEmpty()) {
            throw malformed(streamId, "no :path, or an empty one");
        }
        String query = uri.getQuery() == null ? "" : uri.getQuery();
        String target = query.isEmpty() ? path : path + "?" + query;
        // the request-target the HTTP/1.1 codec would take (Http1's character set): origin-form, or '*' for OPTIONS
        if (uri.getFragment() != null || !Http1.isTargetText(target)) {
            throw malformed(streamId, ":path holds a space, a control character or '#'");
        }
        if (path.equals("*") ? !query.isEmpty() || !"OPTIONS".equals(method) : path.charAt(0) != '/') {
            throw malformed(streamId, ":path neither starts with '/' nor is '*' of an OPTIONS request");
        }
        String authority = uri.getAuthority();
        if (authority != null && !Http1.isHostValue(authority)) {
            throw malformed(streamId, ":authority holds a character no host name has");
        }
        List<Map.Entry<String, String>> headers = new ArrayList<>();
        boolean host = false;
        long contentLength = -1;
        StringBuilder cookies = null;
        for (HttpField f : r.getHttpFields()) {
            String name = f.getLowerCaseName();
            String value = f.getValue() == null ? "" : f.getValue();
            if (!Http1.isFieldValue(value)) {
                throw malformed(streamId, "a control character in the value of '" + Http1.printable(name) + "'");
            }
            switch (name) {
                case "host" -> {
                    if (host) {
                        throw malformed(streamId, "more than one host field");
                    }
                    if (!Http1.isHostValue(value)) {
                        throw malformed(streamId, "the host field holds a character no host name has");
                    }
                    if (authority != null && !authority.isEmpty() && !authority.equalsIgnoreCase(value)) {
                        throw malformed(streamId, "host differs from :authority");
                    }
                    host = true;
                }
                // RFC 9113 section 8.2.2: HTTP/1.1's framing and hop-by-hop fields would let a request be read two
                // ways once a proxy: route passes it on over HTTP/1.1
                case "connection", "transfer-encoding", "upgrade", "keep-alive", "proxy-connection" ->
                        throw malformed(streamId, "connection-specific field '" + name + "'");
                case "te" -> {
                    if (!value.equalsIgnoreCase("trailers")) {
                        throw malformed(streamId, "te other than 'trailers'");
                    }
                }
                case "content-length" -> {
                    long n = parseLength(streamId, value);
                    if (contentLength >= 0 && n != contentLength) {
                        throw malformed(streamId, "two different content-length values");
                    }
                    contentLength = n;
                }
                case "cookie" -> {
                    cookies = cookies == null ? new StringBuilder(value) : cookies.append("; ").append(value);
                    continue;
                }
                default -> {
                }
            }
            headers.add(Map.entry(name, value));
        }
        if (cookies != null) {
            headers.add(Map.entry("cookie", cookies.toString()));
        }
        if (!host && authority != null && !authority.isEmpty()) {
            headers.add(Map.entry("host", authority));
        }
        if (endStream && contentLength > 0) {
            throw malformed(streamId, "content-length " + contentLength + " on a request without a body");
        }
        String p = "*".equals(path) ? "/" : path;
        return new Http2Request(new RequestHead(method, target, p, query, dev.weft.http.Headers.of(headers)),
                contentLength);
    }

    private static long parseLength(int streamId, String v) throws Http2Exception {
        if (v.isEmpty() || v.length() > 18) {
            throw malformed(streamId, "content-length '" + v + "'");
        }
        for (int i = 0; i < v.length(); i++) {
            if (v.charAt(i) < '0' || v.charAt(i) > '9') {
                throw malformed(streamId, "content-length '" + v + "'");
            }
        }
        return Long.parseLong(v);
    }

    private static Http2Exception malformed(int streamId, String why) {
        return Http2Exception.stream(streamId, Http2Error.PROTOCOL_ERROR, "malformed request: " + why);
    }
}
