package dev.weft.dispatch.config;

import com.fasterxml.jackson.core.JsonPointer;
import dev.weft.observe.LineSink;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * A checked {@code weft dispatch} config (see docs/dispatch.md).
 *
 * @param bootstrap      Kafka bootstrap servers; null: start or reuse the development broker of {@code weft kafka}
 * @param typePointer    where the event type is in a JSON record without a {@code type} header
 * @param maxOutstanding records taken from one partition and not yet done; at the limit the partition is paused
 * @param listen         the status server ({@code /-/health}, {@code /-/metrics}, {@code /-/endpoints})
 * @param drainTimeout   on stop, how long deliveries in flight may finish before the last commit
 * @param accessLog      {@code access_log}: one JSON line per delivery attempt; null: off
 * @param adminTokenEnv  the environment variable holding the bearer token of {@code POST /-/endpoints/ID/...};
 *                       null: those need no token
 */
public record DispatchConfig(String source, String bootstrap, List<String> topics, String group, JsonPointer typePointer,
                             int maxOutstanding, InetSocketAddress listen, Duration drainTimeout,
                             List<EndpointConfig> endpoints, LineSink.Target accessLog, String adminTokenEnv) {
    /** Without an access log, admin without a token. */
    public DispatchConfig(String source, String bootstrap, List<String> topics, String group, JsonPointer typePointer,
                          int maxOutstanding, InetSocketAddress listen, Duration drainTimeout,
                          List<EndpointConfig> endpoints) {
        this(source, bootstrap, topics, group, typePointer, maxOutstanding, listen, drainTimeout, endpoints, null, null);
    }

    public static final String DEFAULT_BOOTSTRAP = "127.0.0.1:9092";
    public static final int DEFAULT_MAX_OUTSTANDING = 5_000;
    public static final int DEFAULT_MAX_IN_FLIGHT = 100;
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(5);
    public static final List<Duration> DEFAULT_RETRY = List.of(Duration.ofSeconds(5), Duration.ofMinutes(5),
            Duration.ofMinutes(30), Duration.ofHours(2), Duration.ofHours(5), Duration.ofHours(10), Duration.ofHours(10));

    public EndpointConfig endpoint(String id) {
        for (EndpointConfig e : endpoints) {
            if (e.id().equals(id)) {
                return e;
            }
        }
        return null;
    }

    /** The compacted endpoint state topic (paused, disabled, throttled): {@code GROUP.state}. */
    public String stateTopic() {
        return group + ".state";
    }

    /** The dead-letter topic: {@code GROUP.dlq}. */
    public String deadLetterTopic() {
        return group + ".dlq";
    }

    /** Where an endpoint's deliveries wait for room in its lane: {@code GROUP.wait.ENDPOINT}. */
    public String waitTopic(String endpointId) {
        return group + ".wait." + endpointId;
    }

    /** Where failed attempts wait {@code delay}: {@code GROUP.retry.MILLIS} (one topic per distinct delay). */
    public String retryTopic(Duration delay) {
        return group + ".retry." + delay.toMillis();
    }

    /** Every retry delay used by an endpoint, in order. */
    public Set<Duration> retryDelays() {
        Set<Duration> s = new TreeSet<>();
        endpoints.forEach(e -> s.addAll(e.retry()));
        return s;
    }

    /** The topics this dispatcher parks work on (created when missing). */
    public List<String> parkingTopics() {
        List<String> t = new java.util.ArrayList<>();
        retryDelays().forEach(d -> t.add(retryTopic(d)));
        endpoints.forEach(e -> t.add(waitTopic(e.id())));
        return t;
    }
}
