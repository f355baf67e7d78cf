package dev.weft.client;

import dev.weft.core.Durations;
import dev.weft.client.policy.HedgePolicy;
import dev.weft.client.policy.RetryAfter;
import dev.weft.client.policy.RetryPolicy;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The links every call goes through, in order:
 * <ol>
 *   <li>{@link #METRICS}: reports the call's end to the transport's {@link TransportListener};</li>
 *   <li>{@link #RETRY}: tries again after a failure a retry may mend, with backoff and Retry-After, never past
 *       the deadline; shapes the call's result;</li>
 *   <li>{@link #HEDGE}: runs copies of a try when the call is hedged, keeps the first good answer and cancels
 *       the others; records every try;</li>
 *   <li>{@link #PERMITS}: the destination's circuit breaker and bulkhead ({@link DestinationRuntime#admit});</li>
 *   <li>{@link #EXCHANGE}: one exchange on a pooled HTTP/1.1 connection or an HTTP/2 stream ({@link Exchange}).</li>
 * </ol>
 */
final class CallPath {
    static final Interceptor METRICS = chain -> {
        CallResult r = chain.proceed();
        chain.call().destination.callEnded(r);
        return r;
    };

    static final Interceptor RETRY = CallPath::retry;

    static final Interceptor HEDGE = chain -> chain.call().hedge == null ? single(chain) : hedged(chain);

    static final Interceptor PERMITS = chain -> {
        Interceptor.Call call = chain.call();
        call.destination.attemptStarted(chain.attempt().kind);
        return call.destination.admit(call.deadline, chain::proceed);
    };

    static final Interceptor EXCHANGE = chain -> {
        Interceptor.Call call = chain.call();
        Exchange e = new Exchange(chain.attempt().request(call));
        chain.attempt().started(e);
        return e.run(call);
    };

    static final List<Interceptor> LINKS = List.of(METRICS, RETRY, HEDGE, PERMITS, EXCHANGE);

    /** {@link #LINKS}, with the link of the exchange interceptors between hedge and permits when there are any. */
    static List<Interceptor> links(List<CallInterceptor> exchangeInterceptors) {
        if (exchangeInterceptors.isEmpty()) {
            return LINKS;
        }
        return List.of(METRICS, RETRY, HEDGE, InterceptorChains.exchangeLink(exchangeInterceptors), PERMITS, EXCHANGE);
    }

    private CallPath() {
    }

    // ---- retry -------------------------------------------------------------------------------------

    private static CallResult retry(Interceptor.Chain chain) {
        Interceptor.Call call = chain.call();
        RetryPolicy retry = call.retry;
        int maxAttempts = retry.allows(call.request.method()) ? retry.attempts() : 1;
        CallResult last = null;
        String stopNote = null;
        for (int n = 1; n <= maxAttempts; n++) {
            if (n > 1) {
                if (!retryable(last, retry)) {
                    break;
                }
                Duration wait = retry.backoffBefore(n);
                Duration retryAfter = retryAfter(last);
                if (retryAfter != null && retryAfter.compareTo(wait) > 0) {
                    wait = retryAfter;
                }
                if (wait.toNanos() >= call.deadline.remainingNanos()) {
                    stopNote = "no retry: waiting " + Durations.format(wait) + " would pass the deadline";
                    break;
                }
                if (!sleep(wait)) {
                    stopNote = "interrupted";
                    break;
                }
            }
            last = chain.proceed(new Interceptor.Try(n == 1 ? Attempt.Kind.FIRST : Attempt.Kind.RETRY));
            if (last.ok()) {
                break;
            }
        }
        long total = System.nanoTime() - call.startNanos;
        CallFailure failure = last.failure();
        if (failure != null) {
            if (stopNote != null) {
                failure = failure.withNote("; " + stopNote);
            }
            if (call.attempts.size() > 1) {
                failure = failure.withNote(" (after " + call.attempts.size() + " attempts)");
            }
        }
        return last.asCall(total, failure, call.attempts);
    }

    private static boolean retryable(CallResult o, RetryPolicy retry) {
        if (o.ok()) {
            return false;
        }
        return switch (o.reason()) {
            // Nothing reached the application on these: safe to try again.
            case REFUSED, TIMEOUT_CONNECT, UNKNOWN_HOST -> true;
            // The connection died before a whole answer: a retry may help (idempotent methods only).
            case RESET, PROTOCOL, IO -> true;
            case STATUS -> retry.retryStatuses().contains(o.status());
            default -> false;
        };
    }

    /** The Retry-After of a 429 or 503 ({@link RetryAfter}, at most a day); null when absent or malformed. */
    static Duration retryAfter(CallResult o) {
        if (o.status() != 429 && o.status() != 503) {
            return null;
        }
        return RetryAfter.parse(o.headers().first("Retry-After"), java.time.Instant.now(), Duration.ofDays(1))
                .orElse(null);
    }

    private static boolean sleep(Duration d) {
        try {
            Thread.sleep(d);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    // ---- hedge -------------------------------------------------------------------------------------

    private static CallResult single(Interceptor.Chain chain) {
        Interceptor.Call call = chain.call();
        Interceptor.Try t = chain.attempt();
        long start = System.nanoTime();
        CallResult r = chain.proceed();
        call.attempts.add(new Attempt(call.attempts.size() + 1, t.kind, r.status(), r.reason(),
                start - call.startNanos, System.nanoTime() - start, true));
        return r;
    }

    /** A copy of a hedged try that finished. */
    private record Done(int copy, CallResult result) {
    }

    /**
     * Runs copies of one try on virtual threads: the first starts now, each next one after the hedge delay
     * or as soon as every running copy has failed. The first copy that succeeds (or gets an answer that a
     * retry would not improve) wins; the others are cancelled, which closes their connections so they are
     * never reused.
     */
    private static CallResult hedged(Interceptor.Chain chain) {
        Interceptor.Call call = chain.call();
        HedgePolicy hedge = call.hedge;
        int copies = hedge.copies();
        BlockingQueue<Done> done = new ArrayBlockingQueue<>(copies);
        Interceptor.Try[] tries = new Interceptor.Try[copies];
        long[] starts = new long[copies];
        Done[] results = new Done[copies];
        int launched = 0;
        int finished = 0;
        Done lastFailure = null;
        long nextLaunch = System.nanoTime();
        try {
            while (true) {
                if (launched < copies && System.nanoTime() - nextLaunch >= 0 && !call.deadline.expired()) {
                    int copy = launched++;
                    Interceptor.Try t = copy == 0 ? chain.attempt() : new Interceptor.Try(Attempt.Kind.HEDGE);
                    tries[copy] = t;
                    starts[copy] = System.nanoTime();
                    Thread.ofVirtual().start(() -> done.add(new Done(copy, proceedCopy(chain, t))));
                    nextLaunch = System.nanoTime() + hedge.delay().toNanos();
                }
                boolean more = launched < copies && !call.deadline.expired();
                long waitNanos = more
                        ? Math.max(0, Math.min(nextLaunch - System.nanoTime(), call.deadline.remainingNanos()))
                        // every copy enforces the deadline itself; the margin covers the abort and hand-off
                        : Math.max(0, call.deadline.remainingNanos()) + TimeUnit.SECONDS.toNanos(5);
                Done d = done.poll(waitNanos, TimeUnit.NANOSECONDS);
                if (d == null) {
                    if (more) {
                        continue;
                    }
                    cancelAll(tries);
                    CallResult t = lastFailure != null ? lastFailure.result : CallResult.failed(
                            call.destination.destination(),
                            CallFailure.of(Reason.DEADLINE, "no copy of the hedged call finished by the deadline"));
                    return record(call, tries, starts, results, lastFailure == null ? -1 : lastFailure.copy, t);
                }
                finished++;
                results[d.copy] = d;
                CallResult o = d.result;
                if (o.ok() || (o.status() > 0 && !call.retry.retryStatuses().contains(o.status()))) {
                    cancelAll(tries);
                    return record(call, tries, starts, results, d.copy, o);
                }
                lastFailure = d;
                if (finished == launched) {
                    if (launched == copies || call.deadline.expired()) {
                        return record(call, tries, starts, results, d.copy, o);
                    }
                    nextLaunch = System.nanoTime(); // every running copy failed fast: hedge at once
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            cancelAll(tries);
            return record(call, tries, starts, results, -1, CallResult.failed(call.destination.destination(),
                    CallFailure.of(Reason.CANCELLED, "interrupted")));
        }
    }

    /**
     * Runs one copy of a hedged try on its own thread. Nothing below should throw (the exchange interceptors' link
     * makes what they throw a failed result, {@link Reason#INTERCEPTOR}, as on the caller's thread); anything thrown
     * all the same, an {@link Error} too, fails the copy, so that the call does not wait for it until its deadline and
     * 5 s more: an Error let through would end the copy's thread without a word to the call.
     */
    private static CallResult proceedCopy(Interceptor.Chain chain, Interceptor.Try t) {
        try {
            return chain.proceed(t);
        } catch (Throwable e) {
            return CallResult.failed(chain.call().destination.destination(),
                    CallFailure.of(Reason.IO, "the hedged copy threw " + e));
        }
    }

    private static void cancelAll(Interceptor.Try[] tries) {
        for (Interceptor.Try t : tries) {
            if (t != null) {
                t.cancel();
            }
        }
    }

    /** Adds one {@link Attempt} per launched copy; copies still running at this point were cancelled. */
    private static CallResult record(Interceptor.Call call, Interceptor.Try[] tries, long[] starts, Done[] results,
                                     int winner, CallResult result) {
        long now = System.nanoTime();
        for (int i = 0; i < tries.length; i++) {
            if (tries[i] == null) {
                continue;
            }
            CallResult o = results[i] != null ? results[i].result : null;
            call.attempts.add(new Attempt(call.attempts.size() + 1, tries[i].kind, o == null ? 0 : o.status(),
                    o == null ? Reason.CANCELLED : o.reason(), starts[i] - call.startNanos, now - starts[i],
                    i == winner));
        }
        return result;
    }
}
