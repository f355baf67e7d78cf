package dev.weft.lab;

import dev.weft.http.Headers;
import dev.weft.upstream.UpstreamConfig;
import dev.weft.upstream.UpstreamServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The bench's accounting against a weft-upstream backend of known latency (50 ms, fixed). Every assertion
 * holds however slow or busy the machine is: counts are compared with what the backend received, and
 * latencies with bounds that physics sets (nothing answers faster than the backend's latency).
 */
class BenchIT {
    static UpstreamServer sim;

    @BeforeAll
    static void start() throws Exception {
        sim = UpstreamServer.start(UpstreamConfig.local());
    }

    @AfterAll
    static void stop() {
        sim.close();
    }

    private static String url(String path) {
        return "http://127.0.0.1:" + sim.addresses().getFirst().getPort() + path + "?latency=50ms";
    }

    private static Bench.Options options(String path, double rate, int concurrency) {
        return new Bench.Options(List.of(url(path)), "GET", Headers.EMPTY, null, rate, concurrency, Duration.ZERO,
                Duration.ofSeconds(2), Duration.ofSeconds(30));
    }

    @Test
    void closedLoopCountsExactlyWhatTheBackendReceived() throws Exception {
        Bench.Result r = Bench.run(options("/closed", 0, 4), null, false);

        assertThat(r.requests()).as("requests counted").isEqualTo(sim.stats().requests("/closed"));
        assertThat(r.ok()).isEqualTo(r.requests());
        assertThat(r.errors()).isZero();
        // 4 workers, each request at least 50 ms, started within 2 s: at most 4 x 40
        assertThat(r.requests()).isBetween(4L, 160L);
        assertThat(r.latency().getTotalCount()).isEqualTo(r.ok());
        assertThat(r.percentileMillis(50)).isGreaterThanOrEqualTo(49.9);
        assertThat(r.percentileMillis(99)).isLessThanOrEqualTo(r.maxMillis());
        assertThat(r.generatorNote()).as("closed loop has no schedule to miss").isNull();
    }

    @Test
    void openLoopSchedulesExactlyRateTimesDuration() throws Exception {
        Bench.Result r = Bench.run(options("/open", 100, 50), null, false);

        // 100 req/s for 2 s: request i is scheduled at i x 10 ms, i = 0..199
        assertThat(r.requests() + r.notSent()).isEqualTo(200);
        assertThat(r.requests()).isEqualTo(sim.stats().requests("/open"));
        assertThat(r.ok()).isEqualTo(r.requests());
        assertThat(r.percentileMillis(50)).isGreaterThanOrEqualTo(49.9);
    }

    @Test
    void openLoopSendsTheWindowsLastSlotWhenThereIsRoom() throws Exception {
        // one request every 999,999 ns for 1 s: slots 0..1000, the last 1 us before the window's end, which the
        // generator's park almost always oversleeps; with room for 200 in flight (about 50 are) every slot is sent
        double rate = 1e9 / 999_999.0;
        Bench.Options o = new Bench.Options(List.of(url("/last")), "GET", Headers.EMPTY, null, rate, 200,
                Duration.ZERO, Duration.ofSeconds(1), Duration.ofSeconds(30));
        Bench.Result r = Bench.run(o, null, false);

        assertThat(r.requests() + r.notSent()).isEqualTo(1001);
        assertThat(r.notSent()).as("not sent, with room free").isZero();
        assertThat(r.requests()).isEqualTo(sim.stats().requests("/last"));
    }

    @Test
    void aSenderIsToldWhichRequestsTheWindowCounts() throws Exception {
        // 100 req/s, 1 s of warm-up then 1 s counted: a sender's own figures (the overload lab's 503 p99) must
        // leave out the warm-up exactly as the result does
        Bench.Options o = new Bench.Options(List.of(url("/flagged")), "GET", Headers.EMPTY, null, 100, 50,
                Duration.ofSeconds(1), Duration.ofSeconds(1), Duration.ofSeconds(30));
        java.util.concurrent.atomic.AtomicLong measured = new java.util.concurrent.atomic.AtomicLong();
        java.util.concurrent.atomic.AtomicLong warm = new java.util.concurrent.atomic.AtomicLong();
        Bench.Result r;
        try (dev.weft.client.Transport t = dev.weft.client.Transport.builder().build()) {
            Bench.Sender http = Bench.sender(t, List.of(dev.weft.client.CallRequest.get(url("/flagged"))),
                    Duration.ofSeconds(30));
            r = Bench.run(o, (target, counted) -> {
                (counted ? measured : warm).incrementAndGet();
                return http.send(target, counted);
            }, null, false);
        }

        assertThat(measured.get()).as("sends flagged as measured").isEqualTo(r.requests());
        assertThat(warm.get()).as("warm-up sends (100 scheduled)").isBetween(1L, 100L);
        assertThat(measured.get() + warm.get()).isEqualTo(sim.stats().requests("/flagged"));
    }

    @Test
    void openLoopCountsTheWaitBehindASlowAnswerAndSaysItFellBehind() throws Exception {
        // One request in flight at a time and 50 ms each: at most 20 req/s of the 100 asked for.
        Bench.Result r = Bench.run(options("/behind", 100, 1), null, false);

        long sent = r.requests();
        assertThat(sent).isEqualTo(sim.stats().requests("/behind"));
        assertThat(sent).isBetween(1L, 40L);
        assertThat(sent + r.notSent()).isEqualTo(200);
        // The k-th request sent (from 0) left at >= 50k ms but was due at 10k ms: its latency, counted
        // from its schedule, is >= 40k + 50 ms. A generator that measured from the send would see ~50 ms.
        double lastLowerBound = 40.0 * (sent - 1) + 50;
        assertThat(r.maxMillis()).isGreaterThanOrEqualTo(lastLowerBound * 0.99);
        assertThat(r.generatorNote()).contains("could not keep up").contains("never were");
    }

    @Test
    void openLoopCountsTheWaitForACarrierAsSendDelay() throws Exception {
        // 500 ms into a 2 s window at 100 req/s, every carrier spins for 300 ms: the ~30 requests due then cannot
        // start, and each is sent up to 300 ms late. The generator itself (this platform thread) stays on time, so a
        // send delay taken where it starts the request's thread (until Round 22) stays near 0. Four spinners per
        // carrier, so that a carrier the pool added for a blocked one earlier spins too.
        int carriers = Integer.getInteger("jdk.virtualThreadScheduler.parallelism",
                Runtime.getRuntime().availableProcessors());
        Thread holder = Thread.ofPlatform().start(() -> {
            try {
                Thread.sleep(500); // the scenario's pacing: the window's first 500 ms run undisturbed
            } catch (InterruptedException e) {
                return;
            }
            long until = System.nanoTime() + 300_000_000L;
            for (int i = 0; i < 4 * carriers; i++) {
                Thread.ofVirtual().start(() -> {
                    while (System.nanoTime() - until < 0) {
                        Thread.onSpinWait();
                    }
                });
            }
        });
        Bench.Result r = Bench.run(options("/carriers", 100, 50), null, false);
        holder.join();

        assertThat(r.requests()).isEqualTo(200);
        assertThat(r.sendLag().getValueAtPercentile(99) / 1000.0).as("p99 send delay, ms").isGreaterThanOrEqualTo(100);
    }
}
