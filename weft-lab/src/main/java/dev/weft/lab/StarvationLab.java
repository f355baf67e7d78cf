package dev.weft.lab;

import dev.weft.client.CallRequest;
import dev.weft.client.CallResult;
import dev.weft.client.Transport;
import dev.weft.devtools.ChildProcess;
import dev.weft.doctor.Doctor;
import dev.weft.doctor.DoctorException;
import dev.weft.doctor.Report;
import dev.weft.devtools.UpstreamProcess;

import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code weft lab starvation}: what runaway virtual threads do to the other requests of a process on a
 * machine's carriers, and that {@code weft doctor} names them. The service (a JVM of its own,
 * {@link StarvationProcess}) serves the gateway's {@code /fast} route and a lab-only {@code /burn} that spins
 * on its virtual thread. Each scenario loads {@code /fast} with the same closed loop while 0, 1, ... burners
 * keep one {@code /burn} each in flight; weft doctor is attached to the service during the run.
 */
public final class StarvationLab {
    /**
     * @param runaways    the scenarios: how many burners at once (default 0, 1, 2)
     * @param burn        how long each /burn spins
     * @param concurrency /fast requests in flight
     */
    public record Options(List<Integer> runaways, Duration burn, int concurrency, Duration warmup, Duration duration) {
    }

    public record Row(int runaways, Bench.Result fast, long burns, List<Report.Runaway> named, int carriers) {
    }

    private StarvationLab() {
    }

    public static List<Row> run(Options o, PrintWriter out, PrintWriter progress) throws Exception {
        List<Row> rows = new ArrayList<>();
        try (UpstreamProcess sim = UpstreamProcess.start(List.of(new InetSocketAddress("127.0.0.1", 0)));
             ChildProcess svc = ChildProcess.startJvm(List.of("-Xmx1g", "-XX:+UseG1GC"), StarvationProcess.class,
                     List.of(sim.url()));
             Transport client = LoadClient.transport(o.concurrency() + 16)) {
            String[] urls = svc.ready().split(",");
            String fast = urls[0] + "/fast";
            String burn = urls[1] + "/burn?ms=" + o.burn().toMillis();
            CallResult first = client.call(CallRequest.get(fast), Duration.ofSeconds(10));
            if (!first.ok()) {
                throw new IllegalStateException("the service did not answer /fast: " + first);
            }
            out.println("service: pid " + svc.pid() + ", gateway " + urls[0] + ", burner " + urls[1]);
            out.println();
            out.flush();
            Bench.Sender send = Bench.sender(client, List.of(CallRequest.get(fast)), Duration.ofSeconds(30));
            progress.println("lab starvation: warming the service's JIT for 10s ...");
            progress.flush();
            Bench.run(options(fast, o.concurrency(), Duration.ZERO, Duration.ofSeconds(10)), send, null, false);
            for (int n : o.runaways()) {
                AtomicBoolean stop = new AtomicBoolean();
                AtomicLong burns = new AtomicLong();
                List<Thread> burners = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    burners.add(Thread.ofVirtual().name("burner-" + i).start(() -> {
                        while (!stop.get()) {
                            if (client.call(CallRequest.get(burn), o.burn().plusSeconds(30)).ok()) {
                                burns.incrementAndGet();
                            }
                        }
                    }));
                }
                Report[] seen = new Report[1];
                Exception[] failed = new Exception[1];
                Thread doctor = Thread.ofVirtual().start(() -> {
                    try {
                        Thread.sleep(o.warmup().plus(o.duration().dividedBy(4)));
                        // JFR only: a thread dump of the loaded service could crash it (JDK-8364343)
                        seen[0] = Doctor.examine(svc.pid(), Doctor.Options.DEFAULT.withWindow(o.duration().dividedBy(2))
                                .withCensus(false), null);
                    } catch (DoctorException | InterruptedException e) {
                        failed[0] = e;
                    }
                });
                Bench.Result r = Bench.run(options(fast, o.concurrency(), o.warmup(), o.duration()), send, null, false);
                doctor.join();
                stop.set(true);
                for (Thread t : burners) {
                    t.join();
                }
                if (failed[0] != null) {
                    throw new IllegalStateException("weft doctor failed on the service: " + failed[0].getMessage(), failed[0]);
                }
                Row row = new Row(n, r, burns.get(), seen[0].runaways(), seen[0].carriers().parallelism());
                rows.add(row);
                progress.printf(Locale.ROOT, "lab starvation: %d runaway(s): /fast %.0f req/s, p99 %.1f ms; weft doctor named %d%n",
                        n, r.throughput(), r.percentileMillis(99), row.named().size());
                progress.flush();
            }
        }
        out.println(table(rows, o));
        return rows;
    }

    private static Bench.Options options(String url, int concurrency, Duration warmup, Duration duration) {
        return new Bench.Options(List.of(url), "GET", dev.weft.http.Headers.EMPTY, null, 0, concurrency, warmup,
                duration, Duration.ofSeconds(30));
    }

    static String table(List<Row> rows, Options o) {
        StringBuilder sb = new StringBuilder();
        sb.append("| runaways (burners) | /fast req/s | p50 ms | p99 ms | max ms | errors | /burn done | weft doctor named |\n");
        sb.append("|---:|---:|---:|---:|---:|---:|---:|---|\n");
        for (Row r : rows) {
            Bench.Result x = r.fast();
            String named = r.named().isEmpty() ? "none" : String.join("; ", r.named().stream()
                    .map(w -> w.stack().getFirst() + " for " + w.heldMs() + " ms").toList());
            sb.append(String.format(Locale.ROOT, "| %d | %.0f | %.2f | %.2f | %.2f | %d | %d | %s |%n", r.runaways(),
                    x.throughput(), x.percentileMillis(50), x.percentileMillis(99), x.maxMillis(), x.errors(), r.burns(),
                    named));
        }
        int carriers = rows.isEmpty() ? 0 : rows.getFirst().carriers();
        sb.append(String.format(Locale.ROOT, "%nThe service's virtual-thread scheduler has %d carriers; each burner keeps one "
                + "/burn in flight, which spins %d ms on its virtual thread without parking. weft doctor (JFR, no census) "
                + "recorded the service for half of each measured window.%n", carriers, o.burn().toMillis()));
        return sb.toString();
    }
}
