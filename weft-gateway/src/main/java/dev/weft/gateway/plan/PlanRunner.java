package dev.weft.gateway.plan;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import dev.weft.core.Deadline;
import dev.weft.core.TickWheel;
import dev.weft.client.CallRequest;
import dev.weft.client.CallResult;
import dev.weft.http.Headers;
import dev.weft.client.Transport;
import dev.weft.gateway.observe.Tracer;

import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * Runs a {@link RoutePlan} for one request: every call on a virtual thread of its own, started at once
 * and waiting only for the calls it needs, so independent calls overlap and a call starts the moment its
 * inputs are there. Plain blocking code; the deadline bounds every wait.
 */
public final class PlanRunner {
    /** Strict about what follows the value: a body with trailing data is not JSON (it stays a string). */
    private static final ObjectReader JSON = dev.weft.json.Json.MAPPER.reader()
            .with(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
    /** How long past the deadline to wait for calls to notice it (they abort themselves at the deadline). */
    private static final long GRACE_NANOS = TimeUnit.SECONDS.toNanos(2);
    /**
     * Ends a request's waits for its calls at its deadline plus {@link #GRACE_NANOS}: the waits themselves are untimed,
     * because a timed park of a virtual thread wakes the JDK's delay scheduler twice (to file the timeout and to
     * cancel it), which cost 12% of the gateway's CPU at 0 ms backends (docs/design/waits.md).
     */
    private static final TickWheel<LateCalls> LATE = new TickWheel<>("weft-plan-late", Duration.ofMillis(10), 1024,
            LateCalls::dueNanos, LateCalls::giveUp);

    /**
     * A request's calls, given up on at {@code dueNanos}: every one not finished by then is completed with null
     * ("did not finish by the deadline"), which wakes whatever waits for it; a call that finishes later changes
     * nothing.
     */
    private static final class LateCalls {
        private final long dueNanos;
        private final Collection<CompletableFuture<CallOutcome>> calls;

        private LateCalls(long dueNanos, Collection<CompletableFuture<CallOutcome>> calls) {
            this.dueNanos = dueNanos;
            this.calls = calls;
        }

        /** {@code calls}, filed on {@link #LATE} to be given up on at {@code deadline} plus the grace. */
        static LateCalls file(Deadline deadline, Collection<CompletableFuture<CallOutcome>> calls) {
            LateCalls late = new LateCalls(deadline.nanoTime() + GRACE_NANOS, calls);
            LATE.add(late); // never closed: the add always files it
            return late;
        }

        /**
         * Takes this off the wheel once every call is done; a call still running (its waiter interrupted, an HTTP/2
         * stream reset) leaves it filed, so that the wheel ends the waits for it too.
         */
        void unfileIfDone() {
            if (allDone()) {
                LATE.remove(this);
            }
        }

        long dueNanos() {
            return dueNanos;
        }

        private boolean allDone() {
            for (CompletableFuture<CallOutcome> f : calls) {
                if (!f.isDone()) {
                    return false;
                }
            }
            return true;
        }

        void giveUp() {
            for (CompletableFuture<CallOutcome> f : calls) {
                f.complete(null);
            }
        }
    }

    private final Transport transport;

    public PlanRunner(Transport transport) {
        this.transport = transport;
    }

    /** The outcome of every call, in plan order. */
    public record Run(Map<String, CallOutcome> outcomes) {
    }

    /**
     * @param forwarded request headers to pass on to every call
     */
    public Run run(RoutePlan plan, Map<String, String> pathParams, Map<String, String> query,
                   Function<String, String> header, Headers forwarded, Deadline deadline) {
        return run(plan, pathParams, query, header, forwarded, deadline, null);
    }

    /**
     * @param trace the request's trace: each call sends its {@code traceparent} (a new span of the same
     *              trace) and {@code tracestate}; null for none
     */
    public Run run(RoutePlan plan, Map<String, String> pathParams, Map<String, String> query,
                   Function<String, String> header, Headers forwarded, Deadline deadline, Tracer.RequestTrace trace) {
        Map<String, CompletableFuture<CallOutcome>> futures = new LinkedHashMap<>();
        for (CallSpec c : plan.calls()) {
            futures.put(c.name(), new CompletableFuture<>());
        }
        Scope scope = new Scope(pathParams, query, header, n -> {
            CompletableFuture<CallOutcome> f = futures.get(n);
            return f == null ? null : f.getNow(null);
        }, null);
        // Every call but the last gets a virtual thread of its own; the last runs on this one, which would otherwise
        // only wait (a quarter fewer threads and stacks per request for a route of three calls). The wheel gives up
        // on the others only: no call needs the last (a call comes after those it needs), and giving up on it would
        // put "did not finish" in place of what this thread, still in it, ends it with (a foreach's items given up on)
        List<CallSpec> calls = plan.calls();
        List<CompletableFuture<CallOutcome>> forked = new ArrayList<>(calls.size());
        for (int i = 0; i < calls.size() - 1; i++) {
            forked.add(futures.get(calls.get(i).name()));
        }
        LateCalls late = LateCalls.file(deadline, forked);
        try {
            for (int i = 0; i < calls.size(); i++) {
                CallSpec c = calls.get(i);
                Runnable call = () -> futures.get(c.name())
                        .complete(runGuarded(c, futures, scope, forwarded, deadline, trace));
                if (i < calls.size() - 1) {
                    Thread.ofVirtual().start(call);
                } else {
                    call.run();
                }
            }
            Map<String, CallOutcome> out = new LinkedHashMap<>();
            for (CallSpec c : plan.calls()) {
                CallOutcome o = await(futures.get(c.name()));
                out.put(c.name(), o != null ? o
                        : CallOutcome.failed(c.name(), new Failure.Deadline("did not finish by the deadline"), 0));
            }
            return new Run(out);
        } finally {
            late.unfileIfDone(); // a forked call may still wait on another (needs:) after an interrupt
        }
    }

    private CallOutcome runGuarded(CallSpec c, Map<String, CompletableFuture<CallOutcome>> futures, Scope scope,
                                   Headers forwarded, Deadline deadline, Tracer.RequestTrace trace) {
        try {
            return runCall(c, futures, scope, forwarded, deadline, trace);
        } catch (RuntimeException e) {
            return CallOutcome.failed(c.name(), new Failure.Internal(e.toString()), 0);
        }
    }

    private CallOutcome runCall(CallSpec c, Map<String, CompletableFuture<CallOutcome>> futures, Scope scope,
                                Headers forwarded, Deadline deadline, Tracer.RequestTrace trace) {
        long t0 = System.nanoTime();
        for (String dep : c.needs()) {
            CallOutcome d = await(futures.get(dep));
            if (d == null) {
                return CallOutcome.failed(c.name(),
                        new Failure.Deadline("the deadline passed while waiting for '" + dep + "'"),
                        System.nanoTime() - t0);
            }
            if (!d.ok()) {
                return CallOutcome.failed(c.name(), new Failure.Skipped(dep, d.failure()), System.nanoTime() - t0);
            }
        }
        return c.foreach() == null ? single(c, scope, forwarded, deadline, trace)
                : fanOut(c, scope, forwarded, deadline, trace);
    }

    private CallOutcome fanOut(CallSpec c, Scope scope, Headers forwarded, Deadline deadline,
                               Tracer.RequestTrace trace) {
        long t0 = System.nanoTime();
        JsonNode items;
        try {
            items = scope.resolve(c.foreach());
        } catch (Scope.MissingValueException e) {
            return CallOutcome.failed(c.name(), e.failure(), 0);
        }
        if (!items.isArray()) {
            return CallOutcome.failed(c.name(), new Failure.Template("foreach {" + c.foreach() + "} is not an array"),
                    0);
        }
        int n = items.size();
        if (n > CallSpec.MAX_ITEMS) {
            return CallOutcome.failed(c.name(), new Failure.TooManyItems("foreach {" + c.foreach() + "} has " + n
                    + " items; at most " + CallSpec.MAX_ITEMS), 0);
        }
        CallOutcome[] results = new CallOutcome[n];
        Semaphore slots = new Semaphore(c.concurrency());
        List<CompletableFuture<CallOutcome>> started = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            boolean got;
            try {
                got = slots.tryAcquire(Math.max(0, deadline.remainingNanos()), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                got = false;
            }
            if (!got) {
                for (int j = i; j < n; j++) {
                    results[j] = CallOutcome.failed(c.name(),
                            new Failure.Deadline("item " + j + " did not start by the deadline"), 0);
                }
                break;
            }
            Scope itemScope = scope.withItem(items.get(i));
            CompletableFuture<CallOutcome> f = new CompletableFuture<>();
            started.add(f);
            Thread.ofVirtual().start(() -> {
                try {
                    f.complete(single(c, itemScope, forwarded, deadline, trace));
                } catch (RuntimeException e) {
                    f.complete(CallOutcome.failed(c.name(), new Failure.Internal(e.toString()), 0));
                } finally {
                    f.complete(null); // anything else: as if it did not finish
                    slots.release();
                }
            });
        }
        // the items' waits are untimed too, ended by the wheel at the deadline plus the grace (as the calls' are)
        LateCalls late = LateCalls.file(deadline, List.copyOf(started));
        try {
            for (int i = 0; i < started.size(); i++) {
                results[i] = await(started.get(i));
            }
        } finally {
            late.unfileIfDone();
        }
        ArrayNode bodies = JsonNodeFactory.instance.arrayNode(n);
        int attempts = 0;
        for (int i = 0; i < n; i++) {
            CallOutcome r = results[i];
            if (r == null) {
                r = CallOutcome.failed(c.name(), new Failure.Deadline("did not finish by the deadline"), 0);
                results[i] = r;
            }
            attempts += r.attempts();
            bodies.add(r.json() != null ? r.json() : JsonNodeFactory.instance.nullNode());
        }
        for (int i = 0; i < n; i++) {
            if (!results[i].ok()) {
                return new CallOutcome(c.name(), results[i].status(), new byte[0], bodies,
                        new Failure.Item(i, results[i].failure()), System.nanoTime() - t0, attempts);
            }
        }
        return new CallOutcome(c.name(), 200, new byte[0], bodies, null, System.nanoTime() - t0, attempts);
    }

    private CallOutcome single(CallSpec c, Scope scope, Headers forwarded, Deadline deadline,
                               Tracer.RequestTrace trace) {
        String url;
        byte[] body;
        String[] headerValues = new String[c.headers().size()];
        try {
            url = c.url().render(scope, true);
            body = c.body() == null ? null : c.body().render(scope);
            int i = 0;
            for (Map.Entry<String, Template> h : c.headers().entrySet()) {
                headerValues[i++] = h.getValue().render(scope, false);
            }
        } catch (Scope.MissingValueException e) {
            return CallOutcome.failed(c.name(), e.failure(), 0);
        }
        URI uri;
        try {
            uri = c.url().toUri(url);
            if (uri.getScheme() == null || uri.getHost() == null) {
                throw new IllegalArgumentException("no host");
            }
        } catch (IllegalArgumentException e) {
            return CallOutcome.failed(c.name(), new Failure.BadUrl(url, e.getMessage()), 0);
        }
        CallRequest.Builder request = CallRequest.builder(c.method(), uri).headers(forwarded)
                .retry(c.retry()).hedge(c.hedge());
        int i = 0;
        for (Map.Entry<String, Template> h : c.headers().entrySet()) {
            request.header(h.getKey(), headerValues[i++]); // the call's own value replaces a forwarded one of the same name
        }
        if (body != null) {
            request.body(body, c.body().contentType());
        }
        Tracer.CallTrace span = null;
        if (trace != null) {
            span = trace.call(c.name(), uri);
            request.header("traceparent", span.traceparent());
            if (trace.tracestate() != null) {
                request.header("tracestate", trace.tracestate());
            }
        }
        // the call's own budget (null: until the route's deadline); its waits for a connection count against the
        // route's deadline only
        CallResult r = transport.call(request.build(), deadline, c.timeout());
        if (span != null) {
            span.end(r);
        }
        return new CallOutcome(c.name(), r.status(), r.body(), r.ok() ? null : new Failure.Call(r.failure()),
                r.timings().totalNanos(), r.attempts().size());
    }

    /** The body as JSON, or null when it is empty or not exactly one JSON value. */
    static JsonNode parseJson(byte[] body) {
        int i = 0;
        while (i < body.length && Character.isWhitespace(body[i])) {
            i++;
        }
        if (i == body.length) {
            return null;
        }
        try {
            return JSON.readTree(body);
        } catch (IOException e) {
            return null;
        }
    }

    /**
     * A call's outcome; null when it did not finish by the deadline plus {@link #GRACE_NANOS} (the request's
     * {@link LateCalls} on {@link #LATE} ends the wait then).
     */
    private static CallOutcome await(CompletableFuture<CallOutcome> f) {
        try {
            return f.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        } catch (ExecutionException e) {
            throw new IllegalStateException(e.getCause());
        }
    }
}
