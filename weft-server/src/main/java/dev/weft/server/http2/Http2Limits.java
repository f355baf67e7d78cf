package dev.weft.server.http2;

import java.time.Duration;

/**
 * HTTP/2 on the server's listeners (the top-level {@code http2:} block of the gateway's config). Each bound is
 * enforced per connection; a peer past a rate gets GOAWAY (ENHANCE_YOUR_CALM) and a closed connection, counted
 * in {@link Http2Metrics}.
 *
 * @param enabled               serve HTTP/2 at all: h2c with prior knowledge on plain listeners, h2 by ALPN on TLS
 *                              ones (default true)
 * @param upgrade               also accept {@code Upgrade: h2c} on plain listeners (default false: it lets a request
 *                              slip past a front proxy's rules; JDK {@code HttpClient}, which has no prior-knowledge
 *                              mode, needs it)
 * @param h2cOnly               plain listeners speak HTTP/2 with prior knowledge only: a connection that does not open
 *                              with the client preface gets GOAWAY PROTOCOL_ERROR and is closed, never an HTTP/1.1
 *                              answer (default false: HTTP/1.1 and h2c share the port). For a port only HTTP/2
 *                              clients use, such as a relay's; h2spec's invalid-preface case passes only so
 * @param maxConcurrentStreams  SETTINGS_MAX_CONCURRENT_STREAMS: streams open at once on one connection, counting those
 *                              whose handler still runs after a reset; past it a new stream gets REFUSED_STREAM
 *                              (default 250; a relay sets thousands)
 * @param maxHeaderListSize     SETTINGS_MAX_HEADER_LIST_SIZE: a request's decoded header list (RFC 9113: names plus
 *                              values plus 32 per field), and its compressed block; past it GOAWAY (default 16 KiB)
 * @param headerTableSize       SETTINGS_HEADER_TABLE_SIZE: the HPACK dynamic table the peer may fill (default 4,096)
 * @param initialWindowSize     SETTINGS_INITIAL_WINDOW_SIZE: request body bytes a stream may send before its handler's
 *                              thread takes them (default 65,535)
 * @param connectionWindowSize  request body bytes all streams of a connection may have in flight (default 1 MiB)
 * @param maxFrameSize          SETTINGS_MAX_FRAME_SIZE (default 16,384, the smallest allowed)
 * @param settingsPerSecond     SETTINGS frames a peer may send per second (default 20)
 * @param pingsPerSecond        PING frames per second (default 20)
 * @param resetsPerSecond       RST_STREAM frames per second, received and sent (REFUSED_STREAM not counted): rapid
 *                              reset, CVE-2023-44487 (default 100)
 * @param emptyDataPerSecond    DATA frames without payload nor END_STREAM per second (default 100)
 * @param continuationsPerSecond CONTINUATION frames per second (default 100)
 * @param prioritiesPerSecond   PRIORITY frames per second (default 100)
 * @param windowUpdatesPerSecond WINDOW_UPDATE frames with an increment under 4 KiB per second, connection and
 *                              streams together: +1 increments would have answers cut into 1-byte DATA frames, each
 *                              waking the writers (default 1,000); frames of any increment: ten times that
 * @param unknownFramesPerSecond frames of extension types (ignored, RFC 9113 section 5.5) per second (default 100)
 * @param writeTimeout          an answer whose stream or connection window stays shut, or whose bytes the socket
 *                              takes none of, for this long: the peer is a slow reader, the connection is closed
 *                              (default 30s)
 */
public record Http2Limits(boolean enabled, boolean upgrade, boolean h2cOnly, int maxConcurrentStreams, int maxHeaderListSize,
                          int headerTableSize, int initialWindowSize, int connectionWindowSize, int maxFrameSize,
                          int settingsPerSecond, int pingsPerSecond, int resetsPerSecond, int emptyDataPerSecond,
                          int continuationsPerSecond, int prioritiesPerSecond, int windowUpdatesPerSecond,
                          int unknownFramesPerSecond, Duration writeTimeout) {
    public static final Http2Limits DEFAULT = new Http2Limits(true, false, false, 250, 16 * 1024, 4096, 65_535,
            1024 * 1024, 16_384, 20, 20, 100, 100, 100, 100, 1000, 100, Duration.ofSeconds(30));
    /** HTTP/2 off: every listener speaks HTTP/1.1 only. */
    public static final Http2Limits DISABLED = DEFAULT.withEnabled(false);

    public Http2Limits {
        if (h2cOnly && upgrade) {
            throw new IllegalArgumentException("http2.h2c_only and http2.upgrade exclude each other: an h2c-only listener"
                    + " answers no HTTP/1.1 request, so none can ask to upgrade");
        }
        if (h2cOnly && !enabled) {
            throw new IllegalArgumentException("http2.h2c_only needs HTTP/2 on (enabled: true)");
        }
        positive("max_concurrent_streams", maxConcurrentStreams);
        if (maxHeaderListSize < 256) {
            throw new IllegalArgumentException("http2.max_header_list_size must be at least 256, not " + maxHeaderListSize);
        }
        if (headerTableSize < 0) {
            throw new IllegalArgumentException("http2.header_table_size must not be negative");
        }
        positive("initial_window_size", initialWindowSize);
        if (connectionWindowSize < 65_535) {
            throw new IllegalArgumentException("http2.connection_window_size must be at least 65535 (RFC 9113's initial"
                    + " connection window), not " + connectionWindowSize);
        }
        if (maxFrameSize < 16_384 || maxFrameSize > (1 << 24) - 1) {
            throw new IllegalArgumentException("http2.max_frame_size must be within 16384..16777215, not " + maxFrameSize);
        }
        positive("settings_per_second", settingsPerSecond);
        positive("pings_per_second", pingsPerSecond);
        positive("resets_per_second", resetsPerSecond);
        positive("empty_data_per_second", emptyDataPerSecond);
        positive("continuations_per_second", continuationsPerSecond);
        positive("priorities_per_second", prioritiesPerSecond);
        positive("window_updates_per_second", windowUpdatesPerSecond);
        positive("unknown_frames_per_second", unknownFramesPerSecond);
        if (writeTimeout.isZero() || writeTimeout.isNegative()) {
            throw new IllegalArgumentException("http2.write_timeout must be above zero");
        }
    }

    private static void positive(String key, int v) {
        if (v < 1) {
            throw new IllegalArgumentException("http2." + key + " must be at least 1, not " + v);
        }
    }

    public Http2Limits withEnabled(boolean on) {
        return new Http2Limits(on, upgrade, h2cOnly, maxConcurrentStreams, maxHeaderListSize, headerTableSize, initialWindowSize,
                connectionWindowSize, maxFrameSize, settingsPerSecond, pingsPerSecond, resetsPerSecond, emptyDataPerSecond,
                continuationsPerSecond, prioritiesPerSecond, windowUpdatesPerSecond, unknownFramesPerSecond, writeTimeout);
    }

    public Http2Limits withUpgrade(boolean on) {
        return new Http2Limits(enabled, on, h2cOnly, maxConcurrentStreams, maxHeaderListSize, headerTableSize, initialWindowSize,
                connectionWindowSize, maxFrameSize, settingsPerSecond, pingsPerSecond, resetsPerSecond, emptyDataPerSecond,
                continuationsPerSecond, prioritiesPerSecond, windowUpdatesPerSecond, unknownFramesPerSecond, writeTimeout);
    }

    public Http2Limits withMaxConcurrentStreams(int n) {
        return new Http2Limits(enabled, upgrade, h2cOnly, n, maxHeaderListSize, headerTableSize, initialWindowSize,
                connectionWindowSize, maxFrameSize, settingsPerSecond, pingsPerSecond, resetsPerSecond, emptyDataPerSecond,
                continuationsPerSecond, prioritiesPerSecond, windowUpdatesPerSecond, unknownFramesPerSecond, writeTimeout);
    }

    public Http2Limits withWriteTimeout(Duration d) {
        return new Http2Limits(enabled, upgrade, h2cOnly, maxConcurrentStreams, maxHeaderListSize, headerTableSize,
                initialWindowSize, connectionWindowSize, maxFrameSize, settingsPerSecond, pingsPerSecond, resetsPerSecond,
                emptyDataPerSecond, continuationsPerSecond, prioritiesPerSecond, windowUpdatesPerSecond, unknownFramesPerSecond, d);
    }

    public Http2Limits withH2cOnly(boolean on) {
        return new Http2Limits(enabled, upgrade, on, maxConcurrentStreams, maxHeaderListSize, headerTableSize,
                initialWindowSize, connectionWindowSize, maxFrameSize, settingsPerSecond, pingsPerSecond, resetsPerSecond,
                emptyDataPerSecond, continuationsPerSecond, prioritiesPerSecond, windowUpdatesPerSecond, unknownFramesPerSecond,
                writeTimeout);
    }
}
