package dev.weft.gateway.config;

import dev.weft.core.HostPort;
import dev.weft.client.Destination;
import dev.weft.client.DestinationConfig;
import dev.weft.config.ConfigException;
import dev.weft.config.ConfigNode;
import dev.weft.observe.ObserveReaders;
import dev.weft.observe.LineSink;
import dev.weft.config.Problems;
import dev.weft.server.ExecutorModel;
import dev.weft.server.ServerLimits;
import dev.weft.client.policy.HedgePolicy;
import dev.weft.client.policy.RetryPolicy;
import dev.weft.gateway.plan.BodyTemplate;
import dev.weft.gateway.plan.CallSpec;
import dev.weft.gateway.plan.PathPattern;
import dev.weft.gateway.plan.ProxyRoute;
import dev.weft.gateway.plan.RoutePlan;
import dev.weft.gateway.plan.Template;

import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Reads a gateway config (YAML, or JSON) and checks all of it before anything starts: every problem is
 * reported with {@code file:line:column} and the expected form. See docs/gateway.md for the format.
 */
public final class GatewayConfigLoader {
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(2);
    public static final Duration DEFAULT_CALL_TIMEOUT = Duration.ofSeconds(1);
    public static final InetSocketAddress DEFAULT_LISTEN = new InetSocketAddress("127.0.0.1", 8080);
    static final Set<String> METHODS = Set.of("get", "post", "put", "delete", "patch", "head", "options");

    private final Problems problems = new Problems();
    private final CoreReaders core = new CoreReaders(problems);
    private java.util.function.Function<String, String> env = System::getenv;
    /** The open-file limit the defaults are sized to (DescriptorBudget.fit): this process's. */
    private long descriptorLimit = dev.weft.os.Descriptors.limit();

    private GatewayConfigLoader() {
    }

    public static GatewayConfig load(Path file) throws ConfigException {
        return load(file, System::getenv);
    }

    /** @param env where {@code password_env} and {@code token_env} are looked up (the process's environment) */
    public static GatewayConfig load(Path file, java.util.function.Function<String, String> env) throws ConfigException {
        GatewayConfigLoader l = new GatewayConfigLoader();
        l.env = env;
        return l.read(file, ConfigNode.load(file));
    }

    /** For tests and `weft check`: parses text as if it were {@code name}. */
    public static GatewayConfig parse(String name, String text) throws ConfigException {
        return new GatewayConfigLoader().read(Path.of(name), ConfigNode.parse(name, text));
    }

    /**
     * For tests: as {@link #parse(String, String)}, with the defaults sized to {@code descriptorLimit} instead of this
     * process's open-file limit (0: unknown, the documented defaults).
     */
    public static GatewayConfig parse(String name, String text, long descriptorLimit) throws ConfigException {
        GatewayConfigLoader l = new GatewayConfigLoader();
        l.descriptorLimit = descriptorLimit;
        return l.read(Path.of(name), ConfigNode.parse(name, text));
    }

    /** Which max_connections the file sets itself (the others are defaults, which DescriptorBudget.fit sizes). */
    private static DescriptorBudget.SetBounds setBounds(Map<String, ConfigNode> top) {
        Set<String> destinations = new HashSet<>();
        if (top.containsKey("destinations")) {
            try {
                for (Map.Entry<String, ConfigNode> e : top.get("destinations").entries().entrySet()) {
                    if (setsMaxConnections(e.getValue())) {
                        destinations.add(Destination.of(e.getKey()).key());
                    }
                }
            } catch (ConfigException | IllegalArgumentException e) {
                // reported where the destinations are read
            }
        }
        return new DescriptorBudget.SetBounds(setsMaxConnections(top.get("limits")),
                setsMaxConnections(top.get("destination_defaults")), destinations);
    }

    private static boolean setsMaxConnections(ConfigNode n) {
        try {
            return n != null && n.isMap() && n.entries().containsKey("max_connections");
        } catch (ConfigException e) {
            return false; // reported where the node is read
        }
    }

    private GatewayConfig read(Path file, ConfigNode root) throws ConfigException {
        Map<String, ConfigNode> top = root.entries(Set.of("listen", "executor", "limits", "defaults",
                "destination_defaults", "destinations", "routes", "tls", "admin", "access_log", "tracing",
                "admission", "http2"), problems);
        TlsAdminReader tlsAdmin = new TlsAdminReader(problems, file, env);
        TlsConfig tls = top.containsKey("tls") ? tlsAdmin.tls(top.get("tls")) : null;
        AdminConfig admin = top.containsKey("admin") ? tlsAdmin.admin(top.get("admin")) : null;
        InetSocketAddress listen = DEFAULT_LISTEN;
        if (top.containsKey("listen")) {
            listen = guard(top.get("listen"), n -> HostPort.parse(n.text()), DEFAULT_LISTEN);
        }
        ExecutorModel executor = new ExecutorModel.Virtual();
        if (top.containsKey("executor")) {
            executor = guard(top.get("executor"), n -> ExecutorModel.parse(n.text()), executor);
        }
        ServerLimits limits = top.containsKey("limits") ? core.serverLimits(top.get("limits")) : ServerLimits.DEFAULT;
        Duration timeout = DEFAULT_TIMEOUT;
        Duration callTimeout = DEFAULT_CALL_TIMEOUT;
        if (top.containsKey("defaults")) {
            Map<String, ConfigNode> d = entries(top.get("defaults"), Set.of("timeout", "call_timeout"));
            if (d.containsKey("timeout")) {
                timeout = positive(d.get("timeout"), timeout);
            }
            if (d.containsKey("call_timeout")) {
                callTimeout = positive(d.get("call_timeout"), callTimeout);
            }
        }
        DestinationConfig destDefaults = top.containsKey("destination_defaults")
                ? core.destinationDefaults(top.get("destination_defaults"), DestinationConfig.DEFAULT) : DestinationConfig.DEFAULT;
        Map<String, DestinationConfig> destinations = new LinkedHashMap<>();
        if (top.containsKey("destinations")) {
            for (Map.Entry<String, ConfigNode> e : entries(top.get("destinations"), null).entrySet()) {
                try {
                    Destination d = Destination.of(e.getKey());
                    if (!e.getKey().replaceAll("/+$", "").equalsIgnoreCase(d.key())
                            && !e.getKey().replaceAll("/+$", "").equalsIgnoreCase(d.scheme() + "://" + d.host())) {
                        problems.add(e.getValue(), "destination '" + e.getKey() + "' must be scheme://host:port "
                                + "with no path, such as http://127.0.0.1:9001");
                    }
                    destinations.put(d.key(), core.destination(e.getValue(), destDefaults));
                } catch (IllegalArgumentException ex) {
                    problems.add(e.getValue(), "destination '" + e.getKey() + "': " + ex.getMessage());
                }
            }
        }
        List<RoutePlan> routes = new ArrayList<>();
        List<ProxyRoute> proxies = new ArrayList<>();
        if (!top.containsKey("routes")) {
            problems.add(root, "no routes: add a 'routes:' list (see docs/gateway.md)");
        } else {
            Set<String> seen = new HashSet<>();
            Set<String> prefixes = new HashSet<>();
            for (ConfigNode r : items(top.get("routes"))) {
                if (r.isMap() && (entries(r, null).containsKey("proxy") || entries(r, null).containsKey("prefix"))) {
                    ProxyRoute p = proxy(r, timeout);
                    if (p != null && !prefixes.add(p.prefix())) {
                        problems.add(r, "proxy route " + p.prefix() + " is declared twice");
                    } else if (p != null) {
                        proxies.add(p);
                    }
                    continue;
                }
                RoutePlan p = route(r, timeout, callTimeout);
                if (p != null && !seen.add(p.method() + " " + p.path())) {
                    problems.add(r, "route " + p.id() + " is declared twice");
                }
                if (p != null) {
                    routes.add(p);
                }
            }
        }
        LineSink.Target accessLog = top.containsKey("access_log")
                ? ObserveReaders.accessLog(top.get("access_log"), problems) : null;
        ObserveReaders.Tracing tracing = top.containsKey("tracing")
                ? ObserveReaders.tracing(top.get("tracing"), problems) : ObserveReaders.Tracing.OFF;
        dev.weft.server.admission.AdmissionPolicy admission = top.containsKey("admission")
                ? new AdmissionReader(problems).read(top.get("admission"), java.util.stream.Stream.concat(
                        routes.stream().map(RoutePlan::id), proxies.stream().map(ProxyRoute::id)).toList())
                : dev.weft.server.admission.AdmissionPolicy.DEFAULT;
        dev.weft.server.http2.Http2Limits http2 = top.containsKey("http2")
                ? new Http2Reader(problems).read(top.get("http2")) : dev.weft.server.http2.Http2Limits.DEFAULT;
        problems.throwIfAny();
        return DescriptorBudget.fit(new GatewayConfig(file, listen, executor, limits, destDefaults, destinations,
                List.copyOf(routes), tls, admin, accessLog, tracing, admission, http2, List.copyOf(proxies)), setBounds(top),
                descriptorLimit);
    }

    // ---- routes ------------------------------------------------------------------------------------

    private RoutePlan route(ConfigNode node, Duration defaultTimeout, Duration callTimeout) {
        Set<String> keys = new HashSet<>(METHODS);
        keys.addAll(Set.of("method", "path", "timeout", "forward_headers", "calls", "respond"));
        Map<String, ConfigNode> r = entries(node, keys);
        String method = null;
        String path = null;
        ConfigNode pathNode = node;
        for (String m : METHODS) {
            if (r.containsKey(m)) {
                if (method != null) {
                    problems.add(r.get(m), "a route has one method; found " + method.toLowerCase(Locale.ROOT) + " and " + m);
                }
                method = m.toUpperCase(Locale.ROOT);
                pathNode = r.get(m);
                path = text(pathNode);
            }
        }
        if (r.containsKey("method") || r.containsKey("path")) {
            if (method != null) {
                problems.add(node, "write either 'get: /path' or 'method:' with 'path:', not both");
            }
            method = r.containsKey("method") ? text(r.get("method")) : "GET";
            method = method == null ? "GET" : method.toUpperCase(Locale.ROOT);
            pathNode = r.getOrDefault("path", node);
            path = r.containsKey("path") ? text(r.get("path")) : null;
            if (!METHODS.contains(method.toLowerCase(Locale.ROOT))) {
                problems.add(r.get("method"), "expected one of " + new TreeSet<>(METHODS) + ", got '" + method + "'");
            }
        }
        if (path == null) {
            problems.add(node, "a route needs a method and path, such as 'get: /orders/{id}'");
            return null;
        }
        PathPattern pattern;
        try {
            pattern = PathPattern.parse(path);
        } catch (IllegalArgumentException e) {
            problems.add(pathNode, e.getMessage());
            return null;
        }
        Duration timeout = r.containsKey("timeout") ? positive(r.get("timeout"), defaultTimeout) : defaultTimeout;
        List<String> forward = new ArrayList<>();
        if (r.containsKey("forward_headers")) {
            for (ConfigNode h : items(r.get("forward_headers"))) {
                String t = text(h);
                if (t != null) {
                    forward.add(t.toLowerCase(Locale.ROOT));
                }
            }
        }
        if (!r.containsKey("calls")) {
            problems.add(node, "route " + method + " " + path + " has no calls");
            return null;
        }
        Map<String, ConfigNode> callNodes = entries(r.get("calls"), null);
        if (callNodes.isEmpty()) {
            problems.add(r.get("calls"), "route " + method + " " + path + " has no calls");
            return null;
        }
        Map<String, CallSpec> calls = new LinkedHashMap<>();
        for (Map.Entry<String, ConfigNode> e : callNodes.entrySet()) {
            CallSpec c = call(e.getKey(), e.getValue(), callTimeout, callNodes.keySet(), pattern);
            if (c != null) {
                calls.put(c.name(), c);
            }
        }
        String statusFrom = null;
        boolean merge = false;
        if (r.containsKey("respond")) {
            Map<String, ConfigNode> resp = entries(r.get("respond"), Set.of("status_from", "merge"));
            if (resp.containsKey("status_from")) {
                statusFrom = text(resp.get("status_from"));
                if (statusFrom != null && !callNodes.containsKey(statusFrom)) {
                    problems.add(resp.get("status_from"), "status_from names '" + statusFrom
                            + "', which is not a call of this route (calls: " + String.join(", ", callNodes.keySet()) + ")");
                }
            }
            if (resp.containsKey("merge")) {
                merge = guard(resp.get("merge"), ConfigNode::bool, false);
            }
        }
        List<CallSpec> ordered = order(calls, callNodes);
        if (ordered == null) {
            return null;
        }
        return new RoutePlan(method, pattern, timeout, List.copyOf(forward), ordered, statusFrom, merge,
                node.location());
    }

    private static final Set<String> PROXY_KEYS = Set.of("prefix", "proxy", "timeout", "max_body", "retry", "hedge",
            "x_forwarded", "via", "stream_answers");

    /** A {@code proxy:} route: {@code {prefix: /b/, proxy: http://host:port/v1/}}. */
    private ProxyRoute proxy(ConfigNode node, Duration defaultTimeout) {
        Map<String, ConfigNode> r = entries(node, PROXY_KEYS);
        if (!r.containsKey("prefix") || !r.containsKey("proxy")) {
            problems.add(node, "a proxy route needs 'prefix:' and 'proxy:', such as "
                    + "{prefix: /b/, proxy: \"http://127.0.0.1:9001/v1/\"}");
            return null;
        }
        String prefix = text(r.get("prefix"));
        if (prefix != null && (!prefix.startsWith("/") || prefix.contains("?") || prefix.contains("{"))) {
            problems.add(r.get("prefix"), "expected a path prefix starting with '/', without '?' or '{', got '" + prefix + "'");
            prefix = null;
        }
        String target = text(r.get("proxy"));
        URI uri = null;
        if (target != null) {
            try {
                uri = new URI(target);
                if (uri.getScheme() == null || !(uri.getScheme().equals("http") || uri.getScheme().equals("https"))
                        || uri.getHost() == null || uri.getRawQuery() != null || uri.getRawFragment() != null
                        || uri.getRawUserInfo() != null) {
                    problems.add(r.get("proxy"), "expected an absolute http:// or https:// URL with a host and no "
                            + "query, fragment or user, such as http://127.0.0.1:9001/v1/; got '" + target + "'");
                    uri = null;
                }
            } catch (java.net.URISyntaxException e) {
                problems.add(r.get("proxy"), "not a URL: " + e.getMessage());
            }
        }
        Duration timeout = r.containsKey("timeout") ? positive(r.get("timeout"), defaultTimeout) : defaultTimeout;
        long maxBody = r.containsKey("max_body")
                ? guard(r.get("max_body"), n -> n.bytes(Integer.MAX_VALUE - 8), ProxyRoute.DEFAULT_MAX_BODY)
                : ProxyRoute.DEFAULT_MAX_BODY;
        RetryPolicy retry = r.containsKey("retry") ? core.retry(r.get("retry"), RetryPolicy.DEFAULT) : null;
        HedgePolicy hedge = r.containsKey("hedge") ? core.hedge(r.get("hedge")) : null;
        boolean xForwarded = !r.containsKey("x_forwarded") || guard(r.get("x_forwarded"), ConfigNode::bool, true);
        String via = null;
        if (r.containsKey("via")) {
            via = text(r.get("via"));
            if (via != null && !via.matches("[A-Za-z0-9!#$%&'*+.^_`|~-]+")) {
                problems.add(r.get("via"), "expected a pseudonym (one token, such as weft), got '" + via + "'");
                via = null;
            }
        }
        boolean streamAnswers = r.containsKey("stream_answers")
                && guard(r.get("stream_answers"), ConfigNode::bool, false);
        if (streamAnswers) {
            for (String k : List.of("retry", "hedge")) {
                if (r.containsKey(k)) {
                    problems.add(r.get(k), "a route with stream_answers: true makes every call once, as its answer "
                            + "may stream: remove '" + k + ":' here (or stream_answers)");
                }
            }
        }
        if (prefix == null || uri == null) {
            return null;
        }
        return new ProxyRoute(prefix, uri, timeout, maxBody, retry, hedge, xForwarded, via, node.location(),
                streamAnswers);
    }

    private static final Set<String> CALL_KEYS = Set.of("url", "method", "headers", "body", "needs", "foreach",
            "concurrency", "timeout", "optional", "hedge", "retry", "pick", "omit", "as");

    private CallSpec call(String name, ConfigNode node, Duration callTimeout, Set<String> allCalls, PathPattern path) {
        if (!name.matches("[A-Za-z_][A-Za-z0-9_-]*") || Template.Ref.REQUEST_ROOTS.contains(name) || name.equals("item")) {
            problems.add(node, "call name '" + name + "' must be letters, digits, _ or - and not path, query, header or item");
            return null;
        }
        Map<String, ConfigNode> c = entries(node, CALL_KEYS);
        if (!c.containsKey("url")) {
            problems.add(node, "call '" + name + "' needs a url");
            return null;
        }
        int before = problemCount();
        Template url = template(c.get("url"));
        String method = c.containsKey("method") ? text(c.get("method")) : "GET";
        method = method == null ? "GET" : method.toUpperCase(Locale.ROOT);
        if (!METHODS.contains(method.toLowerCase(Locale.ROOT))) {
            problems.add(c.get("method"), "expected one of " + new TreeSet<>(METHODS) + ", got '" + method + "'");
        }
        Map<String, Template> headers = new LinkedHashMap<>();
        if (c.containsKey("headers")) {
            for (Map.Entry<String, ConfigNode> h : entries(c.get("headers"), null).entrySet()) {
                Template t = template(h.getValue());
                if (t != null) {
                    headers.put(h.getKey(), t);
                }
            }
        }
        BodyTemplate body = null;
        if (c.containsKey("body")) {
            try {
                body = BodyTemplate.of(c.get("body").toPlain());
            } catch (ConfigException e) {
                problems.addAll(e);
            } catch (IllegalArgumentException e) {
                problems.add(c.get("body"), e.getMessage());
            }
        }
        Set<String> needs = new LinkedHashSet<>();
        if (c.containsKey("needs")) {
            for (ConfigNode n : items(c.get("needs"))) {
                String dep = text(n);
                if (dep != null) {
                    needs.add(dep);
                }
            }
        }
        Template.Ref foreach = null;
        if (c.containsKey("foreach")) {
            String expr = text(c.get("foreach"));
            if (expr != null) {
                try {
                    foreach = Template.parse("{" + expr.replaceAll("^\\{|\\}$", "") + "}").single();
                    if (foreach == null || !foreach.isCall() || !foreach.part().equals("body")) {
                        problems.add(c.get("foreach"), "foreach takes an array of an earlier call's body, such as "
                                + "orders.body.items");
                        foreach = null;
                    }
                } catch (IllegalArgumentException e) {
                    problems.add(c.get("foreach"), e.getMessage());
                }
            }
        }
        int concurrency = c.containsKey("concurrency")
                ? guard(c.get("concurrency"), n -> (int) n.integer(1, CallSpec.MAX_CONCURRENCY), CallSpec.DEFAULT_CONCURRENCY)
                : CallSpec.DEFAULT_CONCURRENCY;
        Duration timeout = c.containsKey("timeout") ? positive(c.get("timeout"), callTimeout) : callTimeout;
        boolean optional = c.containsKey("optional") && guard(c.get("optional"), ConfigNode::bool, false);
        HedgePolicy hedge = c.containsKey("hedge") ? core.hedge(c.get("hedge")) : null;
        RetryPolicy retry = c.containsKey("retry") ? core.retry(c.get("retry"), RetryPolicy.DEFAULT) : null;
        List<String> pick = c.containsKey("pick") ? strings(c.get("pick")) : List.of();
        List<String> omit = c.containsKey("omit") ? strings(c.get("omit")) : List.of();
        String as = c.containsKey("as") ? text(c.get("as")) : null;

        // Where every template reads from: request values that exist, calls that exist, item under foreach.
        List<Template> templates = new ArrayList<>();
        if (url != null) {
            templates.add(url);
        }
        templates.addAll(headers.values());
        if (body != null) {
            templates.addAll(body.templates());
        }
        for (Template t : templates) {
            for (Template.Ref ref : t.refs()) {
                if (ref.root().equals("path") && !path.parameterNames().contains(ref.path().getFirst())) {
                    problems.add(node, "call '" + name + "' reads {" + ref + "}, but the route path " + path
                            + " has no {" + ref.path().getFirst() + "}");
                } else if (ref.root().equals("item") && foreach == null) {
                    problems.add(node, "call '" + name + "' reads {" + ref + "} but has no foreach");
                } else if (ref.isCall()) {
                    if (!allCalls.contains(ref.root())) {
                        problems.add(node, "call '" + name + "' reads {" + ref + "}, but this route has no call '"
                                + ref.root() + "' (calls: " + String.join(", ", allCalls) + ")");
                    }
                    needs.add(ref.root());
                }
            }
        }
        if (foreach != null) {
            needs.add(foreach.root());
        }
        for (String dep : needs) {
            if (!allCalls.contains(dep)) {
                problems.add(c.getOrDefault("needs", node), "call '" + name + "' needs '" + dep
                        + "', which is not a call of this route (calls: " + String.join(", ", allCalls) + ")");
            } else if (dep.equals(name)) {
                problems.add(c.getOrDefault("needs", node), "call '" + name + "' needs itself");
            }
        }
        if (problemCount() > before || url == null) {
            return null;
        }
        return new CallSpec(name, method, url, Map.copyOf(headers), body, Set.copyOf(needs), foreach, concurrency,
                timeout, optional, hedge, retry, pick, omit, as, node.location());
    }

    /** Topological order (declaration order among ready calls); a cycle is reported with its path. */
    private List<CallSpec> order(Map<String, CallSpec> calls, Map<String, ConfigNode> nodes) {
        if (calls.size() != nodes.size()) {
            return null; // a call had errors, already reported
        }
        List<CallSpec> out = new ArrayList<>();
        Map<String, Integer> state = new HashMap<>(); // 1 visiting, 2 done
        for (String n : calls.keySet()) {
            List<String> stack = new ArrayList<>();
            if (!visit(n, calls, state, stack, out)) {
                String start = stack.getLast();
                List<String> cycle = stack.subList(stack.indexOf(start), stack.size());
                problems.add(nodes.get(start), "calls form a cycle: " + String.join(" -> ", cycle));
                return null;
            }
        }
        return List.copyOf(out);
    }

    private static boolean visit(String n, Map<String, CallSpec> calls, Map<String, Integer> state, List<String> stack,
                                 List<CallSpec> out) {
        Integer s = state.get(n);
        if (s != null && s == 2) {
            return true;
        }
        stack.add(n);
        if (s != null) {
            return false;
        }
        state.put(n, 1);
        for (String dep : calls.get(n).needs()) {
            if (!visit(dep, calls, state, stack, out)) {
                return false;
            }
        }
        state.put(n, 2);
        stack.removeLast();
        out.add(calls.get(n));
        return true;
    }

    // ---- small helpers that report instead of throwing --------------------------------------------

    @FunctionalInterface
    private interface Reader<T> {
        T read(ConfigNode n) throws ConfigException;
    }

    private <T> T guard(ConfigNode n, Reader<T> r, T fallback) {
        try {
            return r.read(n);
        } catch (ConfigException e) {
            problems.addAll(e);
        } catch (IllegalArgumentException e) {
            problems.add(n, e.getMessage());
        }
        return fallback;
    }

    private Duration positive(ConfigNode n, Duration fallback) {
        Duration d = guard(n, ConfigNode::duration, fallback);
        if (d.isZero() || d.isNegative()) {
            problems.add(n, "expected a duration above zero, such as 500ms");
            return fallback;
        }
        return d;
    }

    private String text(ConfigNode n) {
        return guard(n, ConfigNode::text, null);
    }

    private Template template(ConfigNode n) {
        String t = text(n);
        if (t == null) {
            return null;
        }
        try {
            return Template.parse(t);
        } catch (IllegalArgumentException e) {
            problems.add(n, e.getMessage());
            return null;
        }
    }

    private List<String> strings(ConfigNode n) {
        List<String> out = new ArrayList<>();
        for (ConfigNode i : items(n)) {
            String t = text(i);
            if (t != null) {
                out.add(t);
            }
        }
        return List.copyOf(out);
    }

    private Map<String, ConfigNode> entries(ConfigNode n, Set<String> allowed) {
        try {
            return allowed == null ? n.entries() : n.entries(allowed, problems);
        } catch (ConfigException e) {
            problems.addAll(e);
            return Map.of();
        }
    }

    private List<ConfigNode> items(ConfigNode n) {
        try {
            return n.items();
        } catch (ConfigException e) {
            problems.addAll(e);
            return List.of();
        }
    }

    private int problemCount() {
        return problems.size();
    }
}
