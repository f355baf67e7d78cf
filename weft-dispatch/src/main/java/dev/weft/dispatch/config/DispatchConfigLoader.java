package dev.weft.dispatch.config;

import com.fasterxml.jackson.core.JsonPointer;
import dev.weft.core.HostPort;
import dev.weft.config.ConfigException;
import dev.weft.config.ConfigNode;
import dev.weft.config.Problems;

import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Reads a {@code weft dispatch} config and checks all of it before anything starts; every problem
 * names {@code file:line:column}. Format: docs/dispatch.md.
 */
public final class DispatchConfigLoader {
    public static final InetSocketAddress DEFAULT_LISTEN = new InetSocketAddress("127.0.0.1", 8090);
    public static final Duration DEFAULT_DRAIN = Duration.ofSeconds(10);
    public static final int MAX_ENDPOINTS = 1_000;
    public static final int MAX_RETRIES = 20;
    public static final int MAX_IN_FLIGHT = 10_000;
    public static final int MAX_QUEUE = 100_000;
    static final Duration MAX_TIMEOUT = Duration.ofMinutes(10);
    static final Duration MAX_RETRY_DELAY = Duration.ofDays(7);
    static final Pattern ID = Pattern.compile("[A-Za-z0-9_-]{1,64}");
    static final Pattern ENV = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,127}");
    static final Pattern TOPIC = Pattern.compile("[A-Za-z0-9._-]{1,200}");

    private final Problems problems = new Problems();

    private DispatchConfigLoader() {
    }

    public static DispatchConfig load(Path file) throws ConfigException {
        return new DispatchConfigLoader().read(file.toString(), ConfigNode.load(file));
    }

    /** For tests: parses text as if it were the file {@code name}. */
    public static DispatchConfig parse(String name, String text) throws ConfigException {
        return new DispatchConfigLoader().read(name, ConfigNode.parse(name, text));
    }

    private record Defaults(Duration timeout, int maxInFlight, Integer queue, List<Duration> retry,
                            boolean allowPrivate) {
    }

    private DispatchConfig read(String name, ConfigNode root) throws ConfigException {
        Map<String, ConfigNode> top = root.entries(Set.of("source", "defaults", "endpoints", "listen", "drain_timeout",
                "access_log", "admin_token_env", "broker_unready_after"),
                problems);
        String bootstrap = null;
        List<String> topics = List.of();
        String group = null;
        JsonPointer typePointer = JsonPointer.compile("/type");
        int maxOutstanding = DispatchConfig.DEFAULT_MAX_OUTSTANDING;
        ConfigNode source = top.get("source");
        if (source == null) {
            problems.add(root, "missing 'source' (bootstrap, topics, group)");
        } else {
            Map<String, ConfigNode> s = guard(() -> source.entries(Set.of("bootstrap", "topics", "group", "type_pointer",
                    "max_outstanding"), problems), Map.of());
            if (s.containsKey("bootstrap")) {
                bootstrap = guard(() -> checkBootstrap(s.get("bootstrap")), null);
            }
            ConfigNode t = s.get("topics");
            if (t == null) {
                problems.add(source, "missing 'topics': the topics to consume, such as [events]");
            } else {
                topics = guard(() -> topics(t), List.of());
            }
            ConfigNode g = s.get("group");
            if (g == null) {
                problems.add(source, "missing 'group': the Kafka consumer group, such as weft-push");
            } else {
                group = guard(() -> {
                    String v = g.text();
                    if (!TOPIC.matcher(v).matches()) {
                        throw g.error("a group name is 1-200 of A-Z a-z 0-9 . _ - (it prefixes the retry, wait and "
                                + "dead-letter topic names), got '" + v + "'");
                    }
                    return v;
                }, null);
            }
            if (s.containsKey("type_pointer")) {
                typePointer = guard(() -> pointer(s.get("type_pointer")), typePointer);
            }
            if (s.containsKey("max_outstanding")) {
                maxOutstanding = guard(() -> (int) s.get("max_outstanding").integer(1, 1_000_000), maxOutstanding);
            }
        }
        Defaults defaults = new Defaults(DispatchConfig.DEFAULT_TIMEOUT, DispatchConfig.DEFAULT_MAX_IN_FLIGHT, null,
                DispatchConfig.DEFAULT_RETRY, false);
        if (top.containsKey("defaults")) {
            defaults = guard(() -> defaults(top.get("defaults")), defaults);
        }
        List<EndpointConfig> endpoints = new ArrayList<>();
        ConfigNode eps = top.get("endpoints");
        if (eps == null) {
            problems.add(root, "missing 'endpoints': a list of {id, url, match, secret, ...}");
        } else {
            List<ConfigNode> items = guard(eps::items, List.of());
            if (items.isEmpty() && eps.isList()) {
                problems.add(eps, "no endpoints: give at least one");
            }
            if (items.size() > MAX_ENDPOINTS) {
                problems.add(eps, "at most " + MAX_ENDPOINTS + " endpoints, got " + items.size());
            }
            Set<String> ids = new HashSet<>();
            for (ConfigNode item : items) {
                Defaults d = defaults;
                EndpointConfig e = guard(() -> endpoint(item, d), null);
                if (e != null) {
                    if (!ids.add(e.id())) {
                        problems.add(item, "duplicate endpoint id '" + e.id() + "'");
                    }
                    endpoints.add(e);
                }
            }
        }
        InetSocketAddress listen = DEFAULT_LISTEN;
        if (top.containsKey("listen")) {
            ConfigNode l = top.get("listen");
            listen = guard(() -> {
                try {
                    return HostPort.parse(l.text());
                } catch (IllegalArgumentException e) {
                    throw l.error(e.getMessage());
                }
            }, listen);
        }
        Duration drain = DEFAULT_DRAIN;
        if (top.containsKey("drain_timeout")) {
            drain = guard(() -> duration(top.get("drain_timeout"), Duration.ZERO, MAX_TIMEOUT), drain);
        }
        Duration unreadyAfter = DispatchConfig.DEFAULT_BROKER_UNREADY_AFTER;
        if (top.containsKey("broker_unready_after")) {
            unreadyAfter = guard(() -> duration(top.get("broker_unready_after"), Duration.ofSeconds(5),
                    Duration.ofMinutes(10)), unreadyAfter);
        }
        String tokenEnv = null;
        if (top.containsKey("admin_token_env")) {
            ConfigNode t = top.get("admin_token_env");
            tokenEnv = guard(() -> {
                String v = t.text();
                if (!ENV.matcher(v).matches()) {
                    throw t.error("admin_token_env names an environment variable (A-Z a-z 0-9 _, not starting with "
                            + "a digit), got '" + v + "'");
                }
                return v;
            }, null);
        }
        dev.weft.observe.LineSink.Target accessLog = top.containsKey("access_log")
                ? dev.weft.observe.ObserveReaders.accessLog(top.get("access_log"), problems) : null;
        problems.throwIfAny();
        return new DispatchConfig(name, bootstrap, topics, group, typePointer, maxOutstanding, listen, drain,
                List.copyOf(endpoints), accessLog, tokenEnv, unreadyAfter);
    }

    private static String checkBootstrap(ConfigNode n) throws ConfigException {
        String v = n.text().strip();
        for (String hp : v.split(",")) {
            try {
                HostPort.parse(hp.strip());
            } catch (IllegalArgumentException e) {
                throw n.error("bootstrap is HOST:PORT[,HOST:PORT...]: " + e.getMessage());
            }
        }
        return v;
    }

    private static List<String> topics(ConfigNode t) throws ConfigException {
        List<ConfigNode> items = t.isScalar() ? List.of(t) : t.items();
        if (items.isEmpty()) {
            throw t.error("give at least one topic");
        }
        Set<String> out = new LinkedHashSet<>();
        for (ConfigNode i : items) {
            String v = i.text();
            if (!TOPIC.matcher(v).matches()) {
                throw i.error("a topic name is 1-200 of A-Z a-z 0-9 . _ -, got '" + v + "'");
            }
            out.add(v);
        }
        return List.copyOf(out);
    }

    private Defaults defaults(ConfigNode n) throws ConfigException {
        Map<String, ConfigNode> m = n.entries(Set.of("timeout", "max_in_flight", "queue", "retry", "allow_private"),
                problems);
        Duration timeout = m.containsKey("timeout") ? duration(m.get("timeout"), Duration.ofMillis(1), MAX_TIMEOUT)
                : DispatchConfig.DEFAULT_TIMEOUT;
        int maxInFlight = m.containsKey("max_in_flight") ? (int) m.get("max_in_flight").integer(1, MAX_IN_FLIGHT)
                : DispatchConfig.DEFAULT_MAX_IN_FLIGHT;
        Integer queue = m.containsKey("queue") ? (int) m.get("queue").integer(0, MAX_QUEUE) : null;
        List<Duration> retry = m.containsKey("retry") ? retry(m.get("retry")) : DispatchConfig.DEFAULT_RETRY;
        boolean allowPrivate = m.containsKey("allow_private") && m.get("allow_private").bool();
        return new Defaults(timeout, maxInFlight, queue, retry, allowPrivate);
    }

    private EndpointConfig endpoint(ConfigNode n, Defaults d) throws ConfigException {
        Map<String, ConfigNode> m = n.entries(Set.of("id", "url", "match", "secret", "timeout", "max_in_flight", "queue",
                "retry", "allow_private", "rate_limit", "burst"), problems);
        ConfigNode idNode = m.get("id");
        if (idNode == null) {
            throw n.error("an endpoint needs an 'id' (1-64 of A-Z a-z 0-9 _ -)");
        }
        String id = idNode.text();
        if (!ID.matcher(id).matches()) {
            throw idNode.error("an endpoint id is 1-64 of A-Z a-z 0-9 _ - (it names a topic), got '" + id + "'");
        }
        ConfigNode urlNode = m.get("url");
        if (urlNode == null) {
            throw n.error("endpoint '" + id + "' needs a 'url' (http:// or https://)");
        }
        URI url;
        try {
            url = new URI(urlNode.text());
        } catch (java.net.URISyntaxException e) {
            throw urlNode.error("not a URL: " + e.getMessage());
        }
        if (!("http".equals(url.getScheme()) || "https".equals(url.getScheme())) || url.getHost() == null) {
            throw urlNode.error("expected an absolute http:// or https:// URL with a host, got '" + urlNode.text() + "'");
        }
        boolean allowPrivate = m.containsKey("allow_private")
                ? guard(() -> m.get("allow_private").bool(), d.allowPrivate()) : d.allowPrivate();
        if (!allowPrivate) {
            guard(() -> guardTarget(urlNode, url), null);
        }
        EndpointConfig.RateLimit rateLimit = RateLimits.read(m.get("rate_limit"), m.get("burst"), problems);
        Match match = m.containsKey("match") ? guard(() -> match(m.get("match")), Match.ALL) : Match.ALL;
        byte[] secret = m.containsKey("secret") ? guard(() -> secret(m.get("secret")), null) : null;
        Duration timeout = m.containsKey("timeout")
                ? guard(() -> duration(m.get("timeout"), Duration.ofMillis(1), MAX_TIMEOUT), d.timeout()) : d.timeout();
        int maxInFlight = m.containsKey("max_in_flight")
                ? guard(() -> (int) m.get("max_in_flight").integer(1, MAX_IN_FLIGHT), d.maxInFlight()) : d.maxInFlight();
        int fallbackQueue = d.queue() != null ? d.queue() : maxInFlight;
        int queue = m.containsKey("queue") ? guard(() -> (int) m.get("queue").integer(0, MAX_QUEUE), fallbackQueue)
                : fallbackQueue;
        List<Duration> retry = m.containsKey("retry") ? guard(() -> retry(m.get("retry")), d.retry()) : d.retry();
        return new EndpointConfig(id, url, match, secret, timeout, maxInFlight, queue, retry, allowPrivate, rateLimit);
    }

    /**
     * The target guard at load time: a host that is or resolves to a non-public address is refused. A name
     * that does not resolve now is not an error here (DNS may be down); it is checked before each attempt.
     */
    private static Void guardTarget(ConfigNode urlNode, URI url) throws ConfigException {
        String why;
        try {
            why = TargetGuard.check(url.getHost());
        } catch (java.net.UnknownHostException e) {
            return null;
        }
        if (why != null) {
            throw urlNode.error("refused target: " + why + "; webhook targets must be public addresses (set "
                    + "'allow_private: true' on the endpoint or in 'defaults' for a target in your own network)");
        }
        return null;
    }

    private Match match(ConfigNode n) throws ConfigException {
        Map<String, ConfigNode> m = n.entries(Set.of("type", "pointer", "equals"), problems);
        Set<String> types = m.containsKey("type") ? texts(m.get("type")) : Set.of();
        JsonPointer pointer = m.containsKey("pointer") ? pointer(m.get("pointer")) : null;
        Set<String> equals = m.containsKey("equals") ? texts(m.get("equals")) : Set.of();
        if (pointer != null && equals.isEmpty()) {
            throw n.error("'pointer' needs 'equals': the value (or list of values) it must have");
        }
        if (pointer == null && !equals.isEmpty()) {
            throw n.error("'equals' needs 'pointer': where in the JSON record to look, such as /country");
        }
        if (types.isEmpty() && pointer == null) {
            throw n.error("an empty match: give 'type' and/or 'pointer' + 'equals', or leave 'match' out to take "
                    + "every record");
        }
        return new Match(types, pointer, equals);
    }

    private static Set<String> texts(ConfigNode n) throws ConfigException {
        Set<String> out = new LinkedHashSet<>();
        for (ConfigNode i : n.isScalar() ? List.of(n) : n.items()) {
            out.add(i.text());
        }
        if (out.isEmpty()) {
            throw n.error("expected a value or a list of values");
        }
        return Set.copyOf(out);
    }

    private static JsonPointer pointer(ConfigNode n) throws ConfigException {
        String v = n.text();
        try {
            if (!v.startsWith("/")) {
                throw new IllegalArgumentException("it must start with '/'");
            }
            return JsonPointer.compile(v);
        } catch (IllegalArgumentException e) {
            throw n.error("not a JSON pointer (RFC 6901, such as /country or /order/id): " + e.getMessage());
        }
    }

    /** A Standard Webhooks secret: {@code whsec_} + base64 of 24 to 64 bytes. */
    static byte[] secret(ConfigNode n) throws ConfigException {
        String v = n.text();
        if (!v.startsWith("whsec_")) {
            throw n.error("a secret is 'whsec_' followed by base64 (Standard Webhooks), such as "
                    + "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
        }
        byte[] key;
        try {
            key = Base64.getDecoder().decode(v.substring(6));
        } catch (IllegalArgumentException e) {
            throw n.error("the part after 'whsec_' is not base64: " + e.getMessage());
        }
        if (key.length < 24 || key.length > 64) {
            throw n.error("a secret holds 24 to 64 bytes (32 to 88 base64 characters), this one " + key.length);
        }
        return key;
    }

    private static List<Duration> retry(ConfigNode n) throws ConfigException {
        List<ConfigNode> items = n.items();
        if (items.size() > MAX_RETRIES) {
            throw n.error("at most " + MAX_RETRIES + " retry delays, got " + items.size());
        }
        List<Duration> out = new ArrayList<>();
        for (ConfigNode i : items) {
            out.add(duration(i, Duration.ofMillis(1), MAX_RETRY_DELAY));
        }
        return List.copyOf(out);
    }

    private static Duration duration(ConfigNode n, Duration min, Duration max) throws ConfigException {
        Duration d = n.duration();
        if (d.compareTo(min) < 0 || d.compareTo(max) > 0) {
            throw n.error("expected a duration from " + dev.weft.core.Durations.format(min) + " to "
                    + dev.weft.core.Durations.format(max) + ", got " + n.text());
        }
        return d;
    }

    private interface Read<T> {
        T get() throws ConfigException;
    }

    /** Runs {@code r}; a problem is recorded (so every problem is reported) and {@code fallback} returned. */
    private <T> T guard(Read<T> r, T fallback) {
        try {
            return r.get();
        } catch (ConfigException e) {
            problems.addAll(e);
            return fallback;
        }
    }
}
