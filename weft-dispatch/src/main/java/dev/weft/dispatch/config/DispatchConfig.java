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
 * @param adminTokenEnv  the environment variable holding the bearer token of every status path but
 *                       {@code /-/health} and {@code /-/ready}; null: none needs a token
 * @param brokerUnreadyAfter {@code /-/ready} answers 503 once Kafka has not answered for this long
 */
public record DispatchConfig(String source, String bootstrap, List<String> topics, String group, JsonPointer typePointer,
                             int maxOutstanding, InetSocketAddress listen, Duration drainTimeout,
                             List<EndpointConfig> endpoints, LineSink.Target accessLog, String adminTokenEnv,
                             Duration brokerUnreadyAfter) {
    /** As the canonical constructor, with the default {@link #DEFAULT_BROKER_UNREADY_AFTER}. */
    public DispatchConfig(String source, String bootstrap, List<String> topics, String group, JsonPointer typePointer,
                          int maxOutstanding, InetSocketAddress listen, Duration drainTimeout,
                          List<EndpointConfig> endpoints, LineSink.Target accessLog, String adminTokenEnv) {
        this(source, bootstrap, topics, group, typePointer, maxOutstanding, listen, drainTimeout, endpoints, accessLog,
                adminTokenEnv, DEFAULT_BROKER_UNREADY_AFTER);
    }

    /** Without an access log, admin without a token. */
    public DispatchConfig(String source, String bootstrap, List<String> topics, String group, JsonPointer typePointer,
                          int maxOutstanding, InetSocketAddress listen, Duration drainTimeout,
                          List<EndpointConfig> endpoints) {
        this(source, bootstrap, topics, group, typePointer, maxOutstanding, listen, drainTimeout, endpoints, null, null);
    }

    public static final String DEFAULT_BOOTSTRAP = "127.0.0.1:9092";
    public static final int DEFAULT_MAX_OUTSTANDING = 5_000;
    /** {@code broker_unready_after}'s default. */
    public static final Duration DEFAULT_BROKER_UNREADY_AFTER = Duration.ofSeconds(10);
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

    /** The shortest time a retry topic keeps records (and Kafka's default). */
    public static final Duration MIN_RETRY_RETENTION = Duration.ofDays(7);
    /** Room beyond twice a retry topic's delay: an outage of the whole group this long loses nothing parked. */
    public static final Duration RETRY_RETENTION_ROOM = Duration.ofDays(1);

    /**
     * How long {@code GROUP.retry.MILLIS} keeps records ({@code retention.ms}): twice its delay (a record waits its
     * delay +-10%) plus {@link #RETRY_RETENTION_ROOM}, and at least {@link #MIN_RETRY_RETENTION}. Wait topics and the
     * dead-letter topic keep records until they are read ({@code retention.ms=-1}).
     */
    public static Duration retryRetention(Duration delay) {
        Duration d = delay.multipliedBy(2).plus(RETRY_RETENTION_ROOM);
        return d.compareTo(MIN_RETRY_RETENTION) < 0 ? MIN_RETRY_RETENTION : d;
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
