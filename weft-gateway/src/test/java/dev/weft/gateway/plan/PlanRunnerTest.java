package dev.weft.gateway.plan;

import dev.weft.client.Transport;
import dev.weft.core.Deadline;
import dev.weft.http.Headers;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * The bound on a request's waits for its calls. The waits are untimed (docs/design/waits.md); what ends them when a
 * call overstays its deadline is the runner's wheel, at the deadline plus the grace. No network: the stuck call is
 * a request interceptor that blocks past its deadline and ignores interrupts, as a call that never noticed its
 * deadline would.
 */
class PlanRunnerTest {
    private static final Duration GRACE = Duration.ofSeconds(2);

    @Test
    void aCallStuckPastItsDeadlineIsGivenUpOnAtTheDeadlinePlusTheGrace() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        try (Transport t = transport("/stuck", release)) {
            // "stuck" and "waits" each on a thread of their own (only the last call runs on the request's thread);
            // "waits" needs "stuck", so it waits for it too
            RoutePlan plan = new RoutePlan("GET", PathPattern.parse("/a"), Duration.ofMillis(100), List.of(),
                    List.of(call("stuck", Set.of()), call("waits", Set.of("stuck")), call("quick", Set.of())),
                    null, false, "test:1:1");
            Deadline deadline = Deadline.in(Duration.ofMillis(100));
            long t0 = System.nanoTime();
            PlanRunner.Run run = assertTimeoutPreemptively(Duration.ofSeconds(30),
                    () -> new PlanRunner(t).run(plan, Map.of(), Map.of(), n -> null, Headers.EMPTY, deadline),
                    "a call stuck past its deadline held the request for ever");
            Duration took = Duration.ofNanos(System.nanoTime() - t0);

            // never before the grace: the calls get that long past the deadline to notice it
            assertThat(took).isGreaterThanOrEqualTo(GRACE);
            CallOutcome stuck = run.outcomes().get("stuck");
            assertThat(stuck.ok()).isFalse();
            assertThat(stuck.failure()).isInstanceOf(Failure.Deadline.class);
            assertThat(stuck.failure().toString()).contains("did not finish by the deadline");
            // given up on at the same moment as the call it waits for
            assertThat(run.outcomes().get("waits").failure()).isInstanceOf(Failure.Deadline.class);
            // the call that ended on its own is reported as it ended, not as a deadline
            assertThat(run.outcomes().get("quick").failure()).isInstanceOf(Failure.Call.class);
        } finally {
            release.countDown();
        }
    }

    /**
     * A request whose thread is interrupted (as an HTTP/2 stream reset does) while a call it forked waits on a stuck
     * call ({@code needs:}) leaves that wait to the wheel: it ends at the deadline plus the grace. Before, the
     * request took its item off the wheel on its way out, and the wait, untimed, went on for as long as the stuck
     * call (here: for ever). Seen in a dump of every thread, virtual ones too.
     */
    @Test
    void aWaitForACallLeftBehindByAnInterruptedRequestStillEnds() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        try (Transport t = transport("/stuck", release)) {
            RoutePlan plan = new RoutePlan("GET", PathPattern.parse("/a"), Duration.ofMillis(100), List.of(),
                    List.of(call("stuck", Set.of()), call("waits", Set.of("stuck")), call("last", Set.of("stuck"))),
                    null, false, "test:1:1");
            Deadline deadline = Deadline.in(Duration.ofMillis(100));
            // "last" runs on the request's thread and waits for "stuck" too: the interrupt ends that wait at once
            Thread request = Thread.ofVirtual().start(() -> new PlanRunner(t).run(plan, Map.of(), Map.of(), n -> null,
                    Headers.EMPTY, deadline));
            Thread.sleep(50);
            request.interrupt();
            request.join(Duration.ofSeconds(10));
            assertThat(request.isAlive()).as("the interrupted request returned").isFalse();
            assertThat(waitingInPlanRunner()).as("the forked call waits for 'stuck'").isPositive();
            // the deadline plus the grace, and a generous margin for a loaded machine
            long until = System.nanoTime() + GRACE.plusSeconds(8).toNanos();
            while (waitingInPlanRunner() > 0 && System.nanoTime() < until) {
                Thread.sleep(100);
            }
            assertThat(waitingInPlanRunner()).as("threads still waiting in PlanRunner.await").isZero();
        } finally {
            release.countDown();
        }
    }

    /**
     * A {@code foreach} item stuck past its deadline is given up on at the deadline plus the grace too: the wait for the
     * items is untimed as well, ended by the same wheel (the items' timed joins it replaced woke the JDK's delay
     * scheduler twice per item). It hangs with the wheel's add for the items removed.
     */
    @Test
    void aForeachItemStuckPastItsDeadlineIsGivenUpOnAtTheDeadlinePlusTheGrace() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        try (Transport t = transport("/item/2", release)) {
            CallSpec items = new CallSpec("items", "GET", Template.parse("http://127.0.0.1:9/item/{item.id}"), Map.of(),
                    null, Set.of("list"), Template.parse("{list.body.items}").single(), CallSpec.DEFAULT_CONCURRENCY,
                    null, false, null, null, List.of(), List.of(), null, "test:1:1");
            RoutePlan plan = new RoutePlan("GET", PathPattern.parse("/a"), Duration.ofMillis(100), List.of(),
                    List.of(call("list", Set.of()), items), null, false, "test:1:1");
            Deadline deadline = Deadline.in(Duration.ofMillis(100));
            long t0 = System.nanoTime();
            PlanRunner.Run run = assertTimeoutPreemptively(Duration.ofSeconds(30),
                    () -> new PlanRunner(t).run(plan, Map.of(), Map.of(), n -> null, Headers.EMPTY, deadline),
                    "a foreach item stuck past its deadline held the request for ever");
            assertThat(Duration.ofNanos(System.nanoTime() - t0)).isGreaterThanOrEqualTo(GRACE);
            CallOutcome o = run.outcomes().get("items");
            assertThat(o.failure()).isInstanceOfSatisfying(Failure.Item.class, f -> {
                assertThat(f.index()).isEqualTo(0); // the first item failed fast: it is the one reported
            });
        } finally {
            release.countDown();
        }
    }

    /** Threads, virtual ones too, parked in PlanRunner's wait for a call. */
    private static long waitingInPlanRunner() throws Exception {
        java.nio.file.Path dump = java.nio.file.Files.createTempDirectory("dump").resolve("threads.txt");
        java.lang.management.ManagementFactory.getPlatformMXBean(com.sun.management.HotSpotDiagnosticMXBean.class)
                .dumpThreads(dump.toString(), com.sun.management.HotSpotDiagnosticMXBean.ThreadDumpFormat.TEXT_PLAIN);
        String text = java.nio.file.Files.readString(dump);
        return java.util.Arrays.stream(text.split("\n\n")).filter(t -> t.contains("PlanRunner.await")).count();
    }

    /**
     * A transport with no backend behind it: a call to {@code stuck} blocks until {@code release}, ignoring interrupts
     * (a call that never noticed its deadline); {@code /list} answers a list of three items; every other call fails
     * fast, but not by its deadline.
     */
    private static Transport transport(String stuck, CountDownLatch release) {
        return Transport.builder().interceptor(chain -> {
            String path = chain.request().uri().getPath();
            if (path.equals("/list")) {
                return new dev.weft.client.CallResult(dev.weft.client.Destination.of(chain.request().uri()), 200,
                        Headers.EMPTY, "{\"items\":[{\"id\":1},{\"id\":2},{\"id\":3}]}".getBytes(
                        java.nio.charset.StandardCharsets.UTF_8), null, dev.weft.client.CallResult.Timings.NONE,
                        List.of());
            }
            if (path.equals(stuck)) {
                awaitIgnoringInterrupts(release);
            }
            throw new IllegalStateException("no backend in this test");
        }).build();
    }

    private static CallSpec call(String name, Set<String> needs) {
        return new CallSpec(name, "GET", Template.parse("http://127.0.0.1:9/" + name), Map.of(), null, needs, null,
                CallSpec.DEFAULT_CONCURRENCY, null, false, null, null, List.of(), List.of(), null, "test:1:1");
    }

    private static void awaitIgnoringInterrupts(CountDownLatch latch) {
        boolean interrupted = false;
        while (true) {
            try {
                latch.await();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
