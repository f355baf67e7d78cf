package dev.weft.lab.chaos;

import com.fasterxml.jackson.databind.JsonNode;
import dev.weft.client.CallRequest;
import dev.weft.client.CallResult;
import dev.weft.client.Transport;
import dev.weft.devtools.ChildProcess;
import dev.weft.json.Json;
import dev.weft.lab.GatewayProcess;
import dev.weft.lab.LoadClient;
import dev.weft.devtools.UpstreamProcess;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The gateway's side of {@code weft lab chaos}: {@code weft gateway} in a child JVM with one route that calls two
 * backends (weft-upstream, each behind a Toxiproxy proxy of its own) under a route deadline; a closed loop of clients (the
 * lab's own client) calls it while the run's faults come and go. A run applies each toxic kind (latency, reset_peer,
 * timeout, bandwidth, slicer) once, in an order, on a backend and a stream, with attributes its seed draws. Then:
 * <ul>
 * <li>no call outlived its deadline by more than {@link #SLACK}: every answer, 200 or not, arrived within the
 * route's deadline + {@link #SLACK} of its request being sent;</li>
 * <li>every 502 or 504 names, as its failed {@code call}, a backend whose proxy had a toxic while the request was
 * in flight (or up to {@link #AFTER} before it was sent: a connection the toxic broke is found broken on its next
 * use);</li>
 * <li>every request got an answer (a client that reaches no gateway is a failure of its own).</li>
 * </ul>
 * The gateway writes an access log; each run also prints the gateway's own durations (from its handler's start to
 * its answer) beside the clients' view, so a late answer shows where its time went.
 * The breaker is off in the gateway's config: an open breaker fails a backend's calls for {@code open_for} after its
 * fault ended, which would hide whether each failure came from the fault in force.
 */
public final class GatewayChaos {
    /** How late past the route's deadline an answer may arrive (the bound). */
    public static final Duration SLACK = Duration.ofMillis(100);
    /** How long after a toxic is removed a failure is still put down to it. */
    static final Duration AFTER = Duration.ofSeconds(1);
    static final List<String> BACKENDS = List.of("b", "c");
    static final List<ChaosLab.Fault> TOXICS = List.of(ChaosLab.Fault.ENDPOINT_LATENCY, ChaosLab.Fault.ENDPOINT_RESET_PEER,
            ChaosLab.Fault.ENDPOINT_TIMEOUT, ChaosLab.Fault.ENDPOINT_BANDWIDTH, ChaosLab.Fault.ENDPOINT_SLICER);

    /**
     * @param runs     seeded runs; run i uses seed {@code seed + i}
     * @param clients  the closed loop: each sends its next request when the previous one is answered
     * @param warmup   the closed loop runs this long before the first toxic (its answers count too): the clients'
     *                 connections and the backends' pools are opened, as in a gateway in service
     * @param deadline the route's {@code timeout:}
     * @param faultFor how long each toxic stays
     * @param gap      quiet time after each toxic before the next
     * @param latency  each backend's latency (weft-upstream's {@code ?latency=})
     */
    public record Options(int runs, long seed, int clients, Duration warmup, Duration deadline, Duration faultFor,
                          Duration gap, Duration latency) {
        public Options {
            if (runs < 1 || clients < 1 || clients > 1000) {
                throw new IllegalArgumentException("runs must be at least 1, clients 1..1000");
            }
        }

        public static Options defaults(int runs, long seed) {
            return new Options(runs, seed, 50, Duration.ofSeconds(2), Duration.ofSeconds(1), Duration.ofSeconds(2),
                    Duration.ofSeconds(1), Duration.ofMillis(100));
        }
    }

    /**
     * One request: sent at {@code sentNanos}, answered {@code nanos} later; status 0 when no answer came. {@code id} is
     * its path's {id}, by which the gateway's access log gives its own duration.
     */
    record Answer(long id, long sentNanos, long nanos, int status, String failedCall, String reason) {
    }

    /** A toxic on {@code backend}'s proxy from {@code fromNanos} to {@code toNanos}. */
    record Window(String backend, long fromNanos, long toNanos) {
    }

    public record RunResult(long seed, List<ChaosLab.Applied> faults, int answers, Map<Integer, Integer> byStatus,
                            Map<String, Integer> failedBy, double p50Millis, double p99Millis, double maxMillis,
                            double gatewayMaxMillis, int gatewayLogged, int gatewayLate, List<String> late,
                            List<String> misnamed, int unanswered) {
        public boolean ok() {
            return late.isEmpty() && misnamed.isEmpty() && unanswered == 0;
        }
    }

    public record Summary(List<RunResult> runs) {
        public long late() {
            return runs.stream().mapToLong(r -> r.late().size()).sum();
        }

        public long misnamed() {
            return runs.stream().mapToLong(r -> r.misnamed().size()).sum();
        }

        public long unanswered() {
            return runs.stream().mapToLong(RunResult::unanswered).sum();
        }
    }

    private GatewayChaos() {
    }

    /** Each toxic kind once, in the order, on the backend and stream, with the attributes {@code seed} draws. */
    public static List<ChaosLab.Applied> plan(long seed) {
        Random rnd = new Random(seed);
        List<ChaosLab.Fault> order = new ArrayList<>(TOXICS);
        Collections.shuffle(order, rnd);
        List<ChaosLab.Applied> out = new ArrayList<>();
        for (ChaosLab.Fault f : order) {
            String backend = BACKENDS.get(rnd.nextInt(BACKENDS.size()));
            String stream = rnd.nextBoolean() ? "downstream" : "upstream";
            out.add(new ChaosLab.Applied(f, "backend-" + backend, stream, ChaosLab.attributes(f, 1, rnd)));
        }
        return out;
    }

    static String config(Duration deadline, Duration latency, Map<String, String> backendUrls, Path accessLog) {
        StringBuilder b = new StringBuilder("listen: 127.0.0.1:0\n");
        b.append("# the gateway's own duration of each request, printed beside a late answer's\n");
        b.append("access_log: \"").append(accessLog.toAbsolutePath()).append("\"\n");
        b.append("# the breaker off: every failure belongs to the fault in force (see GatewayChaos)\n");
        b.append("destination_defaults: { breaker: { enabled: false } }\n");
        b.append("routes:\n  - get: /chaos/{id}\n    timeout: ").append(deadline.toMillis()).append("ms\n    calls:\n");
        for (String be : BACKENDS) {
            b.append("      ").append(be).append(": { url: \"").append(backendUrls.get(be)).append("/").append(be)
                    .append("/{path.id}?latency=").append(latency.toMillis()).append("ms\" }\n");
        }
        return b.toString();
    }

    public static Summary run(Options o, PrintWriter out) throws Exception {
        Path cfg = Files.createTempFile("weft-chaos-gateway", ".yaml");
        Path accessLog = Files.createTempFile("weft-chaos-gateway", ".access.log");
        // weft-upstream in a JVM of its own: in the clients' JVM its work would delay their view of the answers
        try (Toxiproxy tp = Toxiproxy.start();
             UpstreamProcess sim = UpstreamProcess.start(List.of(new InetSocketAddress("127.0.0.1", 0)))) {
            URI simUri = URI.create(sim.url());
            Map<String, String> urls = new TreeMap<>();
            for (String be : BACKENDS) {
                int port = Toxiproxy.freePort();
                tp.proxy("backend-" + be, port, simUri.getHost() + ":" + simUri.getPort());
                urls.put(be, "http://127.0.0.1:" + port);
            }
            Files.writeString(cfg, config(o.deadline(), o.latency(), urls, accessLog));
            try (ChildProcess gw = ChildProcess.startJvm(List.of("-Xmx512m", "-XX:+UseG1GC"), GatewayProcess.class,
                    List.of(cfg.toString(), "virtual"));
                 Transport client = LoadClient.transport(o.clients() + 8)) {
                out.println("gateway " + gw.ready() + ": route GET /chaos/{id}, deadline " + o.deadline().toMillis()
                        + " ms, calls b and c (weft-upstream " + sim.url() + ", " + o.latency().toMillis() + " ms, behind "
                        + urls.values() + "), " + o.clients() + " clients in a closed loop");
                out.flush();
                List<RunResult> results = new ArrayList<>();
                for (int i = 0; i < o.runs(); i++) {
                    RunResult r = oneRun(o, o.seed() + i, gw.ready(), client, tp, accessLog);
                    results.add(r);
                    print(r, o, out);
                }
                Summary s = new Summary(results);
                out.println(String.format(Locale.ROOT, "gateway, %d runs: %d answers past the deadline + %d ms, %d failures "
                                + "not naming a faulted backend, %d requests unanswered", results.size(), s.late(),
                        SLACK.toMillis(), s.misnamed(), s.unanswered()));
                out.flush();
                return s;
            }
        } finally {
            Files.deleteIfExists(cfg);
            Files.deleteIfExists(accessLog);
        }
    }

    static void print(RunResult r, Options o, PrintWriter out) {
        out.println(String.format(Locale.ROOT, "gateway seed %d: faults %s; answers %d by status %s, failed calls %s; "
                        + "latency p50 %.0f ms, p99 %.0f ms, max %.0f ms (the gateway's own, from its access log: max %.0f "
                        + "ms, %d past the bound, of %d logged); past %d ms: %d; "
                        + "failures not naming a faulted "
                        + "backend: %d; unanswered %d",
                r.seed(), r.faults(), r.answers(), r.byStatus(), r.failedBy(), r.p50Millis(), r.p99Millis(), r.maxMillis(),
                r.gatewayMaxMillis(), r.gatewayLate(), r.gatewayLogged(), o.deadline().plus(SLACK).toMillis(), r.late().size(), r.misnamed().size(), r.unanswered()));
        r.late().stream().limit(10).forEach(l -> out.println("  LATE " + l));
        r.misnamed().stream().limit(10).forEach(l -> out.println("  MISNAMED " + l));
        out.flush();
    }

    private static RunResult oneRun(Options o, long seed, String gatewayUrl, Transport client, Toxiproxy tp,
                                    Path accessLog) throws Exception {
        tp.reset();
        List<ChaosLab.Applied> plan = plan(seed);
        AtomicLong ids = new AtomicLong();
        // the gateway answers before the load starts (a first call opens the backends' pools)
        long ready = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        CallResult first;
        do {
            first = client.call(CallRequest.get(gatewayUrl + "/chaos/warm"), Duration.ofSeconds(5));
        } while (first.status() != 200 && System.nanoTime() < ready && sleep(100));
        if (first.status() != 200) {
            throw new IOException("the gateway did not answer 200 within 20 s: " + first);
        }
        long origin = System.nanoTime();
        ConcurrentLinkedQueue<Answer> answers = new ConcurrentLinkedQueue<>();
        AtomicBoolean stop = new AtomicBoolean();
        Duration clientTimeout = o.deadline().plusSeconds(5); // far past the bound: a late answer is seen, not cut
        List<Thread> clients = new ArrayList<>();
        for (int c = 0; c < o.clients(); c++) {
            clients.add(Thread.ofVirtual().name("chaos-client-" + c).start(() -> {
                while (!stop.get()) {
                    long id = ids.incrementAndGet();
                    CallRequest req = CallRequest.get(gatewayUrl + "/chaos/" + seed + "-" + id);
                    long sent = System.nanoTime();
                    CallResult r = client.call(req, clientTimeout);
                    long took = System.nanoTime() - sent;
                    answers.add(answer(id, sent - origin, took, r));
                    if (r.status() == 0) {
                        sleep(10); // no gateway to reach: do not spin
                    }
                }
            }));
        }
        List<Window> windows = new ArrayList<>();
        try {
            Thread.sleep(o.warmup().toMillis());
            for (ChaosLab.Applied step : plan) {
                long from = System.nanoTime() - origin;
                tp.addToxic(step.proxy(), "chaos", step.fault().toxicType(), step.stream(), step.attributes());
                Thread.sleep(o.faultFor().toMillis());
                tp.reset();
                windows.add(new Window(step.proxy().substring("backend-".length()), from, System.nanoTime() - origin));
                Thread.sleep(o.gap().toMillis());
            }
        } finally {
            stop.set(true);
            for (Thread t : clients) {
                t.join(clientTimeout.plusSeconds(5));
            }
            tp.reset();
        }
        List<Answer> all = new ArrayList<>(answers);
        Map<Integer, Integer> byStatus = new TreeMap<>();
        Map<String, Integer> failedBy = new TreeMap<>();
        for (Answer a : all) {
            byStatus.merge(a.status(), 1, Integer::sum);
            if (a.failedCall() != null) {
                failedBy.merge(a.failedCall() + "=" + a.reason(), 1, Integer::sum);
            }
        }
        long[] nanos = all.stream().mapToLong(Answer::nanos).sorted().toArray();
        // the access log is written behind the answers: wait (at most 5 s) until it has every answered request
        long answered = all.stream().filter(a -> a.status() != 0).count();
        Map<Long, Double> gatewayMillis = gatewayMillis(accessLog, seed);
        for (long until = System.nanoTime() + Duration.ofSeconds(5).toNanos();
             gatewayMillis.size() < answered && System.nanoTime() < until; ) {
            Thread.sleep(100);
            gatewayMillis = gatewayMillis(accessLog, seed);
        }
        double bound = o.deadline().plus(SLACK).toNanos() / 1e6;
        int gatewayLate = (int) gatewayMillis.values().stream().filter(ms -> ms > bound).count();
        List<String> late = late(all, o.deadline(), windows, gatewayMillis);
        return new RunResult(seed, plan, all.size(), byStatus, failedBy, percentile(nanos, 0.50), percentile(nanos, 0.99),
                nanos.length == 0 ? 0 : nanos[nanos.length - 1] / 1e6,
                gatewayMillis.values().stream().mapToDouble(Double::doubleValue).max().orElse(0), gatewayMillis.size(),
                gatewayLate, late,
                misnamed(all, windows), (int) all.stream().filter(a -> a.status() == 0).count());
    }

    /** Request id -> the gateway's duration_ms, from its access log (the lines of run {@code seed}). */
    private static Map<Long, Double> gatewayMillis(Path accessLog, long seed) throws IOException {
        Map<Long, Double> out = new java.util.HashMap<>();
        String prefix = "/chaos/" + seed + "-";
        for (String line : Files.readAllLines(accessLog)) {
            try {
                JsonNode n = Json.MAPPER.readTree(line);
                String path = n.path("path").asText("");
                if (path.startsWith(prefix) && n.path("duration_ms").isNumber()) {
                    out.put(Long.parseLong(path.substring(prefix.length())), n.path("duration_ms").asDouble());
                }
            } catch (IOException | NumberFormatException e) {
                // a line cut short (the gateway still writing): that request is reported without it
            }
        }
        return out;
    }

    private static Answer answer(long id, long sent, long took, CallResult r) {
        String call = null;
        String reason = null;
        if (r.status() == 502 || r.status() == 504) {
            try {
                JsonNode body = Json.MAPPER.readTree(r.body());
                call = body.path("call").isTextual() ? body.path("call").asText() : null;
                reason = body.path("reason").isTextual() ? body.path("reason").asText() : null;
            } catch (IOException e) {
                // not JSON: it names nothing, and is counted so
            }
        }
        return new Answer(id, sent, took, r.status(), call, reason);
    }

    private static double percentile(long[] sorted, double q) {
        return sorted.length == 0 ? 0 : sorted[Math.min(sorted.length - 1, (int) Math.ceil(q * sorted.length) - 1)] / 1e6;
    }

    /**
     * The answers that arrived later than {@code deadline} + {@link #SLACK} after their request was sent, latest first,
     * each with the gateway's own duration of it where its access log has it ({@code gatewayMillis}: id -> ms).
     */
    static List<String> late(List<Answer> answers, Duration deadline, List<Window> windows, Map<Long, Double> gatewayMillis) {
        long bound = deadline.plus(SLACK).toNanos();
        return answers.stream().filter(a -> a.nanos() > bound).sorted((x, y) -> Long.compare(y.nanos(), x.nanos()))
                .map(a -> String.format(Locale.ROOT, "#%d sent at %.3f s: status %d after %.0f ms%s%s; %s", a.id(),
                        a.sentNanos() / 1e9, a.status(), a.nanos() / 1e6,
                        a.failedCall() == null ? "" : " (" + a.failedCall() + " " + a.reason() + ")", during(a, windows),
                        gatewayMillis.containsKey(a.id()) ? String.format(Locale.ROOT, "the gateway's own duration %.0f ms",
                                gatewayMillis.get(a.id())) : "not in the gateway's access log"))
                .toList();
    }

    /**
     * The 502 and 504 answers whose failed call is not a backend with a toxic while the request was in flight (or up
     * to {@link #AFTER} before it was sent).
     */
    static List<String> misnamed(List<Answer> answers, List<Window> windows) {
        List<String> out = new ArrayList<>();
        for (Answer a : answers) {
            if (a.status() != 502 && a.status() != 504) {
                continue;
            }
            boolean named = a.failedCall() != null && windows.stream().anyMatch(w -> w.backend().equals(a.failedCall())
                    && w.fromNanos() <= a.sentNanos() + a.nanos() && w.toNanos() + AFTER.toNanos() >= a.sentNanos());
            if (!named) {
                out.add(String.format(Locale.ROOT, "sent at %.3f s: status %d after %.0f ms names call %s (%s)%s",
                        a.sentNanos() / 1e9, a.status(), a.nanos() / 1e6, a.failedCall(), a.reason(), during(a, windows)));
            }
        }
        return out;
    }

    private static String during(Answer a, List<Window> windows) {
        return windows.stream().filter(w -> w.fromNanos() <= a.sentNanos() + a.nanos() && w.toNanos() >= a.sentNanos())
                .map(w -> " during a toxic on " + w.backend()).findFirst().orElse("");
    }

    private static boolean sleep(long millis) {
        try {
            Thread.sleep(millis);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
