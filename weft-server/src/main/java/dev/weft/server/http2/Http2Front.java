package dev.weft.server.http2;

import dev.weft.http.h2.Http2FrameReader;
import dev.weft.server.ConnectionListener;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.SequenceInputStream;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * HTTP/2 for an {@link dev.weft.server.HttpServer}: tells an h2c connection from an HTTP/1.1 one by its first bytes
 * ({@link #sniff}), serves HTTP/2 connections ({@link #serve}), sends every live one a graceful GOAWAY on drain
 * ({@link #goAwayAll}), and counts ({@link #metrics}).
 */
public final class Http2Front {
    /** The bytes of the preface after which a mismatch is an HTTP/2 client with a broken preface, not HTTP/1.1. */
    private static final int PREFACE_LINE = "PRI * HTTP/2.0\r\n".length();
    private final Http2Limits limits;
    private final Http2Metrics metrics = new Http2Metrics();
    private final Set<Http2ServerConnection> live = ConcurrentHashMap.newKeySet();
    /** A drain began: every connection served from now on gets GOAWAY at once. */
    private volatile boolean draining;

    public Http2Front(Http2Limits limits) {
        this.limits = limits;
    }

    public Http2Limits limits() {
        return limits;
    }

    public Http2Metrics metrics() {
        return metrics;
    }

    /** HTTP/2 connections open now. */
    public int open() {
        return live.size();
    }

    /**
     * What a plain connection's first bytes are.
     *
     * @param http2 the whole client preface came (h2c with prior knowledge); {@code rest} starts after it
     * @param badPreface the preface's request line came and then other bytes: an HTTP/2 client that gets GOAWAY
     *                   PROTOCOL_ERROR; {@code rest} starts at the first byte
     * @param rest  what to read from now on (for HTTP/1.1: every byte, those read here first)
     */
    public record Sniffed(boolean http2, boolean badPreface, InputStream rest) {
    }

    /**
     * Reads as much of the connection's first bytes as it takes to tell the HTTP/2 preface from anything else: an
     * HTTP/1.1 request differs at its first byte, so it costs one read that the HTTP/1.1 reader would have made.
     *
     * @param firstBytes told when the first bytes arrived (the header timeout starts)
     */
    public static Sniffed sniff(InputStream in, Runnable firstBytes) throws IOException {
        byte[] p = Http2FrameReader.PREFACE;
        byte[] got = new byte[p.length];
        int n = 0;
        while (n < p.length) {
            int r = in.read(got, n, p.length - n);
            if (r < 0) {
                break;
            }
            if (n == 0 && r > 0) {
                firstBytes.run();
            }
            int before = n;
            n += r;
            for (int i = before; i < n; i++) {
                if (got[i] != p[i]) {
                    InputStream rest = new SequenceInputStream(new ByteArrayInputStream(got, 0, n), in);
                    return new Sniffed(false, i >= PREFACE_LINE, rest);
                }
            }
        }
        if (n == p.length) {
            return new Sniffed(true, false, in);
        }
        return new Sniffed(false, false, new SequenceInputStream(new ByteArrayInputStream(got, 0, n), in));
    }

    /**
     * A plain connection's start: serves it as h2c on the caller's thread when it begins with the client preface (or
     * answers a broken preface GOAWAY, and with {@link Http2Limits#h2cOnly()} anything else too), until it ends.
     *
     * @return null when it was HTTP/2 (and is over), else what to read HTTP/1.1 from: every byte, those read here first
     */
    public InputStream h2cOrHttp1(Socket socket, InputStream raw, ConnectionListener.Activity activity,
                                  dev.weft.server.ServerLimits server, Http2ServerConnection.Requests requests)
            throws IOException {
        Sniffed first = sniff(raw, activity::bytesIn);
        if (!first.http2() && !first.badPreface() && !limits.h2cOnly()) {
            return first.rest();
        }
        serve(socket, first.rest(), first.http2(), activity, server, requests);
        return null;
    }

    /**
     * Serves an HTTP/2 connection on the caller's thread until it ends (the caller closes the socket).
     *
     * @param in          the connection's bytes, from the first one not yet read
     * @param prefaceRead whether the client preface has been read off {@code in} already
     */
    public void serve(Socket socket, InputStream in, boolean prefaceRead, ConnectionListener.Activity activity,
                      dev.weft.server.ServerLimits server, Http2ServerConnection.Requests requests)
            throws IOException {
        Http2ServerConnection c = new Http2ServerConnection(socket, in, limits, server, activity, metrics, requests);
        live.add(c);
        if (draining) {
            c.goAway(); // sent right after the server's SETTINGS
        }
        try {
            c.serve(prefaceRead, null);
        } finally {
            live.remove(c);
        }
    }

    /**
     * Whether an HTTP/1.1 request asks to switch to h2c (RFC 7540 section 3.2): {@code Upgrade} names {@code h2c},
     * {@code Connection} names {@code Upgrade} and {@code HTTP2-Settings}, and one {@code HTTP2-Settings} field holds
     * a SETTINGS payload in base64url that the frame codec accepts.
     */
    public static boolean asksForH2c(dev.weft.http.Http1Request request) {
        dev.weft.http.RequestHead head = request.head();
        return !request.http10() && hasToken(head, "upgrade", "h2c") && hasToken(head, "connection", "upgrade")
                && hasToken(head, "connection", "http2-settings") && settingsOf(head) != null;
    }

    /** {@link #asksForH2c}, where {@code http2.upgrade} allows it. */
    public boolean upgrades(dev.weft.http.Http1Request request) {
        return limits.upgrade() && asksForH2c(request);
    }

    private static boolean hasToken(dev.weft.http.RequestHead head, String name, String token) {
        for (java.util.Map.Entry<String, String> h : head.headers()) {
            if (h.getKey().equals(name)) {
                for (String t : h.getValue().split(",")) {
                    if (t.strip().equalsIgnoreCase(token)) {
                        return true;
                    }
                }
            }
        }
        return false;
    }

    /** The settings of the one {@code HTTP2-Settings} field, or null when there is not exactly one valid one. */
    static java.util.List<dev.weft.http.h2.Http2Frame.Setting> settingsOf(dev.weft.http.RequestHead head) {
        String value = null;
        for (java.util.Map.Entry<String, String> h : head.headers()) {
            if (h.getKey().equals("http2-settings")) {
                if (value != null) {
                    return null;
                }
                value = h.getValue();
            }
        }
        if (value == null) {
            return null;
        }
        try {
            byte[] payload = java.util.Base64.getUrlDecoder().decode(value.strip().replace("=", ""));
            java.io.ByteArrayOutputStream frame = new java.io.ByteArrayOutputStream();
            dev.weft.http.h2.Http2FrameWriter.frame(frame, dev.weft.http.h2.Http2Frame.TYPE_SETTINGS, 0, 0, payload, 0,
                    payload.length);
            dev.weft.http.h2.Http2Frame f = new dev.weft.http.h2.Http2FrameReader(
                    new ByteArrayInputStream(frame.toByteArray())).read(Http2FrameReader.MIN_MAX_FRAME_SIZE);
            return ((dev.weft.http.h2.Http2Frame.Settings) f).values();
        } catch (IllegalArgumentException | IOException e) {
            return null; // not base64url, or not a valid SETTINGS payload: no upgrade
        }
    }

    /**
     * Switches an HTTP/1.1 connection to h2c after {@code head} asked for it ({@link #upgrades}): answers 101, and
     * serves the request as stream 1 of the HTTP/2 connection that follows, on the caller's thread until it ends.
     *
     * @param in   what follows the request on the connection
     * @param body the request's body, read whole already
     */
    public void serveUpgraded(Socket socket, InputStream in, dev.weft.http.RequestHead head, byte[] body,
                              ConnectionListener.Activity activity, dev.weft.server.ServerLimits server,
                              Http2ServerConnection.Requests requests) throws IOException {
        java.util.List<dev.weft.http.h2.Http2Frame.Setting> settings = settingsOf(head);
        java.io.OutputStream out = socket.getOutputStream();
        out.write("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n"
                .getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        out.flush();
        Http2ServerConnection c = new Http2ServerConnection(socket, in, limits, server, activity, metrics, requests);
        live.add(c);
        if (draining) {
            c.goAway(); // sent right after the server's SETTINGS
        }
        try {
            c.serve(false, new Http2ServerConnection.Upgraded(settings, head, body));
        } finally {
            live.remove(c);
        }
    }

    /** A drain: every live connection gets GOAWAY NO_ERROR; its open streams finish, it takes no new one. */
    public void goAwayAll() {
        draining = true; // connections switching to HTTP/2 from now on (a TLS handshake, an Upgrade) get it too
        for (Http2ServerConnection c : live) {
            c.goAway();
        }
    }
}
