package dev.weft.server.http2;

import dev.weft.http.h2.Http2FrameReader;
import dev.weft.server.ConnectionListener;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.SequenceInputStream;
import java.net.Socket;
import java.time.Duration;
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
     * Serves an HTTP/2 connection on the caller's thread until it ends (the caller closes the socket).
     *
     * @param in          the connection's bytes, from the first one not yet read
     * @param prefaceRead whether the client preface has been read off {@code in} already
     */
    public void serve(Socket socket, InputStream in, boolean prefaceRead, ConnectionListener.Activity activity,
                      long maxBodyBytes, Duration bodyTimeout, Http2ServerConnection.Requests requests)
            throws IOException {
        Http2ServerConnection c = new Http2ServerConnection(socket, in, limits, maxBodyBytes, bodyTimeout, activity,
                metrics, requests);
        live.add(c);
        try {
            c.serve(prefaceRead);
        } finally {
            live.remove(c);
        }
    }

    /** A drain: every live connection gets GOAWAY NO_ERROR; its open streams finish, it takes no new one. */
    public void goAwayAll() {
        for (Http2ServerConnection c : live) {
            c.goAway();
        }
    }
}
