package dev.weft.server.http2;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/** What the server's HTTP/2 connections have done: connections, streams, and each kind of hostile peer closed. */
public final class Http2Metrics {
    /** Why a connection was closed on a peer's misbehaviour (each is one GOAWAY and a closed connection). */
    public enum Hostile {
        /** Over {@code resets_per_second} (CVE-2023-44487). */
        RAPID_RESET,
        /** Over {@code continuations_per_second}, or a header block over {@code max_header_list_size}. */
        CONTINUATION_FLOOD,
        SETTINGS_FLOOD,
        PING_FLOOD,
        EMPTY_DATA_FLOOD,
        PRIORITY_FLOOD,
        /** Over {@code window_updates_per_second}. */
        WINDOW_UPDATE_FLOOD,
        /** Over {@code unknown_frames_per_second} (extension frame types). */
        UNKNOWN_FRAME_FLOOD,
        /** A decoded header list over {@code max_header_list_size} (an HPACK bomb), or a broken HPACK block. */
        HPACK,
        /** An answer's window stayed shut, or the socket took nothing, for {@code write_timeout}. */
        SLOW_READER,
        /** Any other connection error of RFC 9113 (a frame or a sequence the protocol forbids). */
        PROTOCOL
    }

    private final LongAdder connections = new LongAdder();
    private final java.util.concurrent.atomic.AtomicInteger open = new java.util.concurrent.atomic.AtomicInteger();
    private final LongAdder streams = new LongAdder();
    private final LongAdder refusedStreams = new LongAdder();
    private final LongAdder resetByPeer = new LongAdder();
    private final LongAdder bodyTimeouts = new LongAdder();
    private final Map<Hostile, LongAdder> hostile = new EnumMap<>(Hostile.class);

    public Http2Metrics() {
        for (Hostile h : Hostile.values()) {
            hostile.put(h, new LongAdder());
        }
    }

    void onConnection() {
        connections.increment();
        open.incrementAndGet();
    }

    void onConnectionEnded() {
        open.decrementAndGet();
    }

    /** HTTP/2 connections open now (their reading thread has not ended). */
    public int openConnections() {
        return open.get();
    }

    void onStream() {
        streams.increment();
    }

    private final java.util.concurrent.atomic.AtomicInteger streamThreads = new java.util.concurrent.atomic.AtomicInteger();

    void onStreamThread(int delta) {
        streamThreads.addAndGet(delta);
    }

    /**
     * Streams whose virtual thread runs now (from its start until its last act, after the stream has ended): what a
     * test waits for instead of reading a thread dump of this JVM.
     */
    public int streamThreadsRunning() {
        return streamThreads.get();
    }

    void onRefused() {
        refusedStreams.increment();
    }

    void onResetByPeer() {
        resetByPeer.increment();
    }

    void onBodyTimeout() {
        bodyTimeouts.increment();
    }

    void onHostile(Hostile why) {
        hostile.get(why).increment();
    }

    /** HTTP/2 connections served so far. */
    public long connections() {
        return connections.sum();
    }

    /** Streams (requests) started so far. */
    public long streams() {
        return streams.sum();
    }

    /** Streams answered REFUSED_STREAM: {@code max_concurrent_streams} were open. */
    public long refusedStreams() {
        return refusedStreams.sum();
    }

    /** Streams the peer reset while open (their handlers were interrupted). */
    public long resetByPeer() {
        return resetByPeer.sum();
    }

    /**
     * Streams whose request body came too slowly: a held body not whole within the server's body timeout (reset,
     * CANCEL), a streamed one with no byte for that long or under its {@code min_body_rate} (answered 408).
     */
    public long bodyTimeouts() {
        return bodyTimeouts.sum();
    }

    /** Connections closed because their peer misbehaved so. */
    public long hostile(Hostile why) {
        return hostile.get(why).sum();
    }

    /** Connections closed on any misbehaviour. */
    public long hostile() {
        long n = 0;
        for (LongAdder a : hostile.values()) {
            n += a.sum();
        }
        return n;
    }
}
