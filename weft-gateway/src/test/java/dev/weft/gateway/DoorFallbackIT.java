package dev.weft.gateway;

import dev.weft.os.ThreadNice;
import dev.weft.devtools.ChildProcess;
import dev.weft.upstream.UpstreamConfig;
import dev.weft.upstream.UpstreamServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The front door's priority where the process may not raise a thread (no {@code CAP_SYS_NICE}, a nice limit of 0):
 * the gateway runs in a child JVM without that right, and the test reads its threads' nice values in {@code /proc}.
 * With {@code admission.door_fallback: lower_others} the door stays at the process's nice and every other thread of
 * the gateway is lowered by the five steps of {@code door_nice: -5}, new ones included; with {@code none} every thread
 * stays where it was, and so with the default, {@code auto}, since the child shares its CPU cgroup with this JVM (its
 * parent) at least; with {@code auto} in a CPU cgroup the test makes for it (cgroup v1, as root), where only the shell
 * that started it is beside it, they are lowered.
 */
class DoorFallbackIT {
    private UpstreamServer sim;
    private ChildProcess child;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @TempDir
    Path dir;

    @BeforeEach
    void startBackend() throws Exception {
        sim = UpstreamServer.start(UpstreamConfig.local());
    }

    @AfterEach
    void stop() {
        if (child != null) {
            child.close();
        }
        sim.close();
        http.close();
    }

    @Test
    void withoutTheRightToRaiseTheDoorTheGatewaysOtherThreadsAreLoweredInstead() throws Exception {
        int base = startChild("admission: { door_fallback: lower_others }\n");
        URI url = URI.create(child.ready());
        load(url); // carriers, pooled connections: threads started after the door
        Map<String, Integer> threads = awaitThreads(child.pid(), t -> t.entrySet().stream()
                .allMatch(e -> e.getKey().startsWith("weft-door ") || e.getValue() == base + 5));
        System.out.println("DoorFallbackIT, lower_others: the child's threads and their nice values " + threads);
        assertThat(threads).as("the door").containsValue(base);
        threads.forEach((name, nice) -> assertThat(nice).as(name)
                .isEqualTo(name.startsWith("weft-door ") ? base : base + 5));
        assertThat(threads.size()).as("threads other than the door").isGreaterThan(10);
        String metrics = get(url.resolve("/-/metrics"));
        assertThat(Scrape.value(metrics, "weft_admission_door_nice")).isEqualTo(base);
        assertThat(Scrape.value(metrics, "weft_admission_door_lead")).isEqualTo(5);
    }

    @Test
    void doorFallbackNoneLeavesEveryThreadAtTheProcesssNice() throws Exception {
        leavesEveryThreadAtTheProcesssNice("admission: { door_fallback: none }\n", "none");
    }

    @Test
    void theDefaultAutoLeavesThemWhereTheGatewaySharesItsCpuCgroup() throws Exception {
        dev.weft.os.CpuCgroup.Sharing here = dev.weft.os.CpuCgroup.ofThisProcess();
        System.out.println("DoorFallbackIT: this JVM's CPU cgroup " + here);
        leavesEveryThreadAtTheProcesssNice("", "auto"); // the child shares its parent's cgroup: it is never alone
    }

    @Test
    void theDefaultAutoLowersThemWhereTheGatewayHasItsCpuCgroupToItself() throws Exception {
        Path group = newCpuCgroup();
        try {
            // the shell moves itself into the new cgroup and starts the JVM there as its child (no exec), so the
            // gateway finds its parent beside it, which waits for it and does not count as sharing
            int base = startChild("", "echo $$ > '" + group.resolve("cgroup.procs") + "' && ulimit -e 0 && \"$@\"; "
                    + "exit $?");
            URI url = URI.create(child.ready());
            long jvm = ProcessHandle.of(child.pid()).orElseThrow().children().findFirst().orElseThrow().pid();
            assertThat(Files.readAllLines(group.resolve("cgroup.procs"))).as("the shell and the gateway's JVM")
                    .containsExactlyInAnyOrder(Long.toString(child.pid()), Long.toString(jvm));
            load(url);
            Map<String, Integer> threads = awaitThreads(jvm, t -> t.entrySet().stream()
                    .allMatch(e -> e.getKey().startsWith("weft-door ") || e.getValue() == base + 5));
            System.out.println("DoorFallbackIT, auto in " + group + ": the child's threads and their nice values "
                    + threads);
            threads.forEach((name, nice) -> assertThat(nice).as(name)
                    .isEqualTo(name.startsWith("weft-door ") ? base : base + 5));
            assertThat(Scrape.value(get(url.resolve("/-/metrics")), "weft_admission_door_lead")).isEqualTo(5);
        } finally {
            if (child != null) {
                ProcessHandle.of(child.pid()).ifPresent(h -> h.descendants().forEach(ProcessHandle::destroyForcibly));
                child.close();
                child = null;
            }
            removeCgroup(group);
        }
    }

    /**
     * A new cgroup in the cgroup v1 {@code cpu} hierarchy (this machine's and CI's); the test is skipped, saying why,
     * where there is none or it may not be written (not root, cgroup v2 only, a read-only mount).
     */
    private static Path newCpuCgroup() throws IOException {
        String controllers = null;
        if (Files.exists(Path.of("/proc/self/cgroup"))) {
            for (String l : Files.readAllLines(Path.of("/proc/self/cgroup"))) {
                String[] f = l.split(":", 3);
                if (f.length == 3 && List.of(f[1].split(",")).contains("cpu")) {
                    controllers = f[1];
                }
            }
        }
        Path mount = controllers == null ? null : Path.of("/sys/fs/cgroup", controllers);
        if (mount != null && !Files.isDirectory(mount)) {
            mount = Path.of("/sys/fs/cgroup/cpu");
        }
        Path group = mount == null ? null : mount.resolve("weft-it-" + ProcessHandle.current().pid());
        String why = mount == null ? "there is no cgroup v1 cpu hierarchy here (cgroup v2 would need the cpu "
                + "controller delegated to a new group)" : null;
        if (why == null) {
            try {
                Files.createDirectories(group);
                if (!run("bash", "-c", "echo $$ > '" + group.resolve("cgroup.procs") + "'")) {
                    removeCgroup(group);
                    why = "cannot move a process into " + group;
                }
            } catch (Exception e) {
                why = "cannot make a cgroup in " + mount + " (" + e + "): root and a writable cgroup mount are needed";
            }
        }
        if (why != null) {
            System.out.println("DoorFallbackIT: auto in a cgroup of its own skipped: " + why);
        }
        assumeTrue(why == null, why);
        return group;
    }

    /** Removes {@code group} once its processes have left it (at most 10 s). */
    private static void removeCgroup(Path group) throws Exception {
        await("the test's cgroup " + group + " is empty and removed").atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(100)).until(() -> {
                    try {
                        Files.delete(group);
                        return true;
                    } catch (IOException busy) {
                        return false;
                    }
                });
    }

    private void leavesEveryThreadAtTheProcesssNice(String admission, String label) throws Exception {
        int base = startChild(admission);
        URI url = URI.create(child.ready());
        load(url);
        Thread.sleep(1500); // an absence under test: a sweep of the door's (every second) would have lowered them by now
        Map<String, Integer> threads = threads(child.pid());
        System.out.println("DoorFallbackIT, " + label + ": the child's threads and their nice values " + threads);
        threads.forEach((name, nice) -> assertThat(nice).as(name).isEqualTo(base));
        String metrics = get(url.resolve("/-/metrics"));
        assertThat(Scrape.value(metrics, "weft_admission_door_nice")).isEqualTo(base);
        assertThat(Scrape.value(metrics, "weft_admission_door_lead")).isZero();
    }

    /**
     * Starts the gateway in a child JVM that may not raise a thread's priority, and returns the nice it starts at.
     * As root, {@code setpriv} drops {@code CAP_SYS_NICE}; for everyone, the nice limit is set to 0.
     */
    private int startChild(String admission) throws Exception {
        return startChild(admission, "ulimit -e 0 && exec \"$@\"");
    }

    /** As {@link #startChild(String)}, the JVM started by {@code script} (bash, the command as its arguments). */
    private int startChild(String admission, String script) throws Exception {
        assumeTrue(Files.isDirectory(Path.of("/proc/thread-self")), "thread priorities are set on Linux only");
        Integer base = ThreadNice.current();
        assumeTrue(base != null && base <= 14, "this thread's nice (" + base + ") leaves no room to lower by 5");
        List<String> command = new ArrayList<>();
        if (ThreadNice.mayRaiseTo(-5)) {
            boolean setpriv = run("setpriv", "--bounding-set", "-sys_nice", "--inh-caps", "-sys_nice", "--", "true");
            if (!setpriv) {
                System.out.println("DoorFallbackIT skipped: this process may raise a thread (CAP_SYS_NICE) and "
                        + "setpriv could not drop that for the child (util-linux's setpriv, run as root, is needed)");
            }
            assumeTrue(setpriv, "setpriv cannot drop CAP_SYS_NICE here");
            command.addAll(List.of("setpriv", "--bounding-set", "-sys_nice", "--inh-caps", "-sys_nice", "--"));
        }
        Path cfg = dir.resolve("gw.yaml");
        Files.writeString(cfg, admission + """
                routes:
                  - get: /p
                    calls:
                      a: { url: "SIM/a" }
                      b: { url: "SIM/b" }
                """.replace("SIM", sim.url()));
        command.addAll(List.of("bash", "-c", script, "bash"));
        child = GatewayChild.start(command, List.of("--enable-native-access=ALL-UNNAMED"), cfg,
                "gateway without CAP_SYS_NICE", l -> System.out.println("DoorFallbackIT, the child: " + l));
        return base;
    }

    private static boolean run(String... command) {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            return p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private void load(URI url) throws Exception {
        for (int i = 0; i < 20; i++) {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(url.resolve("/p")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        }
    }

    private String get(URI url) throws Exception {
        return http.send(HttpRequest.newBuilder(url).build(), HttpResponse.BodyHandlers.ofString()).body();
    }

    /** The threads of {@code pid} as {@code comm tid}, each with its nice, once {@code done} holds (at most 10 s). */
    private static Map<String, Integer> awaitThreads(long pid, java.util.function.Predicate<Map<String, Integer>> done)
            throws Exception {
        try {
            return await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100))
                    .until(() -> threads(pid), done);
        } catch (org.awaitility.core.ConditionTimeoutException late) {
            return threads(pid); // the caller's assertions name what is not so
        }
    }

    /** Every thread of {@code pid} as {@code comm tid}, with its nice value ({@code /proc/PID/task/TID/stat}). */
    private static Map<String, Integer> threads(long pid) throws IOException {
        Map<String, Integer> out = new TreeMap<>();
        try (var tasks = Files.list(Path.of("/proc/" + pid + "/task"))) {
            for (Path task : (Iterable<Path>) tasks::iterator) {
                try {
                    String comm = Files.readString(task.resolve("comm")).strip();
                    Integer nice = ThreadNice.inStat(task.resolve("stat"));
                    if (nice != null) {
                        out.put(comm + " " + task.getFileName(), nice);
                    }
                } catch (IOException gone) {
                    // the thread ended meanwhile
                }
            }
        }
        return out;
    }
}
