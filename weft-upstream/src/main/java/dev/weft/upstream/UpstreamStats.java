package dev.weft.upstream;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * What a simulator received. Bounded: at most {@link #MAX_PATHS} paths are kept apart (the rest
 * count under {@code (other)}) and at most {@link #MAX_IDS} distinct {@code webhook-id} values.
 */
public final class UpstreamStats {
    public static final int MAX_PATHS = 10_000;
    public static final int MAX_IDS = 2_000_000;
    static final String OTHER = "(other)";

    private final LongAdder requests = new LongAdder();
    private final LongAdder aborted = new LongAdder();
    private final LongAdder bytesReceived = new LongAdder();
    private final LongAdder connectionsOpened = new LongAdder();
    private final LongAdder connectionsRefused = new LongAdder();
    private final AtomicLong connectionsOpen = new AtomicLong();
    private final ConcurrentHashMap<String, PathStats> byPath = new ConcurrentHashMap<>();
    private final Set<String> webhookIds = ConcurrentHashMap.newKeySet();
    private final LongAdder webhookIdsDropped = new LongAdder();
    private final LongAdder webhookRequests = new LongAdder();

    private static final class PathStats {
        final LongAdder requests = new LongAdder();
        final ConcurrentHashMap<String, LongAdder> outcomes = new ConcurrentHashMap<>();
    }

    void connectionOpened() {
        connectionsOpened.increment();
        connectionsOpen.incrementAndGet();
    }

    void connectionClosed() {
        connectionsOpen.decrementAndGet();
    }

    void connectionRefused() {
        connectionsRefused.increment();
    }

    void received(String path, long bodyBytes, String webhookId) {
        requests.increment();
        bytesReceived.add(bodyBytes);
        pathStats(path).requests.increment();
        if (webhookId != null) {
            webhookRequests.increment();
            if (webhookIds.size() < MAX_IDS || webhookIds.contains(webhookId)) {
                webhookIds.add(webhookId);
            } else {
                webhookIdsDropped.increment();
            }
        }
    }

    /** An answer given (a status such as {@code 200}) or a fault ({@code hang}, {@code reset}, ...). */
    void recordAnswer(String path, String outcome) {
        pathStats(path).outcomes.computeIfAbsent(outcome, o -> new LongAdder()).increment();
    }

    /** The client closed the connection before the answer was complete. */
    void recordAborted() {
        aborted.increment();
    }

    private PathStats pathStats(String path) {
        PathStats s = byPath.get(path);
        if (s != null) {
            return s;
        }
        if (byPath.size() >= MAX_PATHS) {
            return byPath.computeIfAbsent(OTHER, p -> new PathStats());
        }
        return byPath.computeIfAbsent(path, p -> new PathStats());
    }

    public long requests() {
        return requests.sum();
    }

    public long aborted() {
        return aborted.sum();
    }

    public long requests(String path) {
        PathStats s = byPath.get(path);
        return s == null ? 0 : s.requests.sum();
    }

    /** How many answers of {@code outcome} (a status such as "200", or a fault name) went to {@code path}. */
    public long answered(String path, String outcome) {
        PathStats s = byPath.get(path);
        LongAdder a = s == null ? null : s.outcomes.get(outcome);
        return a == null ? 0 : a.sum();
    }

    public long distinctWebhookIds() {
        return webhookIds.size();
    }

    public boolean hasWebhookId(String id) {
        return webhookIds.contains(id);
    }

    public void reset() {
        requests.reset();
        aborted.reset();
        bytesReceived.reset();
        connectionsOpened.reset();
        connectionsRefused.reset();
        byPath.clear();
        webhookIds.clear();
        webhookIdsDropped.reset();
        webhookRequests.reset();
    }

    /** A JSON-ready snapshot; with {@code withIds}, the webhook-id values themselves too. */
    public Map<String, Object> snapshot(boolean withIds) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("requests", requests.sum());
        m.put("aborted", aborted.sum());
        m.put("bytes_received", bytesReceived.sum());
        Map<String, Object> conns = new LinkedHashMap<>();
        conns.put("opened", connectionsOpened.sum());
        conns.put("open", connectionsOpen.get());
        conns.put("refused", connectionsRefused.sum());
        m.put("connections", conns);
        Map<String, Long> total = new TreeMap<>();
        Map<String, Object> paths = new TreeMap<>();
        byPath.forEach((p, s) -> {
            Map<String, Object> ps = new LinkedHashMap<>();
            ps.put("requests", s.requests.sum());
            Map<String, Long> outs = new TreeMap<>();
            s.outcomes.forEach((o, n) -> {
                outs.put(o, n.sum());
                total.merge(o, n.sum(), Long::sum);
            });
            ps.put("answers", outs);
            paths.put(p, ps);
        });
        m.put("answers", total);
        m.put("by_path", paths);
        Map<String, Object> ids = new LinkedHashMap<>();
        ids.put("requests", webhookRequests.sum());
        ids.put("distinct", webhookIds.size());
        ids.put("dropped_over_limit", webhookIdsDropped.sum());
        if (withIds) {
            ids.put("values", new java.util.TreeSet<>(webhookIds));
        }
        m.put("webhook_ids", ids);
        return m;
    }
}
